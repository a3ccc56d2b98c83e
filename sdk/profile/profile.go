// Package profile is the model of a harness profile (docs/PROFILES.md): what loadout knows about
// one agent CLI, as data — the files a plugin for it may write, where its MCP configuration
// lives and what each server key means, how it expands strings (its value syntax), how tool
// restrictions and their rules travel, the args and env a plugin may set, its skills layout and
// how its stdio servers must be launched.
//
// It lives in the SDK because both sides read the same profile: a plugin renders through it,
// and the host (host/plan) checks every plan through it, adding the rules only a checker needs.
// sdk/profile/profileyaml reads a profile.yaml strictly and Compile checks what this package
// interprets (the value syntax and its passes, tool names and rule templates, config.pinned);
// host/plan.ParseProfile checks the rest. A plugin embeds its profile as a generated Go literal
// (profileyaml's generator), so no YAML reader runs in a plugin. A compiled Profile is
// immutable and safe for concurrent use.
package profile

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/loadout-dev/loadout/sdk/format"
	"github.com/loadout-dev/loadout/sdk/valuesyntax"
)

// Pin is one top-level key of config.pinned with its value: a mapping as a *format.Object (its
// keys sorted), a sequence as []any, a scalar as bool, int64, float64 or string.
type Pin struct {
	Key   string
	Value any
}

// PinnedInOrder lists config.pinned in the order the profile writes it (Config.PinnedOrder),
// for a renderer to write the keys first, as the profile states them.
func (p *Profile) PinnedInOrder() []Pin { return slices.Clone(p.pinned) }

// encodable converts a value of config.pinned into what the SDK's encoders write.
func encodable(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		o := format.NewObject()
		for _, k := range slices.Sorted(maps.Keys(x)) {
			e, err := encodable(x[k])
			if err != nil {
				return nil, err
			}
			o.Set(k, e)
		}
		return o, nil
	case []any:
		out := make([]any, 0, len(x))
		for _, e := range x {
			c, err := encodable(e)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, nil
	case int:
		return int64(x), nil
	case bool, int64, float64, string:
		return x, nil
	}
	return nil, fmt.Errorf("a value of type %T", v)
}

// Compile checks the parts of p this package interprets (the value syntax and its passes, tool
// names and rule templates, config.pinned) and compiles them; a Profile is usable only once
// compiled (sdk/profile/profileyaml.Parse compiles the profiles it reads). The error names the
// field.
func Compile(p *Profile) error {
	if err := p.compile(); err != nil {
		return fmt.Errorf("profile %s: %w", p.Harness, err)
	}
	return nil
}

// MustCompile is Compile for a plugin's own profile (its generated literal); it panics on an
// error and returns p.
func MustCompile(p *Profile) *Profile {
	if err := Compile(p); err != nil {
		panic(err)
	}
	return p
}

