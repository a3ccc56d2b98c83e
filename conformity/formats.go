package conformity

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/host/redact"
	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
)

// harnessFormat is what the suite reads a harness's output with, all of it taken from the
// harness's reviewed profile (docs/PROFILES.md): where its MCP config lives and in which
// format, what each server key means, how the harness spells values, how tool restrictions
// travel and where skills go. The suite has no knowledge of its own about any harness.
type harnessFormat struct {
	prof       *plan.Profile
	root, path string // the MCP config; "" when the profile has none
	toml       bool
	serversKey string
	keys       map[string]string // server key -> meaning
	style      format.SpawnStyle
	wrapped    bool // stdio servers are launched through env -i (the profile's spawn)
	// skills is the profile's skills layout (nil: none); a run whose skills it folds gets
	// them in the prompt and the checkout.
	skills    *plan.ProfileSkills
	skillsDir string // "" when the profile installs no skills under the config root
	tools     string // the profile's tools.in
}

// formatOf builds the reader of p's output.
func formatOf(p *plan.Profile) (harnessFormat, error) {
	hf := harnessFormat{
		prof: p, root: p.Config.Root, path: p.Config.Path, toml: p.Config.Format == abi.FormatTOML,
		serversKey: p.Config.Servers, keys: p.Config.ServerKeys, wrapped: p.Spawn != "", tools: p.Tools.In,
	}
	if p.Skills != nil {
		hf.skillsDir, hf.skills = p.Skills.Dir, p.Skills
	}
	if hf.wrapped {
		hf.style = p.SpawnStyle()
	}
	return hf, nil
}

// litBack is what the harness makes of a literal it holds (a command, an arg, a cwd, a
// description). A string the harness would expand comes back marked, so that the comparison
// fails on it whatever it holds.
func (hf harnessFormat) litBack(s string) string { return readBack(hf.prof.ReadLiteral, s) }

// valueBack is what the harness makes of an env value of its config (after the host
// substituted the secrets in their spelling), marked as litBack's when it would expand it.
func (hf harnessFormat) valueBack(s string) string { return readBack(hf.prof.ReadValue, s) }

// headerBack is valueBack for a header value, which the harness may expand more times.
func (hf harnessFormat) headerBack(s string) string { return readBack(hf.prof.ReadHeader, s) }

// urlBack is what the harness makes of a url of its config.
func (hf harnessFormat) urlBack(s string) string { return readBack(hf.prof.ReadURL, s) }

func readBack(read func(string) (string, bool), s string) string {
	if v, ok := read(s); ok {
		return v
	}
	return "<expanded by the harness> " + s
}

// pairsBack reads every value of ps back with back (valueBack, headerBack).
func pairsBack(ps []abi.Pair, back func(string) string) []abi.Pair {
	out := make([]abi.Pair, 0, len(ps))
	for _, p := range ps {
		out = append(out, abi.Pair{Name: p.Name, Value: back(p.Value)})
	}
	return out
}

// hasKey reports whether some server key of the profile means meaning.
func (hf harnessFormat) hasKey(meaning string) bool {
	for _, m := range hf.keys {
		if m == meaning {
			return true
		}
	}
	return false
}

// entry is one server read back from a harness config.
type entry struct {
	id                    string
	typ, command, url     *string
	cwd, exposure         *string
	description           *string
	timeouts              []float64 // the values of the keys meaning timeout, in the profile's unit
	args, allowTools      []string
	hasAllowTools         bool
	denyTools             []string
	env, headers, toolExp []abi.Pair
	enabled               *bool
	// oauth: what the keys meaning oauth, oauthScopes and oauthClientId hold, by OAuth meaning
	// (clientId, callbackPort, scopes, authServerMetadataUrl) as text; scopes a list.
	oauth      map[string]string
	oauthSeen  bool // a key meaning oauth, oauthScopes or oauthClientId is there
	scopes     []string
	scopesSeen bool
}

