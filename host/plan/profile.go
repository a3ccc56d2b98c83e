package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/loadout-dev/loadout/internal/namepattern"
	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
	"github.com/loadout-dev/loadout/sdk/valuesyntax"
)

// Profile is what the host knows about one harness, as data (docs/PROFILES.md): the files a
// plugin for it may write, where its MCP configuration lives and what each server key means,
// how it expands strings, how tool restrictions travel, the args and env a plugin may set,
// its skills layout and how its stdio servers must be launched. Check reads a plugin's plan
// through its profile only: a harness loadout has never seen gets every check a built-in one
// gets, from its reviewed, pinned profile. A Profile is immutable once ParseProfile returns it.
type Profile struct {
	Harness string `yaml:"harness"`
	// Measured names the harness release the profile was measured against.
	Measured string        `yaml:"measured"`
	Paths    []ProfilePath `yaml:"paths"`
	// HiddenDirs are hidden directories of the config root the harness reads its files from
	// (Gemini CLI's $GEMINI_CLI_HOME/.gemini); paths may name files under them, no others.
	HiddenDirs []string      `yaml:"hiddenDirs"`
	Config     ProfileConfig `yaml:"config"`
	// ValueSyntax is how the harness expands the strings of its config: its passes as data
	// (valuesyntax.Pass), or a name: literal (nothing expanded) or one of the shorthands
	// ValueSyntaxes lists.
	ValueSyntax ValueSyntax `yaml:"valueSyntax"`
	// Passes is how many times, as measured, the harness expands the strings at each value
	// position (PassPositions): args (a stdio server's command, args and cwd, and a
	// description), env, url, headers. A position left out takes its value syntax's count.
	Passes map[string]int `yaml:"passes"`
	// HeaderValues is what the harness can send as a header value: HeaderValuesUTF8 (any
	// text) or HeaderValuesLatin1 (code points up to U+00FF only; a request with another
	// fails), as measured. Empty: not measured, and no warning.
	HeaderValues string `yaml:"headerValues"`
	// Spawn is how a stdio server must be launched through env -i (docs/SPAWN-ENV.md): one of
	// SpawnStyles, or "" for a harness that does not pass its environment to the servers.
	Spawn string `yaml:"spawn"`
	// ExpandMax is the longest string the harness expands, as measured; a longer one reaches
	// the server as written. A SPEC longer than it is read in its long form: plain ${ALIAS}
	// references, padded with trailing spaces (docs/SPAWN-ENV.md). 0: no limit.
	ExpandMax int `yaml:"expandMax"`
	// ExpandsTilde: the harness replaces a stdio server's command or arg that is "~" or starts
	// with "~/" by its own HOME, as measured; such an operand travels in SPEC (docs/SPAWN-ENV.md).
	ExpandsTilde bool `yaml:"expandsTilde"`
	// CheckoutEnvFile is a file of the checkout (a clean relative path) the harness reads in a
	// run, setting every variable of it its environment lacks, with no switch to prevent it, as
	// measured; the host warns on every render (docs/SECURITY.md). Empty: none.
	CheckoutEnvFile string       `yaml:"checkoutEnvFile"`
	Tools           ProfileTools `yaml:"tools"`
	// Args and Env are exactly what a plugin may return on the harness's command line and in
	// its environment; none when empty.
	Args   []ProfileArg   `yaml:"args"`
	Env    []ProfileEnv   `yaml:"env"`
	Skills *ProfileSkills `yaml:"skills"`
	// Prompt is how the prompt the host requires names a server's tools; nil: by their names.
	Prompt *ProfilePrompt `yaml:"prompt"`
	// ReservedNames are server ids the harness refuses to load (it reports them and goes on
	// without them): the host refuses such a server before anything is rendered, so that no
	// prompt names a server the harness will not have.
	ReservedNames []string `yaml:"reservedNames"`
	// Validate is the offline command that checks a rendered config with the real CLI (for
	// end-to-end tests; the host never runs it).
	Validate []string `yaml:"validate"`

	h *harness
}

// ProfilePrompt spells a tool in the prompt as "<tool> (<qualified>)": Qualified with its
// slots {server} and {tool} filled in, every byte but an ASCII letter, a digit or one of
// QualifiedChars then replaced by "_" (the name the harness shows the model).
type ProfilePrompt struct {
	Qualified      string `yaml:"qualified"`
	QualifiedChars string `yaml:"qualifiedChars"`
}

// ProfilePath allows one path under a root: a file, "dir/**" (everything under dir) or "**".
type ProfilePath struct {
	Root string `yaml:"root"`
	Path string `yaml:"path"`
}

// ProfileConfig is the harness's MCP configuration file.
type ProfileConfig struct {
	Root   string `yaml:"root"`
	Path   string `yaml:"path"`
	Format string `yaml:"format"` // json or toml
	// Servers is the top-level key of the servers object (table).
	Servers string `yaml:"servers"`
	// TopKeys are the boolean top-level keys allowed besides Servers.
	TopKeys []string `yaml:"topKeys"`
	// Pinned are top-level keys the config must carry with exactly these values (json configs
	// only): settings that keep the harness from reading what the run did not vet, such as
	// Gemini's security.auth.useExternal. A value is compared whole, objects member by member.
	Pinned map[string]any `yaml:"pinned"`
	// ServerKeys maps each key a server entry may carry to its meaning (ServerKeyMeanings).
	ServerKeys map[string]string `yaml:"serverKeys"`
	// HTTPNeedsType: an http server must carry the type key (type: http).
	HTTPNeedsType bool `yaml:"httpNeedsType"`
	// OAuthKeys maps each key the object of the server key meaning oauth may carry to its
	// meaning (OAuthKeyMeanings); required with that server key, refused without it.
	OAuthKeys map[string]string `yaml:"oauthKeys"`
	// TimeoutUnit is the unit of the keys meaning timeout: "s" or "ms" (a request's timeout is
	// in seconds). Empty: the profile does not say, and a timeout's value is not compared.
	TimeoutUnit string `yaml:"timeoutUnit"`
	// TimeoutMin and TimeoutMax, in TimeoutUnit, are the range of timeouts the harness honours
	// (0: no bound; in milliseconds a whole number). A vetted timeout outside it may be rendered
	// at the nearest bound, and only there, with a timeout_adjusted warning naming the server.
	TimeoutMin float64 `yaml:"timeoutMin"`
	TimeoutMax float64 `yaml:"timeoutMax"`
}

