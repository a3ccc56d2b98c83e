package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/loadout-dev/loadout/internal/namepattern"
	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/profile"
	"github.com/loadout-dev/loadout/sdk/profile/profileyaml"
	"github.com/loadout-dev/loadout/sdk/valuesyntax"
)

// Profile is a harness profile (sdk/profile: the model every side reads) with the rules the
// plan check compiles from it: the paths a plugin may write, the config's keys, the args and env
// a plugin may return, the spawn wrapper, the skills layout. Only ParseProfile (and
// LoadProfiles) make one. Immutable, safe for concurrent use.
type Profile struct {
	*profile.Profile
	h *harness
}

// The profile model's types and names, as host/plan's callers have known them.
type (
	ProfilePrompt    = profile.Prompt
	ProfilePath      = profile.Path
	ProfileConfig    = profile.Config
	ProfileTools     = profile.Tools
	ProfileToolRules = profile.ToolRules
	ProfileToolNames = profile.ToolNames
	ProfileArg       = profile.Arg
	ProfileEnv       = profile.Env
	ProfileSkills    = profile.Skills
	ValueSyntax      = profile.ValueSyntax
)

// Value positions and header repertoires (sdk/profile).
const (
	PosArgs            = profile.PosArgs
	PosEnv             = profile.PosEnv
	PosURL             = profile.PosURL
	PosHeaders         = profile.PosHeaders
	HeaderValuesUTF8   = profile.HeaderValuesUTF8
	HeaderValuesLatin1 = profile.HeaderValuesLatin1
)

var (
	// ServerKeyMeanings are what a server key of a config may mean (sdk/profile).
	ServerKeyMeanings = profile.ServerKeyMeanings
	// PassPositions are the value positions a profile's passes may name (sdk/profile).
	PassPositions = profile.PassPositions
)

// SecretSpellings returns every spelling of a secret value that a harness config file can
// hold (sdk/profile.SecretSpellings): the redaction set of the conformity corpus.
func SecretSpellings(v string) []string { return profile.SecretSpellings(v) }

// spawnStyles is the closed list of env -i launch encodings (docs/SPAWN-ENV.md).
var spawnStyles = map[string]spawnStyle{
	profile.SpawnEnvAlias:       {ref: "${"},
	profile.SpawnEnvAliasDollar: {split: true, cwdFlag: true, dollarVar: dollarDefaultVar},
}