// checkFormat parses the harness's config and SKILL.md files back and compares them with the
// vetted request, secrets and content filled in.
func (r *runner) checkFormat(o *output, hf harnessFormat) {
	v := o.prepared.Vetted
	fill := fillFunc(v)
	req := v.Request()
	var entries []entry
	if hf.path == "" { // a harness without MCP: its skills only
		r.checkSkills(o, hf, req, fill)
		return
	}
	if f, ok := o.file(hf.root, hf.path); ok {
		var err error
		if entries, err = readEntries(string(f.content), hf); err != nil {
			r.fail("format: %s:%s: %v", hf.root, hf.path, err)
			return
		}
	} else if len(req.Servers) > 0 {
		r.fail("format: %s:%s is missing", hf.root, hf.path)
	}
	warned := map[string]bool{}
	for _, w := range o.res.Warnings {
		warned[w.Server] = true
	}
	index := map[string]int{}
	for i, s := range req.Servers {
		index[s.ID] = i
	}
	last := -1
	present := map[string]bool{}
	for _, e := range entries {
		i, ok := index[e.id]
		if !ok {
			r.fail("format: server %q is rendered but not in the vetted request", e.id)
			continue
		}
		if i < last {
			r.fail("format: server %q is out of request order", e.id)
		}
		last = i
		present[e.id] = true
		r.compareEntry(o, hf, e, req.Servers[i], fill)
	}
	for _, s := range req.Servers {
		if !present[s.ID] && !warned[s.ID] {
			r.fail("format: vetted server %q is not rendered and no warning names it", s.ID)
		}
	}
	if hf.tools == "args" {
		r.checkArgRules(o, hf, req, present)
	}
	r.checkSkills(o, hf, req, fill)
}