// compile checks and compiles the parts of p this package interprets.
func (p *Profile) compile() error {
	ns := namedSyntax{passes: p.ValueSyntax.Passes, counts: passesOf(1, 1, 1, 1)}
	if p.ValueSyntax.Passes == nil {
		if p.ValueSyntax.Name != SyntaxLiteral {
			return fmt.Errorf("valueSyntax %q is not %s: write the passes out as a list of {expands, dollar, bang}", p.ValueSyntax.Name, SyntaxLiteral)
		}
		ns = namedSyntax{counts: passesOf(0, 0, 0, 0)}
	}
	sx, err := valuesyntax.Compile(ns.passes)
	if err != nil {
		return fmt.Errorf("valueSyntax: %w", err)
	}
	for pos, n := range p.Passes {
		switch {
		case !slices.Contains(PassPositions, pos):
			return fmt.Errorf("passes: position %q is none of %v", pos, PassPositions)
		case n < 0 || n > maxPasses:
			return fmt.Errorf("passes.%s: %d is not a pass count (0 to %d)", pos, n, maxPasses)
		case n > 0 && sx.Literal():
			return fmt.Errorf("passes.%s: valueSyntax %s expands nothing", pos, p.ValueSyntax)
		}
	}
	p.syntax, p.counts = sx, map[string]int{}
	for _, pos := range PassPositions {
		n, ok := p.Passes[pos]
		switch {
		case ok:
		case sx.Literal():
			n = 0
		default:
			n = ns.counts[pos]
		}
		p.counts[pos] = n
	}
	if sx.NeedsDollarVar() && !slices.ContainsFunc(p.Env, func(e Env) bool {
		return e.Name == valuesyntax.DollarVar && e.Value == "$" && e.When == "always"
	}) {
		// Without a default the reference gives "$" only while the harness's environment
		// says so: a caller's value would otherwise be read where the plan wrote "$".
		return fmt.Errorf("valueSyntax: dollar %q needs env %s=$ set always", valuesyntax.DollarRef, valuesyntax.DollarVar)
	}
	if p.toolNames, err = compileToolNames(p.Tools.Names, p.Tools.In); err != nil {
		return err
	}
	if r := p.Tools.Rules; r != nil {
		if err := checkRuleTemplates(*r); err != nil {
			return err
		}
		p.toolRules = r
	}
	if len(p.Config.ServerKeysOrder) > 0 {
		if len(p.Config.ServerKeysOrder) != len(p.Config.ServerKeys) {
			return fmt.Errorf("config.serverKeys: the order of its %d keys is not known", len(p.Config.ServerKeys))
		}
		for _, k := range p.Config.ServerKeysOrder {
			if _, ok := p.Config.ServerKeys[k]; !ok {
				return fmt.Errorf("config.serverKeys: no key %q", k)
			}
		}
	}
	if len(p.Config.PinnedOrder) != len(p.Config.Pinned) {
		return fmt.Errorf("config.pinned: the order of its %d keys is not known", len(p.Config.Pinned))
	}
	p.pinned = nil
	for _, k := range p.Config.PinnedOrder {
		v, ok := p.Config.Pinned[k]
		if !ok {
			return fmt.Errorf("config.pinned: no key %q", k)
		}
		e, err := encodable(v)
		if err != nil {
			return fmt.Errorf("config.pinned.%s: %w", k, err)
		}
		p.pinned = append(p.pinned, Pin{Key: k, Value: e})
	}
	rulesFlag := slices.ContainsFunc(p.Args, func(a Arg) bool { return a.Value == "tools" || a.Value == "denyTools" })
	switch {
	case p.toolRules == nil && rulesFlag:
		return fmt.Errorf("tools.rules: an args entry of value tools or denyTools needs the templates its rules follow (server, tool; docs/PROFILES.md §2)")
	case p.toolRules != nil && !rulesFlag:
		return fmt.Errorf("tools.rules: no args entry carries rules (value tools or denyTools)")
	}
	return nil
}

// Syntax is the profile's value syntax, compiled; a literal one expands nothing.
func (p *Profile) Syntax() *valuesyntax.Syntax { return p.syntax }

// PassCount is how many times the harness expands a string at value position pos
// (PassPositions): the profile's passes, or its value syntax's count.
func (p *Profile) PassCount(pos string) int { return p.counts[pos] }

// Spell writes s for value position pos (PassPositions) so that the harness, expanding it there
// as many times as the profile counts, gives s back.
func (p *Profile) Spell(pos, s string) string { return p.syntax.Spell(s, p.counts[pos]) }

// SecretSpell spells a secret value at value position pos (PosEnv, PosHeaders) of the config
// so that the harness reads it back unchanged; nil when the position is not expanded.
func (p *Profile) SecretSpell(pos string) func(string) string {
	_, _, secret := compose(p.syntax, p.counts[pos])
	return secret
}

// Profile is what the host knows about one harness, as data (docs/PROFILES.md): the files a
// plugin for it may write, where its MCP configuration lives and what each server key means,
// how it expands strings, how tool restrictions travel, the args and env a plugin may set,
// its skills layout and how its stdio servers must be launched. Check reads a plugin's plan
// through its profile only: a harness loadout has never seen gets every check a built-in one
// gets, from its reviewed, pinned profile. A Profile is immutable once ParseProfile returns it.
type Profile struct {
	Harness string `yaml:"harness"`
	// Measured names the harness release the profile was measured against.
	Measured string `yaml:"measured"`
	Paths    []Path `yaml:"paths"`
	// HiddenDirs are hidden directories of the config root the harness reads its files from
	// (Gemini CLI's $GEMINI_CLI_HOME/.gemini); paths may name files under them, no others.
	HiddenDirs []string `yaml:"hiddenDirs"`
	Config     Config   `yaml:"config"`
	// ValueSyntax is how the harness expands the strings of its config: its passes as data
	// (valuesyntax.Pass), or literal (nothing expanded).
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
	CheckoutEnvFile string `yaml:"checkoutEnvFile"`
	Tools           Tools  `yaml:"tools"`
	// Args and Env are exactly what a plugin may return on the harness's command line and in
	// its environment; none when empty.
	Args   []Arg   `yaml:"args"`
	Env    []Env   `yaml:"env"`
	Skills *Skills `yaml:"skills"`
	// Prompt is how the prompt the host requires names a server's tools; nil: by their names.
	Prompt *Prompt `yaml:"prompt"`
	// ReservedNames are server ids the harness refuses to load (it reports them and goes on
	// without them): the host refuses such a server before anything is rendered, so that no
	// prompt names a server the harness will not have.
	ReservedNames []string `yaml:"reservedNames"`
	// Validate is the offline command that checks a rendered config with the real CLI (for
	// end-to-end tests; the host never runs it).
	Validate []string `yaml:"validate"`

	// compiled by Parse
	syntax    *valuesyntax.Syntax
	counts    map[string]int // passes per position (PassPositions)
	toolNames *toolNames
	toolRules *ToolRules
	pinned    []Pin // config.pinned, in order
}

