package conformity

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
)

// harnessFormat is what the suite knows about a built-in harness's output (docs/FORMATS.md): where
// its MCP config lives, how it spells values, and where skills go.
type harnessFormat struct {
	root, path string
	toml       bool
	serversKey string
	style      format.SpawnStyle
	// lit spells a non-secret literal value (url, header) as the harness config holds it.
	lit func(string) string
	// foldsAmbient: an ambient-auth run gets its skills folded into the prompt and the checkout.
	foldsAmbient bool
	// tools says how tool restrictions are expressed: "args" (claude), "enabled_tools" (codex),
	// "exposure" (pi).
	tools string
}

var builtinFormats = map[string]harnessFormat{
	"claude": {root: abi.RootRun, path: "mcp-servers.json", serversKey: "mcpServers", style: format.SpawnClaude,
		lit: format.ClaudeLiteral, foldsAmbient: true, tools: "args"},
	"codex": {root: abi.RootConfig, path: "config.toml", toml: true, serversKey: "mcp_servers", style: format.SpawnVerbatim,
		lit: func(s string) string { return s }, foldsAmbient: true, tools: "enabled_tools"},
	"pi": {root: abi.RootConfig, path: "mcp.json", serversKey: "mcpServers", style: format.SpawnPi,
		lit: func(s string) string { return s }, tools: "exposure"},
}

// entry is one server read back from a harness config.
type entry struct {
	id                    string
	typ, command, url     *string
	cwd, exposure         *string
	args, enabledTools    []string
	hasEnabledTools       bool
	env, headers, toolExp []abi.Pair
	enabled               *bool
}