// ProfileTools is how a server's tool restriction reaches the harness.
type ProfileTools struct {
	// In is "args" (an args rule of value tools carries them), "config" (the allowTools and
	// denyTools keys), "exposure" (exposure hidden with exposed tools by toolExposure), or
	// "none" for a profile without an MCP config file.
	In string `yaml:"in"`
	// RequireAllowList: a restricted server must carry its allowTools key, even empty (always
	// so for tools.in config).
	RequireAllowList bool `yaml:"requireAllowList"`
	// Builtin are the harness's own tools, which a tools argument may name besides the vetted
	// servers' rules.
	Builtin []string `yaml:"builtin"`
	// Names is how the CLI spells an MCP tool's name where its rules match it (its allow and
	// deny lists): required wherever tools.in is not none.
	Names ProfileToolNames `yaml:"names"`
	// Rules is how a rule on the command line names a server or one of its tools: required
	// exactly when an args entry carries rules (value tools or denyTools).
	Rules *ProfileToolRules `yaml:"rules"`
}

// ProfileToolRules are the templates of the rules a CLI's tool flags take (Claude Code 2.1.328:
// mcp__{server} grants every tool of a server, mcp__{server}__{tool} one tool, the tool spelled
// as tools.names says). The host writes and checks every rule through them.
type ProfileToolRules struct {
	// Server names every tool of a server: the slot {server} once, no other.
	Server string `yaml:"server"`
	// Tool names one tool of a server: {server} once, then {tool} once, no other slot.
	Tool string `yaml:"tool"`
}

// ProfileToolNames is how a CLI normalises an MCP tool's name before its allow and deny rules
// match it (measured per CLI, docs/FORMATS.md §4.1): Exact, or every character outside Keep
// replaced by Replacement. The host spells every rule it writes or checks through it.
type ProfileToolNames struct {
	// Exact: the rules match the tool's name as the server spells it.
	Exact bool `yaml:"exact"`
	// Keep is the characters the CLI keeps, as ASCII ranges and characters ("A-Za-z0-9_-":
	// a "-" last is itself).
	Keep string `yaml:"keep"`
	// Replacement is the one character, itself kept, that replaces every other.
	Replacement string `yaml:"replacement"`
}

// ProfileArg is one flag a plugin may return.
type ProfileArg struct {
	Flag string `yaml:"flag"`
	// Value is "none", "pinned" (exactly Pinned), "tools" (tool rules, checked against the
	// vetted servers), "denyTools" (the rules of the tools the vetted servers deny, exactly) or
	// "servers" (the ids of the servers the config renders, one argument each, in order).
	Value  string `yaml:"value"`
	Pinned string `yaml:"pinned"`
	// Variadic: the harness reads every following argument up to the next flag as a value.
	Variadic bool `yaml:"variadic"`
	Required bool `yaml:"required"`
}

// ProfileEnv is one variable a plugin may set, with its only value (a root placeholder, or
// "$" for the spawn style's dollar variable).
type ProfileEnv struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
	// When is "always", "isolated" (exactly when the run is not ambientAuth) or "optional".
	When string `yaml:"when"`
}

// ProfileSkills is where the harness installs skills.
type ProfileSkills struct {
	Dir string `yaml:"dir"`
	// Folds: in an ambient-auth run the resources go under the checkout's context directory
	// and the instructions into the prompt.
	Folds bool `yaml:"folds"`
}

// ServerKeyMeanings are what a server key of a config may mean; the host reads and compares
// each with the vetted server.
var ServerKeyMeanings = []string{
	"type", "command", "args", "env", "cwd", "url", "headers", "description", "exposure",
	"toolExposure", "enabled", "timeout", "allowTools", "denyTools", "envPassthrough",
	"oauth", "oauthScopes", "oauthClientId", "lifecycle", "idleTimeout",
}

// Value positions: where in a server entry a string sits, each expanded its own number of
// times by a harness (Profile.Passes).
const (
	PosArgs    = "args" // a stdio server's command, args and cwd, and a description
	PosEnv     = "env"
	PosURL     = "url"
	PosHeaders = "headers"
)

// Header value repertoires a profile's headerValues may name.
const (
	HeaderValuesUTF8   = "utf8"
	HeaderValuesLatin1 = "latin1"
)

// PassPositions are the value positions a profile's passes may name.
var PassPositions = []string{PosArgs, PosEnv, PosURL, PosHeaders}

// maxPasses bounds a position's pass count: two is the most measured (Claude Code's headers,
// Gemini CLI's env values and headers).
const maxPasses = 2

// ValueSyntax is a profile's valueSyntax: a name (Name), or the passes as data (Passes).
type ValueSyntax struct {
	Name   string
	Passes []valuesyntax.Pass
}

// String is the syntax as a profile names it: its name, or "passes" for one written as data.
func (v ValueSyntax) String() string {
	if v.Name != "" {
		return v.Name
	}
	return "passes"
}