func (r *runner) compareEntry(o *output, hf harnessFormat, e entry, s abi.Server, fill func(string) string) {
	v := o.prepared.Vetted
	bad := func(format string, args ...any) {
		r.fail("format: server %q: %s", e.id, fmt.Sprintf(format, args...))
	}
	r.compareOAuth(o, e, s, bad)
	if e.enabled != nil && *e.enabled != s.Enabled || e.enabled == nil && !s.Enabled {
		bad("enabled is %v, the vetted server's is %t", deref(e.enabled), s.Enabled)
	}
	warned := slices.ContainsFunc(o.res.Warnings, func(w host.Warning) bool { return w.Server == s.ID })
	if hf.hasKey("description") {
		got := ""
		if e.description != nil {
			got = hf.litBack(*e.description)
		}
		if got != s.Description {
			bad("description %q, want %q", got, s.Description)
		}
	}
	switch s.Transport {
	case abi.TransportStdio:
		if e.typ != nil && *e.typ != "stdio" {
			bad("type %q, want stdio", *e.typ)
		}
		if e.command == nil {
			bad("no command")
			return
		}
		if !hf.wrapped {
			r.compareUnwrapped(o, hf, e, s, fill)
			break
		}
		// Every alias value is read as the harness reads its env values, secrets (substituted
		// in their spelling) included; one it would expand stays raw, and the unwrapping
		// refuses it.
		env := slices.Clone(e.env)
		for i := range env {
			if val, ok := hf.prof.ReadValue(env[i].Value); ok {
				env[i] = abi.Pair{Name: env[i].Name, Value: val, Secret: true}
			}
		}
		u, err := format.UnwrapSpawn(hf.style, *e.command, e.args, env)
		if err != nil {
			bad("launch: %v", err)
			return
		}
		if u.Command != s.Command {
			bad("command %q, want %q", u.Command, s.Command)
		}
		if !slices.Equal(u.Args, orEmpty(s.Args)) {
			bad("args %q, want %q", u.Args, orEmpty(s.Args))
		}
		cwd := u.Cwd
		if e.cwd != nil {
			cwd = hf.litBack(*e.cwd)
		}
		if cwd != s.Cwd {
			bad("cwd %q, want %q", cwd, s.Cwd)
		}
		var want []abi.Pair
		for _, p := range v.SpawnEnv(s.ID) {
			if spawnName(p.Name) {
				want = append(want, abi.Pair{Name: p.Name, Value: p.Value})
			}
		}
		if !slices.Equal(orEmptyPairs(u.Env), orEmptyPairs(want)) {
			bad("spawn environment %s, want %s", pairsString(u.Env, v), pairsString(want, v))
		}
	case abi.TransportHTTP:
		if e.typ != nil && *e.typ != "http" && *e.typ != "streamable-http" {
			bad("type %q, want http", *e.typ)
		}
		if e.command != nil || len(e.args) > 0 || len(e.env) > 0 {
			bad("an http server has a command, args or env")
		}
		if e.cwd != nil {
			bad("an http server has a cwd")
		}
		if e.url == nil || hf.urlBack(*e.url) != s.URL {
			bad("url %q read back as %q, want %q", deref(e.url), hf.urlBack(deref0(e.url)), s.URL)
		}
		// Every header is read back as the harness reads it, a secret one (substituted in its
		// spelling) included.
		var want []abi.Pair
		for _, p := range s.Headers {
			want = append(want, abi.Pair{Name: p.Name, Value: fill(p.Value)})
		}
		got := pairsBack(e.headers, hf.headerBack)
		if hf.toml { // a TOML table has no order
			sort.Slice(got, func(i, j int) bool { return got[i].Name < got[j].Name })
			sort.Slice(want, func(i, j int) bool { return want[i].Name < want[j].Name })
		}
		if !slices.Equal(orEmptyPairs(got), orEmptyPairs(want)) {
			bad("headers %s, want %s", pairsString(got, v), pairsString(want, v))
		}
	}
	if hf.prof.Config.TimeoutUnit != "" {
		adjusted := slices.ContainsFunc(o.res.Warnings, func(w host.Warning) bool {
			return w.Server == s.ID && w.Code == abi.WarnTimeoutAdjusted
		})
		r.compareTimeout(e, s, hf.prof.Config, adjusted)
	}
	switch hf.tools {
	case "config":
		// A restricted server carries its allow list, even empty, as the plan check requires
		// for every profile whose config has one.
		switch {
		case s.ToolsRestricted && (!e.hasAllowTools || !slices.Equal(e.allowTools, orEmpty(s.AllowedTools))):
			bad("allowed tools %q, want %q", e.allowTools, orEmpty(s.AllowedTools))
		case !s.ToolsRestricted && e.hasAllowTools:
			bad("allowed tools %q on an unrestricted server", e.allowTools)
		}
		if !slices.Equal(orEmpty(e.denyTools), orEmpty(s.DeniedTools)) {
			bad("denied tools %q, want %q", e.denyTools, s.DeniedTools)
		}
	case "exposure":
		if !s.ToolsRestricted {
			// An unrestricted server keeps the exposure the request gives it, unless a warning
			// says the harness has no such exposure.
			if warned {
				break
			}
			if deref0(e.exposure) != s.Exposure {
				bad("exposure %q, want %q", deref0(e.exposure), s.Exposure)
			}
			if !slices.Equal(orEmptyPairs(e.toolExp), orEmptyPairs(s.ToolExposure)) {
				bad("tool exposure %v, want %v", e.toolExp, s.ToolExposure)
			}
			break
		}
		if e.exposure == nil || *e.exposure != "hidden" {
			bad("restricted server: exposure %q, want hidden", deref(e.exposure))
		}
		exposed := []string{}
		for _, p := range e.toolExp {
			if p.Value != "hidden" {
				exposed = append(exposed, p.Name)
			}
		}
		// The allowed tools the request's own toolExposure (or the server's exposure) leaves
		// exposed; the harness hides the others itself.
		var want []string
		for _, t := range s.AllowedTools {
			if x, ok := format.ToolExposure(s.ToolExposure, t); x != "hidden" && (ok || s.Exposure != "hidden") {
				want = append(want, t)
			}
		}
		if want := slices.Sorted(slices.Values(orEmpty(want))); !slices.Equal(slices.Sorted(slices.Values(exposed)), want) {
			bad("exposed tools %q, want %q", exposed, want)
		}
	}
}