// SpawnStyles lists the spawn style names a profile may use, sorted.
func SpawnStyles() []string { return slices.Sorted(maps.Keys(spawnStyles)) }

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
	pp, err := profileyaml.Parse(data)
	if err != nil {
		return nil, err
	}
	p := &Profile{Profile: pp}
	if p.h, err = p.compile(); err != nil {
		return nil, fmt.Errorf("profile %s: %w", p.Harness, err)
	}
	return p, nil
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
		var err error
		if err = checkPinned(cf); err != nil {
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
		if err := checkOAuthForms(cf, hasOAuth || slices.Contains(mapValues(h.serverKeys), "oauthScopes")); err != nil {
			return nil, err
		}
		if err := checkNamesFold(cf.NamesFold); err != nil {
			return nil, err
		}
		for _, need := range []string{"command", "url"} {
			if !slices.Contains(mapValues(h.serverKeys), need) {
				return nil, fmt.Errorf("config.serverKeys: no key means %s", need)
			}
		}
	}
	switch p.HeaderValues {
	case "", HeaderValuesUTF8, HeaderValuesLatin1:
	default:
		return nil, fmt.Errorf("headerValues %q is none of %s, %s", p.HeaderValues, HeaderValuesUTF8, HeaderValuesLatin1)
	}
	sx := p.Syntax()
	h.syntax = sx
	h.argPasses, h.envPasses = p.PassCount(PosArgs), p.PassCount(PosEnv)
	h.literal, h.readLiteral = p.Literal, p.ReadLiteral
	h.value, h.url, h.header = p.ReadValue, p.ReadURL, p.ReadHeader
	h.spellEnvSecret, h.spellHeaderSecret = p.SecretSpell(PosEnv), p.SecretSpell(PosHeaders)
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
	if len(p.Tools.Builtin) > 0 && p.Tools.In != "args" {
		// A run's pre-approved built-in tools go into the tools argument; without one a listed
		// tool could never be granted and would only look supported.
		return nil, fmt.Errorf("tools.builtin: only a tools.in args profile has a list to pre-approve built-in tools in")
	}
	h.builtinTools = slices.Clone(p.Tools.Builtin)
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
	if s := p.Skills; s != nil && s.FoldsAlways {
		// Every run folds: the resources go under the checkout's context directory, so the
		// profile must allow it there, and names no directory of its own.
		if s.Dir != "" || s.Folds {
			return nil, fmt.Errorf("skills.foldsAlways: skills.dir and skills.folds must be left out (no run installs skills)")
		}
		if !slices.ContainsFunc(h.paths, func(r pathRule) bool {
			return r.match(abi.RootCheckout, CheckoutContextDir+"/skill/x/SKILL.md")
		}) {
			return nil, fmt.Errorf("skills.foldsAlways: no path of the checkout root allows %s/skill/", CheckoutContextDir)
		}
		h.skills = &skillsLayout{always: true}
	} else if s != nil {
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

// DenyList reports whether the harness has a list of tools it must not offer: a server key
// meaning denyTools, or an args rule of value denyTools.
func (p *Profile) DenyList() bool {
	return p.h.hasMeaning("denyTools") || slices.ContainsFunc(p.h.args, func(a argRule) bool { return a.value == argDenyTools })
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

// profilePinnedKey is a top-level key config.pinned may name: a key, or one with a leading "$"
// (a settings file's "$version", which a CLI reads to know the file needs no rewrite).
var profilePinnedKey = namepattern.MustCompile(`^\$?[A-Za-z_][A-Za-z0-9_-]*$`, 65)

// checkPinned checks config.pinned: a json config's own top-level keys, each value one JSON
// can hold (the reader compares them, sdk/profile/readback).
func checkPinned(cf ProfileConfig) error {
	if len(cf.Pinned) == 0 {
		return nil
	}
	if cf.Format != abi.FormatJSON {
		return fmt.Errorf("config.pinned: only a json config can pin top-level keys")
	}
	for key, v := range cf.Pinned {
		if !profilePinnedKey.MatchString(key) || key == cf.Servers || slices.Contains(cf.TopKeys, key) {
			return fmt.Errorf("config.pinned: %q is not a key of its own (a name, with at most a leading $)", key)
		}
		text, err := json.Marshal(v) // maps marshal in sorted key order
		if err != nil {
			return fmt.Errorf("config.pinned.%s: %w", key, err)
		}
		if _, err := ParseJSON(text); err != nil {
			return fmt.Errorf("config.pinned.%s: %w", key, err)
		}
	}
	return nil
}

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

// Reserves reports whether the harness of p refuses to load a server named id; a nil p (no
// plugin renders the harness) reserves nothing.
func (p *Profile) Reserves(id string) bool { return p != nil && p.Profile.Reserves(id) }

// checkOAuthForms checks config.oauthScopes and config.oauthMetadataUrls: each one of its
// closed list, and only where a key holds OAuth settings.
func checkOAuthForms(cf profile.Config, hasOAuth bool) error {
	switch cf.OAuthScopes {
	case "", profile.OAuthScopesList, profile.OAuthScopesString:
	default:
		return fmt.Errorf("config.oauthScopes %q is none of %s, %s", cf.OAuthScopes, profile.OAuthScopesList, profile.OAuthScopesString)
	}
	switch cf.OAuthMetadataURLs {
	case "", profile.OAuthMetadataAny, profile.OAuthMetadataHTTPS, profile.OAuthMetadataHTTPSLoopback:
	default:
		return fmt.Errorf("config.oauthMetadataUrls %q is none of %s, %s, %s", cf.OAuthMetadataURLs,
			profile.OAuthMetadataAny, profile.OAuthMetadataHTTPS, profile.OAuthMetadataHTTPSLoopback)
	}
	if !hasOAuth && (cf.OAuthScopes != "" || cf.OAuthMetadataURLs != "") {
		return errors.New("config.oauthScopes, oauthMetadataUrls: no server key holds OAuth settings")
	}
	return nil
}

// checkNamesFold checks config.namesFold: at least two characters, each a character a server
// name may hold, none twice.
func checkNamesFold(fold string) error {
	if fold == "" {
		return nil
	}
	if len(fold) < 2 {
		return fmt.Errorf("config.namesFold %q: name two or more characters the harness reads as one", fold)
	}
	for i, c := range fold {
		if c != '-' && c != '_' && !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return fmt.Errorf("config.namesFold %q: %q is not a character of a server name", fold, c)
		}
		if strings.IndexRune(fold, c) != i {
			return fmt.Errorf("config.namesFold %q: %q twice", fold, c)
		}
	}
	return nil
}