// UnmarshalYAML takes a name or a list of passes, each with exactly the keys expands, dollar
// and bang (an unknown key is an error, as everywhere in a profile).
func (v *ValueSyntax) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Decode(&v.Name)
	case yaml.SequenceNode:
		for i, item := range n.Content {
			if item.Kind != yaml.MappingNode {
				return fmt.Errorf("valueSyntax[%d]: want a pass {expands, dollar, bang}", i)
			}
			for j := 0; j < len(item.Content); j += 2 {
				if k := item.Content[j].Value; k != "expands" && k != "dollar" && k != "bang" {
					return fmt.Errorf("valueSyntax[%d]: unknown key %q (a pass has expands, dollar, bang)", i, k)
				}
			}
			var ps valuesyntax.Pass
			if err := item.Decode(&ps); err != nil {
				return fmt.Errorf("valueSyntax[%d]: %w", i, err)
			}
			v.Passes = append(v.Passes, ps)
		}
		if len(v.Passes) == 0 {
			return fmt.Errorf("valueSyntax: an empty list (write literal for a CLI that expands nothing)")
		}
		return nil
	}
	return fmt.Errorf("valueSyntax: want a name or a list of passes")
}

// namedSyntax is a value syntax a profile may name: its passes and the count each position
// gets unless the profile's passes say otherwise.
type namedSyntax struct {
	passes []valuesyntax.Pass
	counts map[string]int
}

func passesOf(args, env, url, headers int) map[string]int {
	return map[string]int{PosArgs: args, PosEnv: env, PosURL: url, PosHeaders: headers}
}

// everyDollar, braceDollar and piDollar are the passes of the measured syntaxes
// (docs/FORMATS.md §1.1, §2.1, §3.3, §5.1, §5.2).
var (
	allForms    = []string{valuesyntax.FormName, valuesyntax.FormBrace, valuesyntax.FormBraceDefault}
	everyDollar = valuesyntax.Pass{Expands: allForms, Dollar: valuesyntax.DollarRefDefault}
	braceDollar = valuesyntax.Pass{Expands: []string{valuesyntax.FormBrace, valuesyntax.FormBraceDefault}, Dollar: valuesyntax.DollarRefDefault}
	piDollar    = valuesyntax.Pass{Expands: []string{valuesyntax.FormName, valuesyntax.FormBrace, valuesyntax.FormCommand}, Dollar: valuesyntax.DollarDouble, Bang: "$!"}
	dotenv      = valuesyntax.Pass{Expands: []string{valuesyntax.FormName, valuesyntax.FormBrace}, Dollar: valuesyntax.DollarBackslash}
)

// valueSyntaxes are the names a profile may give its valueSyntax instead of writing the passes:
// literal, and shorthands for the syntaxes measured first, kept so that a profile naming one
// keeps its meaning. A profile may write the same passes as data.
var valueSyntaxes = map[string]namedSyntax{
	"literal":        {counts: passesOf(0, 0, 0, 0)},
	"claude-dollar":  {passes: []valuesyntax.Pass{braceDollar}, counts: passesOf(1, 1, 1, 1)},
	"pi-dollar-bang": {passes: []valuesyntax.Pass{piDollar}, counts: passesOf(0, 1, 0, 1)},
	"gemini-dollar":  {passes: []valuesyntax.Pass{everyDollar, dotenv}, counts: passesOf(1, 2, 1, 2)},
	"copilot-dollar": {passes: []valuesyntax.Pass{everyDollar}, counts: passesOf(1, 1, 1, 1)},
}

// spawnStyles is the closed list of env -i launch encodings (docs/SPAWN-ENV.md).
var spawnStyles = map[string]spawnStyle{
	"env-alias":     {ref: "${"},
	"claude-dollar": {split: true, cwdFlag: true, dollarVar: dollarDefaultVar},
}

// ValueSyntaxes lists the value syntax names a profile may use, sorted.
func ValueSyntaxes() []string { return sortedKeys(valueSyntaxes) }

// SpawnStyles lists the spawn style names a profile may use, sorted.
func SpawnStyles() []string { return sortedKeys(spawnStyles) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var (
	profileHarness   = namepattern.MustCompile(`^[a-z0-9][a-z0-9_-]*$`, 64)
	profileEnvName   = namepattern.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`, 128)
	profileFlag      = regexp.MustCompile(`^--?[A-Za-z0-9][A-Za-z0-9-]*$`)
	profileKey       = namepattern.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`, 64)
	profileHiddenDir = namepattern.MustCompile(`^\.[a-z0-9][a-z0-9_-]*$`, 65)
	profileTool      = namepattern.MustCompile(`^[A-Za-z0-9_.()*:-]+$`, 64)
)

// profileEnvSwitches are the literal values a profile's env entry may pin, besides a root
// placeholder: enough to turn a CLI's own setting off (Copilot's COPILOT_ALLOW_ALL=false, so a
// caller's environment cannot make it trust the checkout), never a path, flag or command.
var profileEnvSwitches = []string{"false", "true", "0", "1"}

// ParseProfile decodes and validates a profile strictly: an unknown key, a value outside its
// closed list, a path outside the roots' rules or an env value that is not a root placeholder
// is an error naming the field.
func ParseProfile(data []byte) (*Profile, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var p Profile
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	h, err := p.compile()
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", p.Harness, err)
	}
	p.h = h
	return &p, nil
}