// Prompt spells a tool in the prompt as "<tool> (<qualified>)": Qualified with its
// slots {server} and {tool} filled in, every byte but an ASCII letter, a digit or one of
// QualifiedChars then replaced by "_" (the name the harness shows the model).
type Prompt struct {
	Qualified      string `yaml:"qualified"`
	QualifiedChars string `yaml:"qualifiedChars"`
}

// Path allows one path under a root: a file, "dir/**" (everything under dir) or "**".
type Path struct {
	Root string `yaml:"root"`
	Path string `yaml:"path"`
}

// Config is the harness's MCP configuration file.
type Config struct {
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
	// PinnedOrder is the order of Pinned's keys in the profile (set by the reader; YAML
	// mappings have an order, Go maps do not).
	PinnedOrder []string `yaml:"-"`
	// ServerKeys maps each key a server entry may carry to its meaning (ServerKeyMeanings).
	ServerKeys map[string]string `yaml:"serverKeys"`
	// ServerKeysOrder is the order of ServerKeys in the profile (set by the reader): the order a
	// renderer on sdk/harness writes a server's keys in.
	ServerKeysOrder []string `yaml:"-"`
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
	// OAuthScopes is the form of the oauth object's scopes: "list" (a list of strings) or
	// "string" (one space-separated string); the plan check refuses the other. Empty: either is
	// read, and a renderer writes a list.
	OAuthScopes string `yaml:"oauthScopes"`
	// OAuthMetadataURLs is which authServerMetadataUrl the harness takes: "any" (the default
	// when empty), "https", or "https-or-loopback" (https, or http on localhost, 127.0.0.1 or
	// [::1]). The plan check refuses another one; a renderer leaves it out, with an
	// oauth_unsupported warning.
	OAuthMetadataURLs string `yaml:"oauthMetadataUrls"`
	// NamesFold are characters the harness reads as one in a server name ("-_": a-b and a_b
	// name one server). The plan check refuses two servers whose names fold to one; a renderer
	// leaves out the later one, with a server_name_conflict warning.
	NamesFold string `yaml:"namesFold"`
}

// Spawn styles (Profile.Spawn; docs/SPAWN-ENV.md): env-alias references each alias as
// "${ALIAS}"; env-alias-dollar, for a harness that expands "${" in its strings, through the
// dollar reference "${LOADOUT_SPAWN_DOLLAR:-$}{ALIAS}", a value possibly in several aliases,
// and the cwd as env's -C.
const (
	SpawnEnvAlias       = "env-alias"
	SpawnEnvAliasDollar = "env-alias-dollar"
)

// Values of Config.OAuthScopes and Config.OAuthMetadataURLs.
const (
	OAuthScopesList            = "list"
	OAuthScopesString          = "string"
	OAuthMetadataAny           = "any"
	OAuthMetadataHTTPS         = "https"
	OAuthMetadataHTTPSLoopback = "https-or-loopback"
)

// MetadataURLTaken reports whether the harness takes u as an authorization-server metadata
// URL (config.oauthMetadataUrls).
func (c *Config) MetadataURLTaken(u string) bool {
	switch c.OAuthMetadataURLs {
	case OAuthMetadataHTTPS:
		return strings.HasPrefix(strings.ToLower(u), "https://")
	case OAuthMetadataHTTPSLoopback:
		pu, err := url.Parse(u)
		if err != nil {
			return false
		}
		switch strings.ToLower(pu.Scheme) {
		case "https":
			return true
		case "http":
			return slices.Contains([]string{"localhost", "127.0.0.1", "::1"}, strings.ToLower(pu.Hostname()))
		}
		return false
	}
	return true
}

// FoldName is the name the harness reads id as: every character of NamesFold as the first.
func (c *Config) FoldName(id string) string {
	if len(c.NamesFold) < 2 {
		return id
	}
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune(c.NamesFold, r) {
			return rune(c.NamesFold[0])
		}
		return r
	}, id)
}