// compareTimeout compares the timeout keys of e with the vetted timeout (seconds): none when
// the request sets none, else exactly one, in the profile's unit (milliseconds rounded to the
// nearest one), or, when adjusted (a timeout_adjusted warning names the server), the nearest
// bound of the profile's range for a vetted timeout outside it.
func (r *runner) compareTimeout(e entry, s abi.Server, cf plan.ProfileConfig, adjusted bool) {
	want := s.Timeout
	if cf.TimeoutUnit == "ms" {
		want = max(math.Round(want*1000), 1)
	}
	bound := want
	if cf.TimeoutMin > 0 {
		bound = max(bound, cf.TimeoutMin)
	}
	if cf.TimeoutMax > 0 {
		bound = min(bound, cf.TimeoutMax)
	}
	switch {
	case s.Timeout <= 0 && len(e.timeouts) > 0:
		r.fail("format: server %q: timeout %v, the vetted server sets none", e.id, e.timeouts)
	case s.Timeout <= 0:
	case len(e.timeouts) != 1:
		r.fail("format: server %q: timeout %v, want [%v] (%s)", e.id, e.timeouts, want, cf.TimeoutUnit)
	case e.timeouts[0] == want, adjusted && e.timeouts[0] == bound:
	default:
		r.fail("format: server %q: timeout %v, want [%v] (%s)", e.id, e.timeouts, want, cf.TimeoutUnit)
	}
}

// compareUnwrapped compares a stdio server of a harness that does not pass its environment on
// (a profile without spawn): command, args and env as the vetted server has them.
func (r *runner) compareUnwrapped(o *output, hf harnessFormat, e entry, s abi.Server, fill func(string) string) {
	if got := hf.litBack(deref0(e.command)); got != s.Command {
		r.fail("format: server %q: command %q, want %q", e.id, got, s.Command)
	}
	var args []string
	for _, a := range e.args {
		args = append(args, hf.litBack(a))
	}
	if !slices.Equal(orEmpty(args), orEmpty(s.Args)) {
		r.fail("format: server %q: args %q, want %q", e.id, args, orEmpty(s.Args))
	}
	// The env holds the server's own env, and may pin the rest of its spawn environment (the
	// host env the policy let through) too, each with its vetted value.
	v := o.prepared.Vetted
	spawn := map[string]string{}
	for _, p := range v.SpawnEnv(s.ID) {
		spawn[p.Name] = p.Value
	}
	got := pairsBack(e.env, hf.valueBack)
	for _, p := range got {
		if want, ok := spawn[p.Name]; !ok || p.Value != want {
			r.fail("format: server %q: env %s is not the vetted spawn env value", e.id, pairsString([]abi.Pair{p}, v))
		}
	}
	for _, p := range s.Env {
		if !slices.ContainsFunc(got, func(g abi.Pair) bool { return g.Name == p.Name }) {
			r.fail("format: server %q: env %s is missing", e.id, p.Name)
		}
	}
	if cwd := hf.litBack(deref0(e.cwd)); cwd != s.Cwd && (e.cwd != nil || hf.hasKey("cwd")) {
		r.fail("format: server %q: cwd %q, want %q", e.id, cwd, s.Cwd)
	}
}