// checkFormat parses the harness's config and SKILL.md files back and compares them with the
// vetted request, secrets and content filled in.
func (r *runner) checkFormat(o *output, hf harnessFormat) {
	v := o.prepared.Vetted
	fill := fillFunc(v)
	req := v.Request()
	var entries []entry
	if f, ok := o.file(hf.root, hf.path); ok {
		var err error
		if hf.toml {
			entries, err = readTOMLEntries(string(f.content), hf.serversKey)
		} else {
			entries, err = readJSONEntries(string(f.content), hf.serversKey)
		}
		if err != nil {
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
		r.checkClaudeRules(o, req, present)
	}
	r.checkSkills(o, hf, req, fill)
}

func (r *runner) compareEntry(o *output, hf harnessFormat, e entry, s abi.Server, fill func(string) string) {
	v := o.prepared.Vetted
	bad := func(format string, args ...any) {
		r.fail("format: server %q: %s", e.id, fmt.Sprintf(format, args...))
	}
	if e.enabled != nil && *e.enabled != s.Enabled || e.enabled == nil && !s.Enabled {
		bad("enabled is %v, the vetted server's is %t", deref(e.enabled), s.Enabled)
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
		env := slices.Clone(e.env)
		for i := range env {
			for _, sec := range v.Secrets() {
				if env[i].Value == sec.Value {
					env[i].Secret = true
				}
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
		if e.url == nil || *e.url != hf.lit(s.URL) {
			bad("url %q, want %q", deref(e.url), hf.lit(s.URL))
		}
		var want []abi.Pair
		for _, p := range s.Headers {
			val := fill(p.Value)
			if !p.Secret {
				val = hf.lit(p.Value)
			}
			want = append(want, abi.Pair{Name: p.Name, Value: val})
		}
		got := slices.Clone(e.headers)
		if hf.toml { // a TOML table has no order
			sort.Slice(got, func(i, j int) bool { return got[i].Name < got[j].Name })
			sort.Slice(want, func(i, j int) bool { return want[i].Name < want[j].Name })
		}
		if !slices.Equal(orEmptyPairs(got), orEmptyPairs(want)) {
			bad("headers %s, want %s", pairsString(got, v), pairsString(want, v))
		}
	}
	switch hf.tools {
	case "enabled_tools":
		switch {
		case s.ToolsRestricted && !slices.Equal(e.enabledTools, orEmpty(s.AllowedTools)):
			bad("enabled_tools %q, want %q", e.enabledTools, orEmpty(s.AllowedTools))
		case !s.ToolsRestricted && e.hasEnabledTools:
			bad("enabled_tools %q on an unrestricted server", e.enabledTools)
		}
	case "exposure":
		if !s.ToolsRestricted {
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
		if want := slices.Sorted(slices.Values(orEmpty(s.AllowedTools))); !slices.Equal(slices.Sorted(slices.Values(exposed)), want) {
			bad("exposed tools %q, want %q", exposed, want)
		}
	}
}

// checkClaudeRules derives Claude's --allowedTools MCP rules from the vetted request.
func (r *runner) checkClaudeRules(o *output, req abi.Request, rendered map[string]bool) {
	restricted := false
	want := []string{}
	for _, s := range req.Servers {
		if !rendered[s.ID] {
			continue
		}
		if !s.ToolsRestricted {
			want = append(want, "mcp__"+s.ID)
			continue
		}
		restricted = true
		for _, t := range s.AllowedTools {
			want = append(want, "mcp__"+s.ID+"__"+t)
		}
	}
	got, present := mcpAllowRules(o.res.Args)
	switch {
	case present != restricted:
		r.fail("format: --allowedTools present=%t, want %t (some rendered server restricts its tools: %t)", present, restricted, restricted)
	case present && !slices.Equal(got, want):
		r.fail("format: --allowedTools MCP rules %q, want %q", got, want)
	}
}

// checkSkills reads every skill back: a SKILL.md whose front matter names its directory with
// the description, and every resource with its exact content; or, for a folded (ambient) run,
// the instructions in the prompt and the resources under the checkout's context directory.
func (r *runner) checkSkills(o *output, hf harnessFormat, req abi.Request, fill func(string) string) {
	names := make([]string, len(req.Skills))
	for i, sk := range req.Skills {
		names[i] = sk.Name
	}
	dirs := format.SkillNames(names)
	folded := hf.foldsAmbient && req.Run.AmbientAuth
	for i, sk := range req.Skills {
		dir := dirs[i]
		root, base := abi.RootConfig, "skills/"+dir+"/"
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

// litBack undoes lit for a value the harness holds (only Claude spells literals).
func (hf harnessFormat) litBack(s string) string {
	if hf.style == format.SpawnClaude {
		return strings.ReplaceAll(s, format.ClaudeDollar+"{", "${")
	}
	return s
}

func readJSONEntries(content, key string) ([]entry, error) {
	v, err := plan.ParseJSON([]byte(content))
	if err != nil {
		return nil, err
	}
	servers, ok := v.Get(key)
	if v.Kind != plan.Object || !ok || servers.Kind != plan.Object {
		return nil, fmt.Errorf("no %s object", key)
	}
	var out []entry
	for _, m := range servers.Members {
		e := entry{id: m.Name}
		if m.Value.Kind != plan.Object {
			return nil, fmt.Errorf("server %q is a %s", m.Name, m.Value.Kind)
		}
		for _, f := range m.Value.Members {
			x := f.Value
			switch f.Name {
			case "type":
				e.typ = &x.Str
			case "command":
				e.command = &x.Str
			case "url":
				e.url = &x.Str
			case "cwd":
				e.cwd = &x.Str
			case "exposure":
				e.exposure = &x.Str
			case "enabled":
				e.enabled = &x.Bool
			case "args":
				for _, it := range x.Items {
					e.args = append(e.args, it.Str)
				}
			case "env":
				e.env = jsonPairs(x)
			case "headers":
				e.headers = jsonPairs(x)
			case "toolExposure":
				e.toolExp = jsonPairs(x)
			}
		}
		out = append(out, e)
	}
	return out, nil
}

func jsonPairs(v *plan.Value) []abi.Pair {
	var out []abi.Pair
	for _, m := range v.Members {
		out = append(out, abi.Pair{Name: m.Name, Value: m.Value.Str})
	}
	return out
}

func readTOMLEntries(content, key string) ([]entry, error) {
	doc, err := plan.ParseTOML(content)
	if err != nil {
		return nil, err
	}
	table, _ := doc.Map[key].(map[string]any)
	var out []entry
	for _, id := range tomlTables(doc, key) {
		m, ok := table[id].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("server %q is not a table", id)
		}
		e := entry{id: id}
		str := func(k string) *string {
			if s, ok := m[k].(string); ok {
				return &s
			}
			return nil
		}
		list := func(k string) []string {
			var out []string
			items, _ := m[k].([]any)
			for _, it := range items {
				s, _ := it.(string)
				out = append(out, s)
			}
			return out
		}
		pairs := func(k string) []abi.Pair {
			t, _ := m[k].(map[string]any)
			var out []abi.Pair
			for _, name := range slices.Sorted(maps.Keys(t)) {
				s, _ := t[name].(string)
				out = append(out, abi.Pair{Name: name, Value: s})
			}
			return out
		}
		e.command, e.url, e.cwd = str("command"), str("url"), str("cwd")
		e.args, e.env, e.headers = list("args"), pairs("env"), pairs("http_headers")
		if b, ok := m["enabled"].(bool); ok {
			e.enabled = &b
		}
		if _, ok := m["enabled_tools"]; ok {
			e.hasEnabledTools, e.enabledTools = true, orEmpty(list("enabled_tools"))
		}
		out = append(out, e)
	}
	return out, nil
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

// pairsString shows pairs for a failure message with every secret value masked.
func pairsString(ps []abi.Pair, v interface{ Redactions() []string }) string {
	mask := v.Redactions()
	var b strings.Builder
	b.WriteByte('[')
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(' ')
		}
		val := p.Value
		for _, m := range mask {
			val = strings.ReplaceAll(val, m, "********")
		}
		fmt.Fprintf(&b, "%s=%q", p.Name, val)
	}
	b.WriteByte(']')
	return b.String()
}