// compile checks p and turns it into the rules Check applies.
func (p *Profile) compile() (*harness, error) {
	if !profileHarness.MatchString(p.Harness) {
		return nil, fmt.Errorf("harness %q does not match %s", p.Harness, profileHarness)
	}
	h := &harness{}
	for i, d := range p.HiddenDirs {
		if !profileHiddenDir.MatchString(d) || d == ".git" || d == CheckoutContextDir {
			return nil, fmt.Errorf("hiddenDirs[%d] %q is not a hidden directory name (.name, not .git or %s)", i, d, CheckoutContextDir)
		}
		if h.hiddenDirs == nil {
			h.hiddenDirs = map[string]bool{}
		}
		h.hiddenDirs[d] = true
	}
	validPath := func(root, p string) bool { return pathProblem(p, h.hiddenUnder(root)) == "" }
	roots := []string{abi.RootConfig, abi.RootRun, abi.RootCheckout}
	for i, pr := range p.Paths {
		if !slices.Contains(roots, pr.Root) {
			return nil, fmt.Errorf("paths[%d].root %q is none of %v", i, pr.Root, roots)
		}
		pat := pr.Path
		base := strings.TrimSuffix(pat, "/**")
		if pat != "**" && (!validPath(pr.Root, base) || strings.Contains(base, "*")) {
			return nil, fmt.Errorf("paths[%d].path %q is not a relative path, dir/** or **", i, pat)
		}
		if pr.Root == abi.RootCheckout && pat != CheckoutContextDir+"/**" && !strings.HasPrefix(pat, CheckoutContextDir+"/") {
			return nil, fmt.Errorf("paths[%d]: a checkout path must be under %s/", i, CheckoutContextDir)
		}
		h.paths = append(h.paths, pathRule{pr.Root, pat})
	}
	cf := p.Config
	if cf.Path != "" || cf.Root != "" {
		if cf.Format != abi.FormatJSON && cf.Format != abi.FormatTOML {
			return nil, fmt.Errorf("config.format %q is neither json nor toml", cf.Format)
		}
		if !slices.ContainsFunc(h.paths, func(r pathRule) bool { return r.match(cf.Root, cf.Path) }) {
			return nil, fmt.Errorf("config %s:%s is not under any of paths", cf.Root, cf.Path)
		}
		if !profileKey.MatchString(cf.Servers) {
			return nil, fmt.Errorf("config.servers %q is not a key", cf.Servers)
		}
		h.config = configFile{cf.Root, cf.Path, cf.Format}
		h.serversKey = cf.Servers
		h.httpNeedsType = cf.HTTPNeedsType
		switch cf.TimeoutUnit {
		case "":
		case "s", "ms":
			if !slices.Contains(mapValues(cf.ServerKeys), "timeout") {
				return nil, fmt.Errorf("config.timeoutUnit %s: no server key means timeout", cf.TimeoutUnit)
			}
			h.timeoutUnit = cf.TimeoutUnit
		default:
			return nil, fmt.Errorf("config.timeoutUnit %q is none of s, ms", cf.TimeoutUnit)
		}
		if err := checkTimeoutRange(cf); err != nil {
			return nil, err
		}
		h.timeoutMin, h.timeoutMax = cf.TimeoutMin, cf.TimeoutMax
		h.topKeys = setOf(cf.TopKeys...)
		var err error
		if h.pinned, err = compilePinned(cf); err != nil {
			return nil, err
		}
		h.serverKeys = map[string]string{}
		for key, meaning := range cf.ServerKeys {
			if !profileKey.MatchString(key) {
				return nil, fmt.Errorf("config.serverKeys: %q is not a key", key)
			}
			if !slices.Contains(ServerKeyMeanings, meaning) {
				return nil, fmt.Errorf("config.serverKeys.%s: meaning %q is none of %v", key, meaning, ServerKeyMeanings)
			}
			h.serverKeys[key] = meaning
			if meaning == "type" {
				h.typed = true
			}
		}
		hasOAuth := slices.Contains(mapValues(h.serverKeys), "oauth")
		switch {
		case hasOAuth && len(cf.OAuthKeys) == 0:
			return nil, fmt.Errorf("config.oauthKeys: a server key means oauth, so its keys must be listed")
		case !hasOAuth && len(cf.OAuthKeys) > 0:
			return nil, fmt.Errorf("config.oauthKeys: no server key means oauth")
		}
		seen := map[string]string{}
		for key, meaning := range cf.OAuthKeys {
			if !profileKey.MatchString(key) {
				return nil, fmt.Errorf("config.oauthKeys: %q is not a key", key)
			}
			if !slices.Contains(OAuthKeyMeanings, meaning) {
				return nil, fmt.Errorf("config.oauthKeys.%s: meaning %q is none of %v", key, meaning, OAuthKeyMeanings)
			}
			if other, dup := seen[meaning]; dup {
				return nil, fmt.Errorf("config.oauthKeys: %s and %s both mean %s", min(key, other), max(key, other), meaning)
			}
			seen[meaning] = key
		}
		// A flat client-id key is read like the oauth object's clientId: one place only, so that
		// no second spelling can carry another value past the comparison.
		var flat []string
		for key, meaning := range h.serverKeys {
			if meaning == "oauthClientId" {
				flat = append(flat, key)
			}
		}
		slices.Sort(flat)
		switch {
		case len(flat) > 1:
			return nil, fmt.Errorf("config.serverKeys: %s and %s both mean oauthClientId", flat[0], flat[1])
		case len(flat) == 1 && seen["clientId"] != "":
			return nil, fmt.Errorf("config: serverKeys.%s and oauthKeys.%s both mean the oauth client id", flat[0], seen["clientId"])
		}
		h.oauthKeys = cf.OAuthKeys
		for _, need := range []string{"command", "url"} {
			if !slices.Contains(mapValues(h.serverKeys), need) {
				return nil, fmt.Errorf("config.serverKeys: no key means %s", need)
			}
		}
	}
	ns := namedSyntax{passes: p.ValueSyntax.Passes, counts: passesOf(1, 1, 1, 1)}
	if p.ValueSyntax.Passes == nil {
		var ok bool
		if ns, ok = valueSyntaxes[p.ValueSyntax.Name]; !ok {
			return nil, fmt.Errorf("valueSyntax %q is none of %v, nor a list of passes", p.ValueSyntax.Name, ValueSyntaxes())
		}
	}
	sx, err := valuesyntax.Compile(ns.passes)
	if err != nil {
		return nil, fmt.Errorf("valueSyntax: %w", err)
	}
	for pos, n := range p.Passes {
		switch {
		case !slices.Contains(PassPositions, pos):
			return nil, fmt.Errorf("passes: position %q is none of %v", pos, PassPositions)
		case n < 0 || n > maxPasses:
			return nil, fmt.Errorf("passes.%s: %d is not a pass count (0 to %d)", pos, n, maxPasses)
		case n > 0 && sx.Literal():
			return nil, fmt.Errorf("passes.%s: valueSyntax %s expands nothing", pos, p.ValueSyntax)
		}
	}
	switch p.HeaderValues {
	case "", HeaderValuesUTF8, HeaderValuesLatin1:
	default:
		return nil, fmt.Errorf("headerValues %q is none of %s, %s", p.HeaderValues, HeaderValuesUTF8, HeaderValuesLatin1)
	}
	count := func(pos string) int {
		if n, ok := p.Passes[pos]; ok {
			return n
		}
		if sx.Literal() {
			return 0
		}
		return ns.counts[pos]
	}
	h.syntax = sx
	h.argPasses, h.envPasses = count(PosArgs), count(PosEnv)
	h.literal, h.readLiteral, _ = compose(sx, count(PosArgs))
	_, h.value, h.spellEnvSecret = compose(sx, count(PosEnv))
	_, h.url, _ = compose(sx, count(PosURL))
	_, h.header, h.spellHeaderSecret = compose(sx, count(PosHeaders))
	if sx.NeedsDollarVar() && !slices.ContainsFunc(p.Env, func(e ProfileEnv) bool {
		return e.Name == valuesyntax.DollarVar && e.Value == "$" && e.When == "always"
	}) {
		// Without a default the reference gives "$" only while the harness's environment
		// says so: a caller's value would otherwise be read where the plan wrote "$".
		return nil, fmt.Errorf("valueSyntax: dollar %q needs env %s=$ set always", valuesyntax.DollarRef, valuesyntax.DollarVar)
	}
	dollarVar := ""
	if p.Spawn != "" {
		sp, ok := spawnStyles[p.Spawn]
		if !ok {
			return nil, fmt.Errorf("spawn %q is none of %v", p.Spawn, SpawnStyles())
		}
		if p.ExpandMax < 0 {
			return nil, fmt.Errorf("expandMax %d: want a length of at least 1, or 0 for no limit", p.ExpandMax)
		}
		sp.expandMax = p.ExpandMax
		sp.tilde = p.ExpandsTilde
		if sp.ref == "" {
			// The CLI expands "${" in the wrapper's arguments: SPEC's references are "${"
			// spelled as its value syntax writes it there, which it gives back as "${".
			if sp.ref = h.literal("${"); sp.ref == "${" {
				return nil, fmt.Errorf("spawn %s: the value syntax must spell \"${\" in args (the CLI would expand SPEC's references)", p.Spawn)
			}
		}
		h.spawn = &sp
		dollarVar = sp.dollarVar
	}
	if sx.NeedsDollarVar() {
		// The syntax writes "$" as a reference to the variable: the profile pins it (below).
		dollarVar = valuesyntax.DollarVar
	}
	if f := p.CheckoutEnvFile; f != "" && (path.IsAbs(f) || path.Clean(f) != f || f == ".." || strings.HasPrefix(f, "../")) {
		return nil, fmt.Errorf("checkoutEnvFile %q: want a clean path relative to the checkout", f)
	}
	hasConfig := cf.Path != "" || cf.Root != ""
	switch {
	case !hasConfig && p.Tools.In != "none":
		return nil, fmt.Errorf("tools.in %q: a profile without a config file has no tools (none)", p.Tools.In)
	case hasConfig && p.Tools.In == "none":
		return nil, fmt.Errorf("tools.in none: a harness with an MCP config must say how tool restrictions reach it")
	}
	switch p.Tools.In {
	case "none":
	case "args":
		h.toolsInArgs = true
		if !slices.ContainsFunc(p.Args, func(a ProfileArg) bool { return a.Value == "tools" }) {
			return nil, fmt.Errorf("tools.in args: no args rule has value tools")
		}
	case "config":
		if !slices.Contains(mapValues(h.serverKeys), "allowTools") {
			return nil, fmt.Errorf("tools.in config: no server key means allowTools")
		}
		// A restricted server without its allow list would offer every tool.
		h.requireAllowList = true
	case "exposure":
		h.exposureTools = true
		if !slices.Contains(mapValues(h.serverKeys), "exposure") || !slices.Contains(mapValues(h.serverKeys), "toolExposure") {
			return nil, fmt.Errorf("tools.in exposure: the server keys need exposure and toolExposure")
		}
	default:
		return nil, fmt.Errorf("tools.in %q is none of args, config, exposure, none", p.Tools.In)
	}
	h.requireAllowList = h.requireAllowList || p.Tools.RequireAllowList
	for i, t := range p.Tools.Builtin {
		if !profileTool.MatchString(t) {
			return nil, fmt.Errorf("tools.builtin[%d] %q is not a tool name", i, t)
		}
	}
	names, err := compileToolNames(p.Tools.Names, p.Tools.In)
	if err != nil {
		return nil, err
	}
	h.toolNames = names
	if len(p.Tools.Builtin) > 0 && p.Tools.In != "args" {
		// A run's pre-approved built-in tools go into the tools argument; without one a listed
		// tool could never be granted and would only look supported.
		return nil, fmt.Errorf("tools.builtin: only a tools.in args profile has a list to pre-approve built-in tools in")
	}
	h.builtinTools = slices.Clone(p.Tools.Builtin)
	rulesFlag := slices.ContainsFunc(p.Args, func(a ProfileArg) bool { return a.Value == "tools" || a.Value == "denyTools" })
	if r := p.Tools.Rules; r != nil {
		if err := checkRuleTemplates(*r); err != nil {
			return nil, err
		}
		h.toolRules = r
	}
	switch {
	case h.toolRules == nil && rulesFlag:
		return nil, fmt.Errorf("tools.rules: an args entry of value tools or denyTools needs the templates its rules follow (server, tool; docs/PROFILES.md §2)")
	case h.toolRules != nil && !rulesFlag:
		return nil, fmt.Errorf("tools.rules: no args entry carries rules (value tools or denyTools)")
	}
	for i, a := range p.Args {
		if !profileFlag.MatchString(a.Flag) {
			return nil, fmt.Errorf("args[%d].flag %q is not a flag", i, a.Flag)
		}
		r := argRule{flag: a.Flag, variadic: a.Variadic, required: a.Required}
		switch a.Value {
		case "", "none":
			r.value = argNone
		case "pinned":
			if a.Pinned == "" {
				return nil, fmt.Errorf("args[%d]: a pinned flag needs its value", i)
			}
			r.value, r.pinned = argPinned, a.Pinned
		case "tools":
			r.value = argTools
		case "denyTools":
			if p.Tools.In != "args" {
				return nil, fmt.Errorf("args[%d]: value denyTools is for a tools.in args profile", i)
			}
			r.value = argDenyTools
		case "servers":
			if !hasConfig {
				return nil, fmt.Errorf("args[%d]: value servers names the servers of the config, and the profile has none", i)
			}
			r.value = argServers
		default:
			return nil, fmt.Errorf("args[%d].value %q is none of none, pinned, tools, denyTools, servers", i, a.Value)
		}
		if a.Value != "pinned" && a.Pinned != "" {
			return nil, fmt.Errorf("args[%d]: pinned is only for value pinned", i)
		}
		h.args = append(h.args, r)
	}
	placeholders := []string{RootPlaceholder(abi.RootConfig), RootPlaceholder(abi.RootRun), RootPlaceholder(abi.RootCheckout)}
	for i, e := range p.Env {
		if !profileEnvName.MatchString(e.Name) {
			return nil, fmt.Errorf("env[%d].name %q is not a variable name", i, e.Name)
		}
		if !slices.Contains(placeholders, e.Value) && !slices.Contains(profileEnvSwitches, e.Value) &&
			!(e.Value == "$" && e.Name == dollarVar && dollarVar != "") {
			return nil, fmt.Errorf("env[%d] %s: the value must be a root placeholder (%v), a switch (%s), or $ for the dollar variable of the spawn style or value syntax", i, e.Name, placeholders, strings.Join(profileEnvSwitches, ", "))
		}
		r := envRule{name: e.Name, value: e.Value}
		switch e.When {
		case "always":
			r.when = envAlways
		case "isolated":
			r.when = envIsolated
		case "optional":
			r.when = envOptional
		default:
			return nil, fmt.Errorf("env[%d].when %q is none of always, isolated, optional", i, e.When)
		}
		h.env = append(h.env, r)
	}
	for i, n := range p.ReservedNames {
		if !profileKey.MatchString(n) {
			return nil, fmt.Errorf("reservedNames[%d] %q is not a server name", i, n)
		}
	}
	if s := p.Skills; s != nil {
		if !validPath(abi.RootConfig, s.Dir) {
			return nil, fmt.Errorf("skills.dir %q is not a relative path", s.Dir)
		}
		if !slices.ContainsFunc(h.paths, func(r pathRule) bool { return r.match(abi.RootConfig, s.Dir+"/x/SKILL.md") }) {
			return nil, fmt.Errorf("skills.dir %s is not under any of paths of the config root", s.Dir)
		}
		h.skills = &skillsLayout{dir: s.Dir, folds: s.Folds}
	}
	if pr := p.Prompt; pr != nil {
		if !strings.Contains(pr.Qualified, "{tool}") || strings.Count(pr.Qualified, "{") != strings.Count(pr.Qualified, "{server}")+strings.Count(pr.Qualified, "{tool}") {
			return nil, fmt.Errorf("prompt.qualified %q: want a template with the slot {tool} and no other than {server}", pr.Qualified)
		}
		for i := 0; i < len(pr.QualifiedChars); i++ {
			if c := pr.QualifiedChars[i]; c < 0x21 || c > 0x7e {
				return nil, fmt.Errorf("prompt.qualifiedChars: want printable ASCII")
			}
		}
		h.prompt = pr
	}
	return h, nil
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// keyMeaning is what server key means in h's config ("" for a key it may not carry).
func (h *harness) keyMeaning(key string) string { return h.serverKeys[key] }

// keyOf names the server key of h's config that means m, as the profile spells it, for
// messages: "{a,b}" when several do, m itself when none does.
func (h *harness) keyOf(m string) string {
	var keys []string
	for k, meaning := range h.serverKeys {
		if meaning == m {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	switch len(keys) {
	case 0:
		return m
	case 1:
		return keys[0]
	}
	return "{" + strings.Join(keys, ",") + "}"
}

// hasMeaning reports whether some server key means m.
func (h *harness) hasMeaning(m string) bool { return slices.Contains(mapValues(h.serverKeys), m) }

// SecretSpelling returns how a secret value of a server's field (FieldEnv, FieldHeaders) must
// be spelled inside file root:path for the harness of p so that the harness reads it back
// unchanged — or nil when the value goes in as is (the file's format escaping aside). Only the
// profile's config file has a spelling, and each field its own, after the passes the harness
// makes over it.
func (p *Profile) SecretSpelling(root, path, field string) func(string) string {
	if p == nil || p.h.config.root != root || p.h.config.path != path {
		return nil
	}
	if field == FieldHeaders {
		return p.h.spellHeaderSecret
	}
	return p.h.spellEnvSecret
}

// SecretSpellings returns every spelling of a secret value that a harness config file can
// hold, before the file format's own escaping: the value itself, then each distinct secret
// spelling of the named value syntaxes (valueSyntaxes) for one and two passes, in name order —
// the redaction set of the conformity corpus. loadout redact masks each of them, and their JSON
// and TOML spellings, so that no secret a render wrote survives in a log.
func SecretSpellings(v string) []string {
	out := []string{v}
	for _, name := range ValueSyntaxes() {
		sx := namedCompiled[name]
		if sx.Literal() {
			continue
		}
		for n := 1; n <= maxPasses; n++ {
			if sp := sx.Secret(v, n); !slices.Contains(out, sp) {
				out = append(out, sp)
			}
		}
	}
	return out
}

// namedCompiled holds each named value syntax compiled.
var namedCompiled = func() map[string]*valuesyntax.Syntax {
	m := make(map[string]*valuesyntax.Syntax, len(valueSyntaxes))
	for name, ns := range valueSyntaxes {
		m[name] = valuesyntax.MustCompile(ns.passes)
	}
	return m
}()

// Profiles are reviewed profiles by harness.
type Profiles map[string]*Profile

// LoadProfiles reads every <dir>/profile.yaml of fsys (the built-in renderers' profiles,
// plugins.Profiles). Two profiles of one harness, or one that does not parse, is an error.
func LoadProfiles(fsys fs.FS) (Profiles, error) {
	files, err := fs.Glob(fsys, "*/profile.yaml")
	if err != nil {
		return nil, err
	}
	out := Profiles{}
	for _, f := range files {
		data, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		p, err := ParseProfile(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if _, dup := out[p.Harness]; dup {
			return nil, fmt.Errorf("%s: a second profile of harness %q", f, p.Harness)
		}
		out[p.Harness] = p
	}
	return out, nil
}

// Reserves reports whether the harness of p refuses to load a server named id.
func (p *Profile) Reserves(id string) bool {
	return p != nil && slices.Contains(p.ReservedNames, id)
}

// SpawnStyle is how the sdk wraps and reads back a stdio server's launch for this harness
// (format.WrapSpawn, UnwrapSpawn): its value syntax and passes, expandsTilde and expandMax.
func (p *Profile) SpawnStyle() format.SpawnStyle {
	st := format.SpawnStyle{ArgPasses: p.h.argPasses, EnvPasses: p.h.envPasses, ExpandsTilde: p.ExpandsTilde, ExpandMax: p.ExpandMax}
	if !p.h.syntax.Literal() {
		st.Syntax = p.h.syntax
	}
	return st
}

// Expands reports whether the harness expands any string of its config (valueSyntax is not
// literal).
func (p *Profile) Expands() bool { return !p.h.syntax.Literal() }

// Literal spells a non-secret value (a url, a header, a cwd) as the harness's config must hold
// it to read it back unchanged, by the profile's value syntax.
func (p *Profile) Literal(s string) string { return p.h.literal(s) }

// ReadLiteral undoes Literal: what the harness makes of a config string that Literal wrote,
// and false when s is not a spelling Literal produces.
func (p *Profile) ReadLiteral(s string) (string, bool) { return p.h.readLiteral(s) }

// ReadValue is what the harness makes of an env value of its config, and false when it would
// expand or run it rather than take it literally.
func (p *Profile) ReadValue(s string) (string, bool) { return p.h.value(s) }

// ReadHeader is what the harness makes of a header value of its config, after every pass it
// makes over it, and false when it would expand or run part of it.
func (p *Profile) ReadHeader(s string) (string, bool) { return p.h.header(s) }

// ReadURL is what the harness makes of an http server's url in its config, and false when it
// would expand part of it.
func (p *Profile) ReadURL(s string) (string, bool) { return p.h.url(s) }

// ExposureNative reports whether the harness renders exposure and toolExposure itself
// (tools.in exposure); for any other the host turns them into tool lists (host/exposure).
func (p *Profile) ExposureNative() bool { return p.Tools.In == "exposure" }

// toolNames is a compiled tools.names: nil keeps a name exact; otherwise keep[c] says whether
// the CLI keeps byte c, and repl replaces every other byte (a multi-byte character becomes one
// repl per byte, as the CLI's per-UTF-16-unit replacement may not: names are ASCII here).
type toolNames struct {
	keep [256]bool
	repl byte
}

// compileToolNames checks and compiles tools.names: exactly one of exact, or keep with a
// replacement it keeps; none for a profile whose tools.in is none.
func compileToolNames(n ProfileToolNames, in string) (*toolNames, error) {
	switch {
	case in == "none":
		if n != (ProfileToolNames{}) {
			return nil, fmt.Errorf("tools.names: a profile without tools has no tool names")
		}
		return nil, nil
	case n.Exact && (n.Keep != "" || n.Replacement != ""):
		return nil, fmt.Errorf("tools.names: exact takes no keep or replacement")
	case n.Exact:
		return nil, nil
	case n.Keep == "":
		return nil, fmt.Errorf("tools.names: say how the CLI spells a tool's name in its rules: exact: true, or keep and replacement (docs/PROFILES.md §2)")
	}
	tn := &toolNames{}
	k := n.Keep
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c < 0x21 || c > 0x7e {
			return nil, fmt.Errorf("tools.names.keep %q: only printable ASCII", n.Keep)
		}
		if i+2 < len(k) && k[i+1] == '-' {
			hi := k[i+2]
			if hi < c || hi > 0x7e {
				return nil, fmt.Errorf("tools.names.keep %q: bad range %c-%c", n.Keep, c, hi)
			}
			for x := c; x <= hi; x++ {
				tn.keep[x] = true
			}
			i += 2
			continue
		}
		tn.keep[c] = true
	}
	if len(n.Replacement) != 1 || !tn.keep[n.Replacement[0]] {
		return nil, fmt.Errorf("tools.names.replacement %q: one character that keep keeps", n.Replacement)
	}
	tn.repl = n.Replacement[0]
	return tn, nil
}

// spell is tool as the CLI names it in its rules.
func (tn *toolNames) spell(tool string) string {
	if tn == nil {
		return tool
	}
	b := []byte(tool)
	for i, c := range b {
		if !tn.keep[c] {
			b[i] = tn.repl
		}
	}
	return string(b)
}

// RuleToolName is tool as the harness's rules name it (tools.names): the name the host writes
// into, and expects in, the CLI's allow and deny lists.
func (p *Profile) RuleToolName(tool string) string { return p.h.toolNames.spell(tool) }

// checkRuleTemplates checks tools.rules: each template non-empty printable ASCII without
// space or comma (the CLI splits its rule arguments there), with exactly its slots.
func checkRuleTemplates(r ProfileToolRules) error {
	for _, t := range []struct{ key, tmpl string }{{"server", r.Server}, {"tool", r.Tool}} {
		if t.tmpl == "" || strings.ContainsFunc(t.tmpl, func(c rune) bool { return c <= ' ' || c > '~' || c == ',' }) {
			return fmt.Errorf("tools.rules.%s %q: want printable ASCII without space or comma", t.key, t.tmpl)
		}
	}
	slots := func(s string) int { return strings.Count(s, "{") + strings.Count(s, "}") }
	if strings.Count(r.Server, "{server}") != 1 || slots(r.Server) != 2 {
		return fmt.Errorf("tools.rules.server %q: want the slot {server} once and no other", r.Server)
	}
	si, ti := strings.Index(r.Tool, "{server}"), strings.Index(r.Tool, "{tool}")
	if strings.Count(r.Tool, "{server}") != 1 || strings.Count(r.Tool, "{tool}") != 1 || slots(r.Tool) != 4 || si > ti {
		return fmt.Errorf("tools.rules.tool %q: want the slots {server} then {tool}, each once, and no other", r.Tool)
	}
	return nil
}

// ServerRule is the rule granting every tool of server id (tools.rules.server); "" for a profile
// without rules.
func (p *Profile) ServerRule(id string) string {
	if p.h.toolRules == nil {
		return ""
	}
	return strings.Replace(p.h.toolRules.Server, "{server}", id, 1)
}

// ToolRule is the rule naming tool of server id (tools.rules.tool), the tool spelled as the
// harness's rules match it (tools.names); "" for a profile without rules.
func (p *Profile) ToolRule(id, tool string) string {
	if p.h.toolRules == nil {
		return ""
	}
	r := strings.Replace(p.h.toolRules.Tool, "{server}", id, 1)
	return strings.Replace(r, "{tool}", p.h.toolNames.spell(tool), 1)
}

// BuiltinTools are the harness's own tools a run may pre-approve (tools.builtin); none when the
// profile lists none.
func (p *Profile) BuiltinTools() []string { return slices.Clone(p.Tools.Builtin) }

// DenyList reports whether the harness has a list of tools it must not offer: a server key
// meaning denyTools, or an args rule of value denyTools.
func (p *Profile) DenyList() bool {
	return p.h.hasMeaning("denyTools") || slices.ContainsFunc(p.h.args, func(a argRule) bool { return a.value == argDenyTools })
}

// DenyFlag is the flag whose values carry the denied tools' rules (value denyTools), or "".
func (p *Profile) DenyFlag() string {
	for _, a := range p.Args {
		if a.Value == "denyTools" {
			return a.Flag
		}
	}
	return ""
}

// ToolsFlag is the flag whose values carry tool rules (a tools.in args profile), or "".
func (p *Profile) ToolsFlag() string {
	for _, a := range p.Args {
		if a.Value == "tools" {
			return a.Flag
		}
	}
	return ""
}

// checkTimeoutRange checks config.timeoutMin and timeoutMax: each needs a timeoutUnit, is 0
// (no bound) or a positive number, a whole one in milliseconds, and min <= max.
func checkTimeoutRange(cf ProfileConfig) error {
	for _, b := range []struct {
		key string
		v   float64
	}{{"timeoutMin", cf.TimeoutMin}, {"timeoutMax", cf.TimeoutMax}} {
		switch {
		case b.v == 0:
		case cf.TimeoutUnit == "":
			return fmt.Errorf("config.%s: needs a timeoutUnit", b.key)
		case !(b.v > 0) || math.IsInf(b.v, 0):
			return fmt.Errorf("config.%s %v: want a positive number", b.key, b.v)
		case cf.TimeoutUnit == "ms" && b.v != math.Trunc(b.v):
			return fmt.Errorf("config.%s %v: want a whole number of milliseconds", b.key, b.v)
		}
	}
	if cf.TimeoutMin > 0 && cf.TimeoutMax > 0 && cf.TimeoutMin > cf.TimeoutMax {
		return fmt.Errorf("config.timeoutMin %v is above timeoutMax %v", cf.TimeoutMin, cf.TimeoutMax)
	}
	return nil
}

// pinnedValue is one value a profile pins (config.pinned), parsed, with its JSON text for
// messages.
type pinnedValue struct {
	value *Value
	text  string
}

// profilePinnedKey is a top-level key config.pinned may name: a key, or one with a leading "$"
// (a settings file's "$version", which a CLI reads to know the file needs no rewrite).
var profilePinnedKey = namepattern.MustCompile(`^\$?[A-Za-z_][A-Za-z0-9_-]*$`, 65)

// compilePinned reads config.pinned into parsed values.
func compilePinned(cf ProfileConfig) (map[string]pinnedValue, error) {
	if len(cf.Pinned) == 0 {
		return nil, nil
	}
	if cf.Format != abi.FormatJSON {
		return nil, fmt.Errorf("config.pinned: only a json config can pin top-level keys")
	}
	pins := map[string]pinnedValue{}
	for key, v := range cf.Pinned {
		if !profilePinnedKey.MatchString(key) || key == cf.Servers || slices.Contains(cf.TopKeys, key) {
			return nil, fmt.Errorf("config.pinned: %q is not a key of its own (a name, with at most a leading $)", key)
		}
		text, err := json.Marshal(v) // maps marshal in sorted key order
		if err != nil {
			return nil, fmt.Errorf("config.pinned.%s: %w", key, err)
		}
		value, err := ParseJSON(text)
		if err != nil {
			return nil, fmt.Errorf("config.pinned.%s: %w", key, err)
		}
		pins[key] = pinnedValue{value, string(text)}
	}
	return pins, nil
}

// compose returns the spelling, reading and secret spelling of n passes of sx. Zero passes (or
// a literal syntax) leave every string as it is, and secret is nil: no spelling.
func compose(sx *valuesyntax.Syntax, n int) (spell func(string) string, read func(string) (string, bool), secret func(string) string) {
	if n == 0 || sx.Literal() {
		return verbatim, verbatimValue, nil
	}
	return func(s string) string { return sx.Spell(s, n) },
		func(s string) (string, bool) { return sx.Read(s, n) },
		func(s string) string { return sx.Secret(s, n) }
}