func deref0(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// checkArgRules derives the tool rules of the profile's tools flag from the vetted request.
func (r *runner) checkArgRules(o *output, hf harnessFormat, req abi.Request, rendered map[string]bool) {
	restricted := false
	want := []string{}
	for _, s := range req.Servers {
		if !rendered[s.ID] {
			continue
		}
		if !s.ToolsRestricted {
			want = append(want, hf.prof.ServerRule(s.ID))
			continue
		}
		restricted = true
		for _, t := range s.AllowedTools {
			if rule := hf.prof.ToolRule(s.ID, t); !slices.Contains(want, rule) {
				want = append(want, rule)
			}
		}
	}
	// Each rule names its tool as the harness's rules match it (tools.names), once.
	wantDeny := []string{}
	for _, s := range req.Servers {
		if rendered[s.ID] {
			for _, t := range s.DeniedTools {
				if rule := hf.prof.ToolRule(s.ID, t); !slices.Contains(wantDeny, rule) {
					wantDeny = append(wantDeny, rule)
				}
			}
		}
	}
	if flag := hf.prof.DenyFlag(); flag != "" {
		gotDeny, _ := toolRules(o.res.Args, flag, hf.prof)
		if !slices.Equal(orEmpty(gotDeny), wantDeny) {
			r.fail("format: %s rules %q, want %q", flag, gotDeny, wantDeny)
		}
	}
	got, present := toolRules(o.res.Args, hf.prof.ToolsFlag(), hf.prof)
	switch {
	case present != (restricted || len(req.Run.BuiltinTools) > 0):
		r.fail("format: %s present=%t, want %t (some rendered server restricts its tools: %t; built-in tools pre-approved: %q)", hf.prof.ToolsFlag(), present, !present, restricted, req.Run.BuiltinTools)
	case present && restricted && !slices.Equal(got, want):
		r.fail("format: %s MCP rules %q, want %q", hf.prof.ToolsFlag(), got, want)
	case present && !restricted && len(got) > 0:
		r.fail("format: %s MCP rules %q, want none: no rendered server restricts its tools", hf.prof.ToolsFlag(), got)
	}
}

// checkSkills reads every skill back: a SKILL.md whose front matter names its directory with
// the description, and every resource with its exact content; or, for a run the profile folds,
// the instructions in the prompt and the resources under the checkout's context directory.
func (r *runner) checkSkills(o *output, hf harnessFormat, req abi.Request, fill func(string) string) {
	names := make([]string, len(req.Skills))
	for i, sk := range req.Skills {
		names[i] = sk.Name
	}
	dirs := format.SkillNames(names)
	folded := hf.skills.Folded(req.Run.AmbientAuth)
	if hf.skills == nil { // the profile installs no skills: nothing to read back
		return
	}
	for i, sk := range req.Skills {
		dir := dirs[i]
		root, base := abi.RootConfig, hf.skillsDir+"/"+dir+"/"
		if folded {
			root, base = abi.RootCheckout, format.ContextDir+"/skill/"+dir+"/"
			if !strings.Contains(o.res.Prompt, fill(sk.Instructions)) {
				r.fail("format: skill %q: the prompt does not hold its instructions", sk.Name)
			}
		} else {
			f, ok := o.file(root, base+"SKILL.md")
			if !ok {
				r.fail("format: skill %q: %s:%sSKILL.md is missing", sk.Name, root, base)
				continue
			}
			_, fm, has, err := plan.FrontMatter(string(f.content))
			if err != nil || !has {
				r.fail("format: skill %q: SKILL.md front matter: has=%t err=%v", sk.Name, has, err)
				continue
			}
			if fm["name"] != dir {
				r.fail("format: skill %q: front matter name %q, want its directory %q", sk.Name, fm["name"], dir)
			}
			desc, _ := format.SkillDescription(sk.Description)
			if desc == "" {
				desc = format.GeneratedSkillDescription(dir)
			}
			if fm["description"] != desc {
				r.fail("format: skill %q: front matter description %q, want %q", sk.Name, fm["description"], desc)
			}
			if !strings.Contains(string(f.content), fill(sk.Instructions)) {
				r.fail("format: skill %q: SKILL.md does not hold the instructions", sk.Name)
			}
		}
		for _, res := range sk.Resources {
			f, ok := o.file(root, base+res.Path)
			switch {
			case !ok:
				r.fail("format: skill %q: resource %s:%s%s is missing", sk.Name, root, base, res.Path)
			case string(f.content) != fill(res.Content):
				r.fail("format: skill %q: resource %s differs from the vetted content", sk.Name, res.Path)
			}
		}
	}
}

// readEntries reads the harness's config back with the plan check's own reader, through the
// profile (sdk/profile/readback, by plan.Profile.ReadConfig): a key the profile does not list,
// or a value of the wrong type, is an error.
func readEntries(content string, hf harnessFormat) ([]entry, error) {
	servers, err := hf.prof.ReadConfig(content)
	if err != nil {
		return nil, err
	}
	out := make([]entry, 0, len(servers))
	for _, s := range servers {
		e := entry{id: s.ID, typ: s.Type, command: s.Command, url: s.URL, cwd: s.Cwd, exposure: s.Exposure,
			description: s.Description, timeouts: s.Timeouts, args: s.Args, env: s.Env, headers: s.Headers,
			toolExp: s.ToolExposure, enabled: s.Enabled}
		if s.HasAllowTools {
			e.hasAllowTools, e.allowTools = true, orEmpty(s.AllowTools)
		}
		for _, t := range s.DenyTools {
			e.denyTools = append(e.denyTools, hf.litBack(t))
		}
		o := s.OAuth
		e.oauthSeen = o.Present || o.ClientID != nil || o.HasScopes
		if o.ClientID != nil {
			e.setOAuth("clientId", *o.ClientID)
		}
		if o.CallbackPort != nil {
			e.setOAuth("callbackPort", strconv.FormatInt(*o.CallbackPort, 10))
		}
		if o.MetadataURL != nil {
			e.setOAuth("authServerMetadataUrl", *o.MetadataURL)
		}
		if o.HasScopes {
			e.scopesSeen, e.scopes = true, orEmpty(o.Scopes)
		}
		out = append(out, e)
	}
	return out, nil
}

// setOAuth records an OAuth member read back under its meaning.
func (e *entry) setOAuth(meaning, text string) {
	if e.oauth == nil {
		e.oauth = map[string]string{}
	}
	e.oauth[meaning] = text
}

// spawnName reports whether env -S can carry the name (format.WrapSpawn skips the others).
func spawnName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func orEmptyPairs(ps []abi.Pair) []abi.Pair {
	out := make([]abi.Pair, 0, len(ps))
	for _, p := range ps {
		out = append(out, abi.Pair{Name: p.Name, Value: p.Value})
	}
	return out
}

// pairsString shows pairs for a failure message with every secret value masked by the
// request's redactor (host/redact's model).
func pairsString(ps []abi.Pair, v interface{ Redactor() *redact.Redactor }) string {
	mask := v.Redactor()
	var b strings.Builder
	b.WriteByte('[')
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%q", p.Name, mask.String(p.Value))
	}
	b.WriteByte(']')
	return b.String()
}