// Tools is how a server's tool restriction reaches the harness.
type Tools struct {
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
	Names ToolNames `yaml:"names"`
	// Rules is how a rule on the command line names a server or one of its tools: required
	// exactly when an args entry carries rules (value tools or denyTools).
	Rules *ToolRules `yaml:"rules"`
}

// ToolRules are the templates of the rules a CLI's tool flags take (Claude Code 2.1.328:
// mcp__{server} grants every tool of a server, mcp__{server}__{tool} one tool, the tool spelled
// as tools.names says). The host writes and checks every rule through them.
type ToolRules struct {
	// Server names every tool of a server: the slot {server} once, no other.
	Server string `yaml:"server"`
	// Tool names one tool of a server: {server} once, then {tool} once, no other slot.
	Tool string `yaml:"tool"`
}

// ToolNames is how a CLI normalises an MCP tool's name before its allow and deny rules
// match it (measured per CLI, docs/FORMATS.md §4.1): Exact, or every character outside Keep
// replaced by Replacement. The host spells every rule it writes or checks through it.
type ToolNames struct {
	// Exact: the rules match the tool's name as the server spells it.
	Exact bool `yaml:"exact"`
	// Keep is the characters the CLI keeps, as ASCII ranges and characters ("A-Za-z0-9_-":
	// a "-" last is itself).
	Keep string `yaml:"keep"`
	// Replacement is the one character, itself kept, that replaces every other.
	Replacement string `yaml:"replacement"`
}

// Arg is one flag a plugin may return.
type Arg struct {
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

// Env is one variable a plugin may set, with its only value (a root placeholder, or
// "$" for the spawn style's dollar variable).
type Env struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
	// When is "always", "isolated" (exactly when the run is not ambientAuth) or "optional".
	When string `yaml:"when"`
}

// Skills is where the harness installs skills.
type Skills struct {
	Dir string `yaml:"dir"`
	// Folds: in an ambient-auth run the resources go under the checkout's context directory
	// and the instructions into the prompt.
	Folds bool `yaml:"folds"`
	// FoldsAlways: the CLI reads no skills in the mode a run starts it in (Qwen Code under
	// --bare), so every run's skills are folded as Folds folds an ambient-auth run's; Dir and
	// Folds are then left out.
	FoldsAlways bool `yaml:"foldsAlways"`
}

