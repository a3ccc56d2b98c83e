package format

import "github.com/loadout-dev/loadout/sdk/valuesyntax"

// The spawn styles and spellings of the built-in renderers, as their profiles describe the
// harnesses (plugins/*/profile.yaml), for the tests of this package.

// ClaudeDollar is the reference Claude Code rewrites to a literal "$": Claude expands
// ${NAME:-default} from its own environment, and LOADOUT_SPAWN_DOLLAR is unset there (or set to
// "$" by the plan), so "${LOADOUT_SPAWN_DOLLAR:-$}{X}" reaches the server as "${X}".
const ClaudeDollar = "${LOADOUT_SPAWN_DOLLAR:-$}"

// CopilotExpandMax is the longest string GitHub Copilot CLI expands: a longer one reaches the
// server as written (measured with 1.0.102, docs/SPAWN-ENV.md). A SpawnCopilot SPEC that would be
// longer with ClaudeDollar references is written in its long form instead: plain ${ALIAS}
// references, padded with trailing spaces to CopilotExpandMax+1 characters, which Copilot leaves
// alone and env -S reads as separators.
const CopilotExpandMax = 1000

// The spawn styles of the built-in renderers, each as its profile describes the harness.
var (
	// SpawnClaude is for Claude Code, which expands ${NAME} in command, args and env values:
	// literal values are split at every "${" and the references are spelled with ClaudeDollar.
	SpawnClaude = SpawnStyle{Syntax: braceDollar, ArgPasses: 1, EnvPasses: 1, Split: true}
	// SpawnPi is for Pi, which resolves $NAME, ${NAME} and a leading "!" in env values: literal
	// values are escaped with PiLiteral. Args are passed literally, but for a leading "~".
	SpawnPi = SpawnStyle{Syntax: piDollar, EnvPasses: 1, ExpandsTilde: true}
	// SpawnGemini is for Gemini CLI, which expands $NAME, ${NAME} and ${NAME:-default} in every
	// settings string, and env values a second time: command, args and cwd are spelled with
	// GeminiLiteral, env values with GeminiValueLiteral, references with ClaudeDollar.
	SpawnGemini = SpawnStyle{Syntax: geminiDollar, ArgPasses: 1, EnvPasses: 2}
	// SpawnCopilot is for GitHub Copilot CLI, which expands $NAME, ${NAME} and
	// ${NAME:-default} once in command, args, cwd, env values, url and headers: every one of
	// them is spelled with CopilotLiteral, references with ClaudeDollar.
	SpawnCopilot = SpawnStyle{Syntax: everyDollar, ArgPasses: 1, EnvPasses: 1, ExpandMax: CopilotExpandMax}
)

// The value syntaxes of the built-in styles (docs/FORMATS.md).
var (
	braceDollar = valuesyntax.MustCompile([]valuesyntax.Pass{{Expands: []string{valuesyntax.FormBrace, valuesyntax.FormBraceDefault}, Dollar: valuesyntax.DollarRefDefault}})
	piDollar    = valuesyntax.MustCompile([]valuesyntax.Pass{{Expands: []string{valuesyntax.FormName, valuesyntax.FormBrace, valuesyntax.FormCommand}, Dollar: valuesyntax.DollarDouble, Bang: "$!"}})
	everyDollar = valuesyntax.MustCompile([]valuesyntax.Pass{{Expands: []string{valuesyntax.FormName, valuesyntax.FormBrace, valuesyntax.FormBraceDefault}, Dollar: valuesyntax.DollarRefDefault}})
	// geminiDollar: the settings pass, then dotenv-expand's over env values and headers.
	geminiDollar = valuesyntax.MustCompile([]valuesyntax.Pass{
		{Expands: []string{valuesyntax.FormName, valuesyntax.FormBrace, valuesyntax.FormBraceDefault}, Dollar: valuesyntax.DollarRefDefault},
		{Expands: []string{valuesyntax.FormName, valuesyntax.FormBrace}, Dollar: valuesyntax.DollarBackslash},
	})
)

// ClaudeLiteral spells v so that Claude Code's ${NAME} expansion gives v back: every "${"
// becomes ClaudeDollar+"{".
func ClaudeLiteral(v string) string { return SpawnClaude.Literal(v) }

// PiLiteral spells v so that Pi's value resolution gives v back: every "$" becomes "$$", then a
// leading "!" (which would run a shell command) becomes "$!".
func PiLiteral(v string) string { return SpawnPi.ValueLiteral(v) }

// GeminiLiteral spells v for a string Gemini CLI expands once (command, args, cwd, url,
// description, tool names): every "$" becomes ClaudeDollar, which Gemini turns back into "$"
// while LOADOUT_SPAWN_DOLLAR is unset or "$".
func GeminiLiteral(v string) string { return SpawnGemini.Literal(v) }

// GeminiValueLiteral spells v for an env or header value, which Gemini CLI expands twice (its
// settings pass, then dotenv-expand, where "\$" is a literal "$"): every "$" becomes
// "\" + ClaudeDollar.
func GeminiValueLiteral(v string) string { return SpawnGemini.ValueLiteral(v) }

// CopilotLiteral spells v for any string GitHub Copilot CLI expands (command, args, cwd, env
// values, url, headers), each expanded once: every "$" becomes ClaudeDollar, which Copilot
// turns back into "$" while LOADOUT_SPAWN_DOLLAR is unset or "$". Tool names are not expanded.
func CopilotLiteral(v string) string { return SpawnCopilot.Literal(v) }

// CopilotUnliteral inverts CopilotLiteral; it reports false when Copilot would expand v.
func CopilotUnliteral(v string) (string, bool) { return SpawnCopilot.Unliteral(v) }

// GeminiUnliteral inverts GeminiLiteral; it reports false when Gemini would expand v.
func GeminiUnliteral(v string) (string, bool) { return SpawnGemini.Unliteral(v) }

// GeminiValueUnliteral inverts GeminiValueLiteral; it reports false when Gemini would expand v.
func GeminiValueUnliteral(v string) (string, bool) { return SpawnGemini.ValueUnliteral(v) }

// ClaudeUnliteral inverts ClaudeLiteral; it reports false when v holds a "${" Claude would
// expand.
func ClaudeUnliteral(v string) (string, bool) { return SpawnClaude.Unliteral(v) }

// PiUnliteral inverts PiLiteral; it reports false when Pi would read v as anything but itself.
func PiUnliteral(v string) (string, bool) { return SpawnPi.ValueUnliteral(v) }