// compareOAuth checks the OAuth setting read back against the vetted one: each member rendered
// equals the vetted value, none is rendered for a server without one, and a member left out is
// named by an oauth_unsupported warning for the server.
func (r *runner) compareOAuth(o *output, e entry, s abi.Server, bad func(string, ...any)) {
	warned := slices.ContainsFunc(o.res.Warnings, func(w host.Warning) bool {
		return w.Server == s.ID && w.Code == abi.WarnOAuthUnsupported
	})
	if s.OAuth == nil {
		if e.oauthSeen {
			bad("renders an OAuth setting the request does not have")
		}
		return
	}
	want := map[string]string{}
	if s.OAuth.ClientID != "" {
		want["clientId"] = s.OAuth.ClientID
	}
	if s.OAuth.CallbackPort != 0 {
		want["callbackPort"] = strconv.Itoa(s.OAuth.CallbackPort)
	}
	if s.OAuth.AuthServerMetadataURL != "" {
		want["authServerMetadataUrl"] = s.OAuth.AuthServerMetadataURL
	}
	for _, m := range slices.Sorted(maps.Keys(e.oauth)) {
		if w, ok := want[m]; !ok || e.oauth[m] != w {
			bad("oauth %s is %q, the vetted one %q", m, e.oauth[m], w)
		}
	}
	for _, m := range slices.Sorted(maps.Keys(want)) {
		if _, ok := e.oauth[m]; !ok && !warned {
			bad("oauth %s is not rendered and no %s warning names the server", m, abi.WarnOAuthUnsupported)
		}
	}
	switch {
	case e.scopesSeen && !slices.Equal(e.scopes, orEmpty(s.OAuth.Scopes)):
		bad("oauth scopes are %q, the vetted ones %q", e.scopes, s.OAuth.Scopes)
	case !e.scopesSeen && len(s.OAuth.Scopes) > 0 && !warned:
		bad("oauth scopes are not rendered and no %s warning names the server", abi.WarnOAuthUnsupported)
	}
}
