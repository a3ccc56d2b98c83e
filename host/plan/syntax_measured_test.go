package plan

import (
	"strings"

	"github.com/loadout-dev/loadout/sdk/valuesyntax"
)

// The value syntaxes as first measured, written as functions. The profiles now describe each
// as data (valuesyntax.Pass, interpreted by sdk/valuesyntax); these stay as the reference the
// data is held to (TestValueSyntaxDataMatchesMeasured, FuzzValueSyntaxData), with the tests of
// each CLI's reading that were written against them.

// pass is one expansion pass of a measured syntax over a string.
type pass struct {
	// spell writes s so that the pass gives s back.
	spell func(string) string
	// read is what the pass makes of s, and false when it would expand or run part of it.
	read func(string) (string, bool)
	// secret spells a secret value so that the pass gives it back wherever in a string it
	// lands (nil: spell).
	secret func(string) string
}

// measuredSyntax is a measured syntax: its first pass and every later one (zero: the first's
// again).
type measuredSyntax struct {
	first, again pass
}

// measured are the measured syntaxes by the name a profile gives them.
var measured = map[string]measuredSyntax{
	"claude-dollar":  {first: pass{dollarBraceLiteral, dollarBraceValue, dollarBraceSecret}},
	"pi-dollar-bang": {first: pass{piLiteral, piValue, piSecret}},
	"gemini-dollar":  {first: pass{everyDollarLiteral, everyDollarURL, nil}, again: pass{dotenvLiteral, dotenvValue, nil}},
	"copilot-dollar": {first: pass{everyDollarLiteral, everyDollarOnce, nil}},
}

// compose returns the spelling, reading and secret spelling of n passes of vs: the spelling
// of the last pass innermost, the reading of the first pass first. Zero passes leave every
// string as it is (secret: nil, no spelling).
func (vs measuredSyntax) compose(n int) (spell func(string) string, read func(string) (string, bool), secret func(string) string) {
	if n == 0 || vs.first.spell == nil {
		return verbatim, verbatimValue, nil
	}
	ps := []pass{vs.first}
	for len(ps) < n {
		if vs.again.spell != nil {
			ps = append(ps, vs.again)
		} else {
			ps = append(ps, vs.first)
		}
	}
	spell = func(s string) string {
		for i := len(ps) - 1; i >= 0; i-- {
			s = ps[i].spell(s)
		}
		return s
	}
	read = func(s string) (string, bool) {
		for _, p := range ps {
			var ok bool
			if s, ok = p.read(s); !ok {
				return "", false
			}
		}
		return s, true
	}
	secret = func(s string) string {
		for i := len(ps) - 1; i >= 0; i-- {
			if ps[i].secret != nil {
				s = ps[i].secret(s)
			} else {
				s = ps[i].spell(s)
			}
		}
		return s
	}
	return spell, read, secret
}

// dollarBraceLiteral is Claude Code's spelling of s: every "${" (which Claude would expand from its
// own environment) as dollarDefaultRef+"{".
func dollarBraceLiteral(s string) string { return strings.ReplaceAll(s, "${", dollarDefaultRef+"{") }

// dollarBraceValue is what Claude Code makes of s: every dollarDefaultRef becomes "$" (Claude
// expands ${NAME:-default}, and the variable is unset or "$"), so it reverses both
// dollarBraceLiteral and dollarBraceSecret. It returns false when s holds any other "${",
// which Claude would expand from its own environment.
func dollarBraceValue(s string) (string, bool) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), true
		}
		rest, ok := strings.CutPrefix(s[i:], dollarDefaultRef)
		if !ok {
			return "", false
		}
		b.WriteString(s[:i] + "$")
		s = rest
	}
}