// Folded reports whether a run's skills are folded into the prompt and the checkout's context
// directory instead of installed under Dir: always with FoldsAlways, in an ambient-auth run
// with Folds, never without skills.
func (s *Skills) Folded(ambient bool) bool {
	return s != nil && (s.FoldsAlways || s.Folds && ambient)
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
// and bang (decoded by the reader's own strict decoder: an unknown key is an error, as
// everywhere in a profile).
func (v *ValueSyntax) UnmarshalYAML(unmarshal func(any) error) error {
	var name string
	if err := unmarshal(&name); err == nil {
		v.Name = name
		return nil
	}
	var passes []valuesyntax.Pass
	if err := unmarshal(&passes); err != nil {
		return fmt.Errorf("valueSyntax: want a name or a list of passes {expands, dollar, bang}: %w", err)
	}
	if len(passes) == 0 {
		return fmt.Errorf("valueSyntax: an empty list (write literal for a CLI that expands nothing)")
	}
	v.Passes = passes
	return nil
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

// SyntaxLiteral is the one value syntax a profile names instead of writing its passes: a CLI
// that expands nothing.
const SyntaxLiteral = "literal"

// measuredSyntaxes are the value syntaxes measured so far (docs/FORMATS.md §1.1, §2.1, §3.3,
// §5.1, §5.2), as the built-in profiles write them, compiled: SecretSpellings spells a secret
// for each.
var measuredSyntaxes = func() []*valuesyntax.Syntax {
	var out []*valuesyntax.Syntax
	for _, passes := range [][]valuesyntax.Pass{{braceDollar}, {everyDollar}, {everyDollar, dotenv}, {piDollar}} {
		out = append(out, valuesyntax.MustCompile(passes))
	}
	return out
}()

// SecretSpellings returns every spelling of a secret value that a harness config file can
// hold, before the file format's own escaping: the value itself, then each distinct secret
// spelling of the measured value syntaxes (measuredSyntaxes) for one and two passes — the
// redaction set of the conformity corpus. loadout redact masks each of them, and their JSON
// and TOML spellings, so that no secret a render wrote survives in a log.
func SecretSpellings(v string) []string {
	out := []string{v}
	for _, sx := range measuredSyntaxes {
		for n := 1; n <= maxPasses; n++ {
			if sp := sx.Secret(v, n); !slices.Contains(out, sp) {
				out = append(out, sp)
			}
		}
	}
	return out
}

// Reserves reports whether the harness of p refuses to load a server named id.
func (p *Profile) Reserves(id string) bool {
	return p != nil && slices.Contains(p.ReservedNames, id)
}

// SpawnStyle is how the sdk wraps and reads back a stdio server's launch for this harness
// (format.WrapSpawn, UnwrapSpawn): its value syntax and passes, expandsTilde and expandMax.
func (p *Profile) SpawnStyle() format.SpawnStyle {
	st := format.SpawnStyle{ArgPasses: p.counts[PosArgs], EnvPasses: p.counts[PosEnv], ExpandsTilde: p.ExpandsTilde, ExpandMax: p.ExpandMax}
	if !p.syntax.Literal() {
		st.Syntax = p.syntax
	}
	return st
}

// Expands reports whether the harness expands any string of its config (valueSyntax is not
// literal).
func (p *Profile) Expands() bool { return !p.syntax.Literal() }

// Literal spells a non-secret value (a url, a header, a cwd) as the harness's config must hold
// it to read it back unchanged, by the profile's value syntax.
func (p *Profile) Literal(s string) string { return p.syntax.Spell(s, p.counts[PosArgs]) }

// ReadLiteral undoes Literal: what the harness makes of a config string that Literal wrote,
// and false when s is not a spelling Literal produces.
func (p *Profile) ReadLiteral(s string) (string, bool) { return p.syntax.Read(s, p.counts[PosArgs]) }

// ReadValue is what the harness makes of an env value of its config, and false when it would
// expand or run it rather than take it literally.
func (p *Profile) ReadValue(s string) (string, bool) { return p.syntax.Read(s, p.counts[PosEnv]) }

// ReadHeader is what the harness makes of a header value of its config, after every pass it
// makes over it, and false when it would expand or run part of it.
func (p *Profile) ReadHeader(s string) (string, bool) { return p.syntax.Read(s, p.counts[PosHeaders]) }

// ReadURL is what the harness makes of an http server's url in its config, and false when it
// would expand part of it.
func (p *Profile) ReadURL(s string) (string, bool) { return p.syntax.Read(s, p.counts[PosURL]) }

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
func compileToolNames(n ToolNames, in string) (*toolNames, error) {
	switch {
	case in == "none":
		if n != (ToolNames{}) {
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
func (p *Profile) RuleToolName(tool string) string { return p.toolNames.spell(tool) }

// checkRuleTemplates checks tools.rules: each template non-empty printable ASCII without
// space or comma (the CLI splits its rule arguments there), with exactly its slots.
func checkRuleTemplates(r ToolRules) error {
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
	if p.toolRules == nil {
		return ""
	}
	return strings.Replace(p.toolRules.Server, "{server}", id, 1)
}

// ToolRule is the rule naming tool of server id (tools.rules.tool), the tool spelled as the
// harness's rules match it (tools.names); "" for a profile without rules.
func (p *Profile) ToolRule(id, tool string) string {
	if p.toolRules == nil {
		return ""
	}
	r := strings.Replace(p.toolRules.Tool, "{server}", id, 1)
	return strings.Replace(r, "{tool}", p.toolNames.spell(tool), 1)
}

// BuiltinTools are the harness's own tools a run may pre-approve (tools.builtin); none when the
// profile lists none.
func (p *Profile) BuiltinTools() []string { return slices.Clone(p.Tools.Builtin) }

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

func verbatim(s string) string { return s }

func verbatimValue(s string) (string, bool) { return s, true }

// PromptName is how the prompt names tool of server (prompt.qualified): "<tool> (<qualified>)",
// with every character of the qualified name outside ASCII letters, digits and
// prompt.qualifiedChars as "_"; nil when the profile has no prompt template (a tool by its name).
// The host writes the prompt with it, and a renderer on sdk/harness too.
func (p *Profile) PromptName() func(server, tool string) string {
	pr := p.Prompt
	if pr == nil {
		return nil
	}
	return func(server, tool string) string {
		q := []byte(strings.ReplaceAll(strings.ReplaceAll(pr.Qualified, "{server}", server), "{tool}", tool))
		for i, b := range q {
			if !(b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || strings.IndexByte(pr.QualifiedChars, b) >= 0) {
				q[i] = '_'
			}
		}
		return tool + " (" + string(q) + ")"
	}
}