// dollarBraceSecret spells a secret value for Claude Code: every "$" that could start an expansion
// (before "{", or last, where the text after the placeholder could supply the "{") as
// dollarDefaultRef, which Claude turns back into "$".
func dollarBraceSecret(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '$' && (i+1 == len(s) || s[i+1] == '{') {
			b.WriteString(dollarDefaultRef)
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// piSecret spells a secret value for Pi wherever it sits in a value: every "$" as "$$" and
// every "!" as "$!" (Pi reads both escapes anywhere, and a "!" may end up leading the value).
func piSecret(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '$' || s[i] == '!' {
			b.WriteByte('$')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// piLiteral is Pi's spelling of s: every "$" as "$$", then a leading "!" as "$!".
func piLiteral(s string) string {
	s = strings.ReplaceAll(s, "$", "$$")
	if strings.HasPrefix(s, "!") {
		s = "$" + s
	}
	return s
}

// piValue is what Pi makes of an env or header value s (docs/SPAWN-ENV.md): "$$" is a literal
// "$" and "$!" a literal "!" wherever they stand, so it reverses both piLiteral and piSecret.
// It returns false for a leading "!" (a shell command for Pi) and for any other "$" (an
// expansion, or text whose reading Pi does not document).
func piValue(s string) (string, bool) {
	if strings.HasPrefix(s, "!") {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && (s[i+1] == '$' || s[i+1] == '!') {
			b.WriteByte(s[i+1])
			i++
			continue
		}
		return "", false
	}
	return b.String(), true
}

// Gemini CLI 0.61.0 expands its settings twice (docs/FORMATS.md §5.1). When it loads
// settings.json it replaces $NAME, ${NAME} and ${NAME:-default} in every string from its own
// environment, in one left-to-right pass; the env values and headers of an MCP server then go
// through dotenv-expand, which expands $NAME and ${NAME} again (repeatedly) and turns "\$" into
// a literal "$". Neither pass has an escape of its own for the first pass, so a literal "$" is
// spelled dollarDefaultRef ("${LOADOUT_SPAWN_DOLLAR:-$}"), which the first pass turns into "$"
// while LOADOUT_SPAWN_DOLLAR is unset or "$" (the plan sets it to "$"); in env values and
// headers it is preceded by "\" so that the second pass keeps it. Backslashes elsewhere and
// every other character pass both unchanged.

// everyDollarLiteral spells s for a string Gemini expands once (command, args, cwd, url): every "$"
// as dollarDefaultRef.
func everyDollarLiteral(s string) string { return strings.ReplaceAll(s, "$", dollarDefaultRef) }

// everyDollarUnspell reads s back where every "$" must be spelled dollar, and reports false for
// any other "$" (which Gemini would expand) or a spelling that is not the canonical one.
func everyDollarUnspell(s, dollar string, spell func(string) string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], dollar) {
			b.WriteByte('$')
			i += len(dollar)
			continue
		}
		if s[i] == '$' {
			return "", false
		}
		b.WriteByte(s[i])
		i++
	}
	out := b.String()
	return out, spell(out) == s
}

// everyDollarURL reverses everyDollarLiteral for a url, which Gemini expands once.
func everyDollarURL(s string) (string, bool) {
	return everyDollarUnspell(s, dollarDefaultRef, everyDollarLiteral)
}

// dotenvLiteral spells s for Gemini's second pass over env values and headers (dotenv-expand):
// every "$" as "\$".
func dotenvLiteral(s string) string { return strings.ReplaceAll(s, "$", `\$`) }

// dotenvValue reverses dotenvLiteral: what dotenv-expand makes of s, and false when s holds a
// "$" it would expand.
func dotenvValue(s string) (string, bool) { return everyDollarUnspell(s, `\$`, dotenvLiteral) }

// GitHub Copilot CLI 1.0.102 expands $NAME, ${NAME} and ${NAME:-default} once, from its own
// environment, in the command, args, env values, cwd, url and headers of every server of
// mcp-config.json (docs/FORMATS.md §5.2). An unset variable stays as written, the default
// applies only to an unset variable, and the result is not scanned again. There is no escape:
// "$$X" gives "$" and the value of X, "\$X" a backslash and the value. So a literal "$" is
// spelled dollarDefaultRef in every one of those strings, env values and headers included
// (unlike Gemini CLI, Copilot has no second pass), and the plan sets LOADOUT_SPAWN_DOLLAR to
// "$" so that an inherited value cannot change what it gives. Tool names are not expanded.

// everyDollarOnce reverses everyDollarLiteral for any string Copilot expands once (an env or
// header value, a url): what Copilot makes of s, and false when s holds a "$" Copilot would
// expand or a spelling everyDollarLiteral does not produce.
func everyDollarOnce(s string) (string, bool) {
	return everyDollarUnspell(s, dollarDefaultRef, everyDollarLiteral)
}

// composeNamed is n passes of the measured syntax presetData names, as the profiles interpret
// it (sdk/valuesyntax), as spelling, reading and secret spelling functions.
func composeNamed(name string, n int) (spell func(string) string, read func(string) (string, bool), secret func(string) string) {
	passes, ok := presetData[name]
	if !ok {
		panic("no value syntax " + name)
	}
	sx := valuesyntax.MustCompile(passes)
	return func(s string) string { return sx.Spell(s, n) },
		func(s string) (string, bool) { return sx.Read(s, n) },
		func(s string) string { return sx.Secret(s, n) }
}
