package plan

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
	"github.com/loadout-dev/loadout/sdk/valuesyntax"
)

// pathRule allows one path (pattern without "**"), everything under a directory ("dir/**") or
// everything ("**") under a root.
type pathRule struct {
	root, pattern string
}

func (r pathRule) match(root, p string) bool {
	if r.root != root {
		return false
	}
	switch {
	case r.pattern == "**":
		return true
	case strings.HasSuffix(r.pattern, "/**"):
		return strings.HasPrefix(p, strings.TrimSuffix(r.pattern, "**"))
	}
	return p == r.pattern
}

// configFile is where a built-in harness's MCP configuration lives.
type configFile struct {
	root, path, format string
}

// harness holds what Check knows about one harness, compiled from its Profile: the paths it
// may write, its config file and how to read it back, what each server key means, and its
// argument rules.
type harness struct {
	// prompt spells tools in the prompt; nil: by their names.
	prompt *ProfilePrompt
	// hiddenDirs are the hidden first segments a plan may write under the config root.
	hiddenDirs map[string]bool
	paths      []pathRule
	config     configFile
	serverKeys map[string]string      // key -> meaning (ServerKeyMeanings)
	oauthKeys  map[string]string      // key inside the oauth object -> meaning (OAuthKeyMeanings)
	topKeys    map[string]bool        // boolean top-level keys besides the servers table
	pinned     map[string]pinnedValue // top-level keys the config must carry, with their values
	serversKey string
	typed      bool // the config has a type key per server
	// httpNeedsType: an http server must carry its type key.
	httpNeedsType bool
	// timeoutUnit is the unit of the keys meaning timeout ("s" or "ms"); "" when the profile
	// does not say, and a rendered timeout is then only checked to be positive.
	timeoutUnit string
	// timeoutMin and timeoutMax bound the timeouts the harness honours, in timeoutUnit (0: no
	// bound): the only values a vetted timeout may be adjusted to.
	timeoutMin, timeoutMax float64
	// toolsInArgs: tool restrictions travel as tool rules in the args, not in the config;
	// exposureTools: as exposure hidden plus the exposed tools; requireAllowList: a restricted
	// server must carry its allowTools key.
	toolsInArgs, exposureTools, requireAllowList bool
	// args and env are exactly what a plugin may return on the harness's command line and in
	// its environment (argsenv.go); builtinTools are the harness's own tools, which an
	// --allowedTools list may name besides the vetted servers' rules.
	args         []argRule
	env          []envRule
	builtinTools []string
	// syntax is how the harness expands its config's strings (valueSyntax); a literal one
	// expands nothing.
	syntax *valuesyntax.Syntax
	// argPasses and envPasses count its passes over a stdio server's command, args and cwd,
	// and over an env value.
	argPasses, envPasses int
	// literal spells a stdio server's command, args and cwd so that the harness passes them on
	// unchanged (Claude expands ${NAME} in them).
	literal func(string) string
	// value returns what the harness makes of an env value of its config (Claude expands
	// ${NAME}, Pi $NAME and a leading "!"), and false when it would not give a literal.
	value func(string) (string, bool)
	// header is value for a header value, url for an http server's url (each position is
	// expanded as many times as the profile's passes say).
	header, url func(string) (string, bool)
	// readLiteral reverses literal: what the harness makes of a string literal wrote (a
	// description), and false when it is not a spelling literal produces.
	readLiteral func(string) (string, bool)
	// spellEnvSecret and spellHeaderSecret spell a secret value of an env or header value for
	// the config file so that the harness reads it back unchanged (materialize applies them
	// when it substitutes the secret); nil: no spelling.
	spellEnvSecret, spellHeaderSecret func(string) string
	// skills is where the harness installs skills (skills.go); nil: it has none.
	skills *skillsLayout
	// spawn is how the harness's renderer wraps a stdio server in env -i (docs/SPAWN-ENV.md).
	spawn *spawnStyle
}

func setOf(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// located is one string of a rendered server with where it sits (field, key).
type located struct {
	field, key, s string
}

// rendered is one server entry read back from a harness config.
type rendered struct {
	id                     string
	loc                    string
	typ, command, url, cwd *string
	description            *string
	args                   []string
	hasArgs                bool
	env, headers           []abi.Pair
	hasEnv, hasHeaders     bool
	hasEnvVars             bool
	enabled                *bool
	enabledTools           []string
	hasEnabledTools        bool
	deniedTools            []string
	hasDeniedTools         bool
	exposure               *string
	toolExposure           []abi.Pair
	timeouts               []float64 // every key meaning timeout, as numbers
	strs                   []located
	// oauth holds the keys meaning oauth, oauthScopes, lifecycle and idleTimeout (oauth.go).
	oauth renderedOAuth
}

func strp(s string) *string { return &s }

// checkConfig parses the built-in harness's config file back and compares it with the vetted
// request.
func (c *checker) checkConfig(p *abi.Plan) {
	h := c.h
	cf := h.config
	name := cf.root + ":" + cf.path
	var file *abi.File
	for i := range p.Files {
		if p.Files[i].Root == cf.root && p.Files[i].Path == cf.path {
			file = &p.Files[i]
			break
		}
	}
	var servers []rendered
	var top []located
	ok := true
	if file != nil {
		if file.Format != cf.format {
			c.add(name, "format", RuleConfigMissing, "format %q, want %s", truncate(file.Format, 16), cf.format)
			return
		}
		if len(file.Content) > c.lim.MaxFileBytes {
			return
		}
		if cf.format == abi.FormatJSON {
			servers, top, ok = c.readJSONConfig(name, file.Content)
		} else {
			servers, top, ok = c.readTOMLConfig(name, file.Content)
		}
		if !ok {
			return
		}
	}
	for _, l := range top {
		for _, o := range Scan(l.s) {
			if o.Kind == KindSecret {
				c.add(name, l.field, RuleSecretPlacement, "secret placeholder %s outside any server", o.Text)
			}
		}
	}
	c.compareServers(name, p.Warnings, servers)
}

func (c *checker) readJSONConfig(name, content string) ([]rendered, []located, bool) {
	h := c.h
	v, err := ParseJSON([]byte(content))
	if err != nil {
		return nil, nil, false // reported by checkContent
	}
	if v.Kind != Object {
		c.add(name, "", RuleConfigKey, "config is a %s, want an object", v.Kind)
		return nil, nil, false
	}
	var servers []rendered
	var top []located
	found := false
	for _, m := range v.Members {
		switch {
		case m.Name == h.serversKey:
			found = true
			if m.Value.Kind != Object {
				c.add(name, m.Name, RuleConfigKey, "%s is a %s, want an object", m.Name, m.Value.Kind)
				return nil, nil, false
			}
			for _, sm := range m.Value.Members {
				servers = append(servers, c.readJSONServer(name, h.serversKey+"."+sm.Name, sm.Name, sm.Value))
			}
		case h.topKeys[m.Name]:
			if m.Value.Kind != Bool {
				c.add(name, m.Name, RuleConfigKey, "%s is a %s, want a boolean", m.Name, m.Value.Kind)
			}
		case h.pinned[m.Name].value != nil:
			if pin := h.pinned[m.Name]; !equalValue(m.Value, pin.value) {
				c.add(name, m.Name, RuleConfigKey, "%s must be exactly %s, as the profile pins it", m.Name, pin.text)
			}
		default:
			c.add(name, joinPath("", m.Name), RuleConfigKey, "top-level key %q is not allowed", truncate(m.Name, 64))
			for _, s := range jsonStrings(m.Value) {
				top = append(top, located{field: m.Name, s: s})
			}
		}
	}
	if !found {
		c.add(name, h.serversKey, RuleConfigKey, "config has no %s object", h.serversKey)
	}
	for _, key := range slices.Sorted(maps.Keys(h.pinned)) {
		if !slices.ContainsFunc(v.Members, func(m Member) bool { return m.Name == key }) {
			c.add(name, key, RuleConfigKey, "config lacks %s, which the profile pins to %s", key, h.pinned[key].text)
		}
	}
	return servers, top, true
}

func (c *checker) readJSONServer(name, loc, id string, v *Value) rendered {
	r := rendered{id: id, loc: loc}
	r.strs = append(r.strs, located{field: "id", s: id})
	if v.Kind != Object {
		c.add(name, loc, RuleServerMismatch, "server entry is a %s, want an object", v.Kind)
		return r
	}
	bad := func(key string, want string, got Kind) {
		c.add(name, loc+"."+key, RuleServerMismatch, "%s is a %s, want %s", key, got, want)
	}
	pairs := func(key string, x *Value) []abi.Pair {
		if x.Kind != Object {
			bad(key, "an object", x.Kind)
			return nil
		}
		var out []abi.Pair
		for _, m := range x.Members {
			r.strs = append(r.strs, located{field: key, key: m.Name, s: m.Name})
			if m.Value.Kind != String {
				bad(key+"."+m.Name, "a string", m.Value.Kind)
				continue
			}
			r.strs = append(r.strs, located{field: key, key: m.Name, s: m.Value.Str})
			out = append(out, abi.Pair{Name: m.Name, Value: m.Value.Str})
		}
		return out
	}
	strList := func(key string, x *Value) []string {
		if x.Kind != Array {
			bad(key, "an array", x.Kind)
			return nil
		}
		out := []string{}
		for _, it := range x.Items {
			if it.Kind != String {
				bad(key+"[]", "a string", it.Kind)
				continue
			}
			r.strs = append(r.strs, located{field: key, s: it.Str})
			out = append(out, it.Str)
		}
		return out
	}
	for _, m := range v.Members {
		key, x := m.Name, m.Value
		meaning := c.h.keyMeaning(key)
		switch meaning {
		case "":
			c.add(name, loc+"."+key, RuleConfigKey, "server key %q is not allowed", truncate(key, 64))
			for _, s := range jsonStrings(x) {
				r.strs = append(r.strs, located{field: key, s: s})
			}
		case "type", "command", "url", "cwd", "description", "exposure":
			if x.Kind != String {
				bad(key, "a string", x.Kind)
				continue
			}
			r.strs = append(r.strs, located{field: meaning, s: x.Str})
			r.setString(meaning, x.Str)
		case "args":
			r.hasArgs = true
			r.args = strList(meaning, x)
		case "allowTools":
			r.hasEnabledTools = true
			r.enabledTools = strList(key, x)
		case "denyTools":
			r.hasDeniedTools = true
			r.deniedTools = strList(key, x)
		case "envPassthrough":
			r.hasEnvVars = true
			c.checkEnvVars(name, loc, id, strList(key, x))
		case "env":
			r.hasEnv = true
			r.env = pairs(meaning, x)
		case "headers":
			r.hasHeaders = true
			r.headers = pairs(meaning, x)
		case "toolExposure":
			r.toolExposure = pairs(meaning, x)
		case "enabled":
			if x.Kind != Bool {
				bad(key, "a boolean", x.Kind)
				continue
			}
			b := x.Bool
			r.enabled = &b
		case "timeout":
			n, err := strconv.ParseFloat(x.Number, 64)
			if x.Kind != Number || err != nil || !(n > 0) {
				c.add(name, loc+"."+key, RuleServerMismatch, "%s must be a positive number", key)
				break
			}
			r.timeouts = append(r.timeouts, n)
		case "oauth":
			c.readJSONOAuth(name, loc, &r, key, x)
		case "oauthScopes":
			for _, s := range jsonStrings(x) {
				r.strs = append(r.strs, located{field: "oauth", key: key, s: s})
			}
			c.readJSONScopes(name, loc+"."+key, &r, x)
		case "oauthClientId":
			if x.Kind != String {
				bad(key, "a string", x.Kind)
				continue
			}
			r.strs = append(r.strs, located{field: "oauth", key: key, s: x.Str})
			r.oauth.clientID = strp(x.Str)
		case "lifecycle":
			if x.Kind != String {
				bad(key, "a string", x.Kind)
				continue
			}
			r.strs = append(r.strs, located{field: meaning, s: x.Str})
			r.oauth.lifecycle = strp(x.Str)
		case "idleTimeout":
			if x.Kind != Number {
				bad(key, "a number", x.Kind)
				continue
			}
			r.oauth.idleTimeout = strp(x.Number)
		}
	}
	return r
}

// setString records a string-valued key of a rendered server by its meaning.
func (r *rendered) setString(meaning, s string) {
	switch meaning {
	case "type":
		r.typ = strp(s)
	case "command":
		r.command = strp(s)
	case "url":
		r.url = strp(s)
	case "cwd":
		r.cwd = strp(s)
	case "description":
		r.description = strp(s)
	case "exposure":
		r.exposure = strp(s)
	}
}

func (c *checker) readTOMLConfig(name, content string) ([]rendered, []located, bool) {
	h := c.h
	doc, err := ParseTOML(content)
	if err != nil {
		return nil, nil, false // reported by checkContent
	}
	var top []located
	for k, v := range doc.Map {
		if k == h.serversKey {
			continue
		}
		c.add(name, k, RuleConfigKey, "top-level key %q is not allowed", truncate(k, 64))
		for _, s := range tomlStrings(&TOMLDoc{Map: map[string]any{k: v}}) {
			top = append(top, located{field: k, s: s})
		}
	}
	sort.Slice(top, func(i, j int) bool { return top[i].field < top[j].field })
	table, _ := doc.Map[h.serversKey].(map[string]any)
	if raw, present := doc.Map[h.serversKey]; present && table == nil {
		c.add(name, h.serversKey, RuleConfigKey, "%s is a %T, want a table", h.serversKey, raw)
		return nil, top, true
	}
	var order []string
	seen := map[string]bool{}
	for _, k := range doc.Keys {
		if len(k) >= 2 && k[0] == h.serversKey && !seen[k[1]] {
			seen[k[1]] = true
			order = append(order, k[1])
		}
	}
	for id := range table {
		if !seen[id] { // not reported by Keys: keep it, after the ordered ones
			seen[id] = true
			order = append(order, id)
		}
	}
	var servers []rendered
	for _, id := range order {
		loc := h.serversKey + "." + strconv.Quote(id)
		servers = append(servers, c.readTOMLServer(name, loc, id, table[id]))
	}
	return servers, top, true
}

func (c *checker) readTOMLServer(name, loc, id string, v any) rendered {
	r := rendered{id: id, loc: loc}
	r.strs = append(r.strs, located{field: "id", s: id})
	m, ok := v.(map[string]any)
	if !ok {
		c.add(name, loc, RuleServerMismatch, "server entry is a %T, want a table", v)
		return r
	}
	bad := func(key, want string, got any) {
		c.add(name, loc+"."+key, RuleServerMismatch, "%s is a %T, want %s", key, got, want)
	}
	strList := func(key string, x any) ([]string, bool) {
		list, ok := x.([]any)
		if !ok {
			bad(key, "an array", x)
			return nil, false
		}
		out := []string{}
		for _, it := range list {
			s, ok := it.(string)
			if !ok {
				bad(key+"[]", "a string", it)
				return nil, false
			}
			r.strs = append(r.strs, located{field: key, s: s})
			out = append(out, s)
		}
		return out, true
	}
	pairs := func(key string, x any) []abi.Pair {
		t, ok := x.(map[string]any)
		if !ok {
			bad(key, "a table", x)
			return nil
		}
		names := make([]string, 0, len(t))
		for k := range t {
			names = append(names, k)
		}
		sort.Strings(names)
		var out []abi.Pair
		for _, k := range names {
			r.strs = append(r.strs, located{field: key, key: k, s: k})
			s, ok := t[k].(string)
			if !ok {
				bad(key+"."+k, "a string", t[k])
				continue
			}
			r.strs = append(r.strs, located{field: key, key: k, s: s})
			out = append(out, abi.Pair{Name: k, Value: s})
		}
		return out
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, key := range names {
		x := m[key]
		meaning := c.h.keyMeaning(key)
		switch meaning {
		case "":
			c.add(name, loc+"."+key, RuleConfigKey, "server key %q is not allowed", truncate(key, 64))
			for _, s := range tomlStrings(&TOMLDoc{Map: map[string]any{key: x}}) {
				r.strs = append(r.strs, located{field: key, s: s})
			}
		case "type", "command", "url", "cwd", "description", "exposure":
			s, ok := x.(string)
			if !ok {
				bad(key, "a string", x)
				continue
			}
			r.strs = append(r.strs, located{field: meaning, s: s})
			r.setString(meaning, s)
		case "args":
			r.hasArgs = true
			r.args, _ = strList(meaning, x)
		case "allowTools":
			r.hasEnabledTools = true
			r.enabledTools, _ = strList(key, x)
		case "denyTools":
			r.hasDeniedTools = true
			r.deniedTools, _ = strList(key, x)
		case "toolExposure":
			r.toolExposure = pairs(meaning, x)
		case "envPassthrough":
			r.hasEnvVars = true
			if list, ok := strList(key, x); ok {
				r.strs = r.strs[:len(r.strs)-len(list)]
				for _, s := range list {
					r.strs = append(r.strs, located{field: key, s: s})
				}
				c.checkEnvVars(name, loc, id, list)
			}
		case "env":
			r.hasEnv = true
			r.env = pairs("env", x)
		case "headers":
			r.hasHeaders = true
			r.headers = pairs("headers", x)
		case "enabled":
			b, ok := x.(bool)
			if !ok {
				bad(key, "a boolean", x)
				continue
			}
			r.enabled = &b
		case "timeout":
			switch n := x.(type) {
			case int64:
				if n <= 0 {
					c.add(name, loc+"."+key, RuleServerMismatch, "%s must be positive", key)
					break
				}
				r.timeouts = append(r.timeouts, float64(n))
			case float64:
				if !(n > 0) {
					c.add(name, loc+"."+key, RuleServerMismatch, "%s must be positive", key)
					break
				}
				r.timeouts = append(r.timeouts, n)
			default:
				bad(key, "a number", x)
			}
		case "oauth":
			c.readTOMLOAuth(name, loc, &r, key, x)
		case "oauthScopes":
			for _, s := range tomlStrings(&TOMLDoc{Map: map[string]any{key: x}}) {
				r.strs = append(r.strs, located{field: "oauth", key: key, s: s})
			}
			c.readTOMLScopes(name, loc+"."+key, &r, x)
		case "oauthClientId":
			s, ok := x.(string)
			if !ok {
				bad(key, "a string", x)
				continue
			}
			r.strs = append(r.strs, located{field: "oauth", key: key, s: s})
			r.oauth.clientID = strp(s)
		case "lifecycle":
			s, ok := x.(string)
			if !ok {
				bad(key, "a string", x)
				continue
			}
			r.strs = append(r.strs, located{field: meaning, s: s})
			r.oauth.lifecycle = strp(s)
		case "idleTimeout":
			switch n := x.(type) {
			case int64:
				r.oauth.idleTimeout = strp(strconv.FormatInt(n, 10))
			case float64:
				r.oauth.idleTimeout = strp(strconv.FormatFloat(n, 'g', -1, 64))
			default:
				bad(key, "a number", x)
			}
		}
	}
	return r
}

// checkEnvVars allows pass-through variable names (a key meaning envPassthrough) only for the
// server's vetted host env.
func (c *checker) checkEnvVars(name, loc, id string, list []string) {
	v, ok := c.vetted(id)
	if !ok {
		return
	}
	for _, n := range list {
		if !slices.ContainsFunc(v.HostEnv, func(p abi.Pair) bool { return p.Name == n }) {
			c.add(name, loc, RuleServerMismatch, "passes through %q, which is not in the server's vetted host env", truncate(n, 64))
		}
	}
}

func (c *checker) vetted(id string) (abi.Server, bool) {
	for _, s := range c.in.Request.Servers {
		if s.ID == id {
			return s, true
		}
	}
	return abi.Server{}, false
}

// compareServers checks the set, order and content of the rendered servers against the vetted
// request, and that every secret placeholder sits exactly where the vetted request put it.
func (c *checker) compareServers(name string, warnings []abi.Warning, rs []rendered) {
	index := map[string]int{}
	for i, s := range c.in.Request.Servers {
		if _, dup := index[s.ID]; !dup {
			index[s.ID] = i
		}
	}
	warned := map[string]bool{}
	c.warnCodes = map[string]map[string]bool{}
	for _, w := range warnings {
		if w.Server != "" {
			warned[w.Server] = true
			if c.warnCodes[w.Server] == nil {
				c.warnCodes[w.Server] = map[string]bool{}
			}
			c.warnCodes[w.Server][w.Code] = true
		}
	}
	c.warned = warned
	present := map[string]bool{}
	last := -1
	c.renderedIDs = []string{}
	folded := map[string]string{}
	for _, r := range rs {
		c.renderedIDs = append(c.renderedIDs, r.id)
		if cf := &c.in.Profile.Config; cf.NamesFold != "" {
			if other, dup := folded[cf.FoldName(r.id)]; dup {
				c.add(name, r.loc, RuleServerSet, "harness %q reads server %q as %q, rendered before it (config.namesFold %q)",
					c.in.Manifest.Harness, truncate(r.id, 64), truncate(other, 64), cf.NamesFold)
			} else {
				folded[cf.FoldName(r.id)] = r.id
			}
		}
		i, ok := index[r.id]
		if !ok {
			c.add(name, r.loc, RuleServerSet, "server %q is not in the vetted request", truncate(r.id, 64))
			c.secretPlacement(name, r, nil)
			continue
		}
		present[r.id] = true
		c.offered[r.id] = true
		if i < last {
			c.add(name, r.loc, RuleServerSet, "server %q is out of request order", r.id)
		}
		last = max(last, i)
		v := c.in.Request.Servers[i]
		c.compareServer(name, &r, v)
		if c.h.toolsInArgs && v.ToolsRestricted && !c.allowedToolsFlag {
			c.add("", "args", RuleToolRestrictions, "server %q restricts its tools but there is no %s", v.ID, c.in.Profile.ToolsFlag())
		}
		c.secretPlacement(name, r, &v)
	}
	for _, v := range c.in.Request.Servers {
		if !present[v.ID] && v.Enabled && !warned[v.ID] {
			c.add(name, c.h.serversKey, RuleServerSet, "vetted server %q is missing and no warning names it", v.ID)
		}
	}
}

func pairValue(ps []abi.Pair, name string) (string, bool) {
	for i := len(ps) - 1; i >= 0; i-- {
		if ps[i].Name == name {
			return ps[i].Value, true
		}
	}
	return "", false
}

// compareServer compares one rendered server with its vetted definition. A stdio server of a
// harness with a spawn style must be rendered through the env wrapper (checkSpawn, which
// relocates r.strs); one of a harness without may only be rendered verbatim.
func (c *checker) compareServer(name string, r *rendered, v abi.Server) {
	mismatch := func(field, format string, args ...any) {
		c.add(name, r.loc+"."+c.h.keyOf(field), RuleServerMismatch, format, args...)
	}
	if r.enabled != nil && *r.enabled != v.Enabled {
		mismatch("enabled", "enabled is %t, the vetted server's is %t", *r.enabled, v.Enabled)
	}
	if !v.Enabled && r.enabled == nil {
		mismatch("enabled", "the vetted server is disabled but is rendered without %s set to false", c.h.keyOf("enabled"))
	}
	switch v.Transport {
	case abi.TransportStdio:
		if c.h.typed && r.typ != nil && *r.typ != "stdio" {
			mismatch("type", "type %q, want stdio", truncate(*r.typ, 32))
		}
		if r.url != nil || r.hasHeaders {
			mismatch("url", "a stdio server may not have a url or headers")
		}
		command, args := c.h.literal(v.Command), make([]string, len(v.Args))
		for i, a := range v.Args {
			args[i] = c.h.literal(a)
		}
		if c.h.spawn != nil {
			// The harness hands its own environment (API keys included) to a server it starts
			// directly: the env wrapper is the only accepted launch (docs/SPAWN-ENV.md).
			if r.command == nil || *r.command != spawnCommand {
				c.add(name, r.loc+".command", RuleSpawnWrapper, "a stdio server of harness %q must be launched through %s -i (the harness passes its environment to the servers it starts)", c.in.Manifest.Harness, spawnCommand)
				break
			}
			c.checkSpawn(name, r, v)
			if r.cwd != nil && (v.Cwd == "" || *r.cwd != v.Cwd) {
				mismatch("cwd", "cwd differs from the vetted one")
			}
			break
		}
		if r.command == nil || *r.command != command {
			mismatch("command", "command differs from the vetted one")
		}
		if !slices.Equal(r.args, args) {
			mismatch("args", "args differ from the vetted ones")
		}
		for _, p := range r.env {
			want, ok := pairValue(v.Env, p.Name)
			if !ok {
				want, ok = pairValue(v.HostEnv, p.Name)
			}
			got, literal := c.h.value(p.Value)
			switch {
			case !ok:
				mismatch("env", "env %q is not in the vetted server", truncate(p.Name, 64))
			case !literal:
				mismatch("env", "env %q holds what harness %q would expand or run", p.Name, c.in.Manifest.Harness)
			case got != want:
				mismatch("env", "env %q differs from the vetted value", p.Name)
			}
		}
		for _, p := range v.Env {
			if _, ok := pairValue(r.env, p.Name); !ok {
				mismatch("env", "vetted env %q is missing", p.Name)
			}
		}
		if r.cwd != nil && (v.Cwd == "" || *r.cwd != v.Cwd) {
			mismatch("cwd", "cwd differs from the vetted one")
		}
	case abi.TransportHTTP:
		if c.h.typed && r.typ == nil && c.h.httpNeedsType {
			mismatch("type", "an http server needs type \"http\"")
		}
		if r.typ != nil && *r.typ != "http" && *r.typ != "streamable-http" {
			mismatch("type", "type %q, want http", truncate(*r.typ, 32))
		}
		if r.command != nil || r.hasArgs || r.hasEnv || r.cwd != nil {
			mismatch("command", "an http server may not have a command, args, env or cwd")
		}
		if r.url == nil {
			mismatch("url", "url is missing")
		} else if u, ok := c.h.url(*r.url); !ok || u != v.URL {
			mismatch("url", "url differs from the vetted one")
		}
		for _, p := range r.headers {
			want, ok := pairValue(v.Headers, p.Name)
			got, literal := c.h.header(p.Value)
			switch {
			case !ok:
				mismatch("headers", "header %q is not in the vetted server", truncate(p.Name, 64))
			case !literal:
				mismatch("headers", "header %q holds what harness %q would expand or run", p.Name, c.in.Manifest.Harness)
			case got != want:
				mismatch("headers", "header %q differs from the vetted value", p.Name)
			}
		}
		for _, p := range v.Headers {
			if _, ok := pairValue(r.headers, p.Name); !ok {
				mismatch("headers", "vetted header %q is missing", p.Name)
			}
		}
	default:
		mismatch("transport", "transport %q cannot be rendered", v.Transport)
	}
	c.compareOAuth(name, r, v)
	// The description reaches the model: it may be left out, never changed.
	if r.description != nil {
		if got, ok := c.h.readLiteral(*r.description); !ok || got != v.Description {
			mismatch("description", "description differs from the vetted one")
		}
	}
	c.compareTimeout(name, *r, v)
	c.compareTools(name, *r, v)
}

// compareTimeout checks a rendered timeout against the vetted one, in the profile's unit
// (milliseconds rounded to the nearest one, at least 1). The one difference allowed is the
// vetted timeout brought to the nearest bound of the profile's range (timeoutMin, timeoutMax)
// when it lies outside, and only with a timeout_adjusted warning naming the server: no other
// warning excuses a difference, and no warning excuses a timeout left out or invented.
func (c *checker) compareTimeout(name string, r rendered, v abi.Server) {
	if c.h.timeoutUnit == "" {
		return
	}
	if v.Timeout <= 0 {
		if len(r.timeouts) > 0 {
			c.add(name, r.loc, RuleServerMismatch, "a timeout is rendered; the vetted server sets none")
		}
		return
	}
	want := v.Timeout
	if c.h.timeoutUnit == "ms" {
		want = max(math.Round(want*1000), 1)
	}
	adjusted := want
	if c.h.timeoutMin > 0 {
		adjusted = max(adjusted, c.h.timeoutMin)
	}
	if c.h.timeoutMax > 0 {
		adjusted = min(adjusted, c.h.timeoutMax)
	}
	switch {
	case len(r.timeouts) != 1:
		c.add(name, r.loc, RuleServerMismatch, "the timeout is rendered %d times, want once: %v %s", len(r.timeouts), want, c.h.timeoutUnit)
	case r.timeouts[0] == want:
	case r.timeouts[0] != adjusted && adjusted == want:
		c.add(name, r.loc, RuleServerMismatch, "the timeout is %v, the vetted one is %v %s", r.timeouts[0], want, c.h.timeoutUnit)
	case r.timeouts[0] != adjusted:
		c.add(name, r.loc, RuleServerMismatch, "the timeout is %v, the vetted one is %v %s, which the profile's range allows to be adjusted to %v only", r.timeouts[0], want, c.h.timeoutUnit, adjusted)
	case !c.warnCodes[v.ID][abi.WarnTimeoutAdjusted]:
		c.add(name, r.loc, RuleServerMismatch, "the timeout is %v, the vetted one is %v %s, and no %s warning names the server", r.timeouts[0], want, c.h.timeoutUnit, abi.WarnTimeoutAdjusted)
	}
}

// compareTools checks the tool restriction a config expresses (an allow list, or exposure
// hidden with the exposed tools; a harness whose tool rules travel in its args has neither):
// a restricted server may expose only its vetted allowedTools.
func (c *checker) compareTools(name string, r rendered, v abi.Server) {
	if r.hasEnabledTools {
		for _, t := range r.enabledTools {
			if v.ToolsRestricted && !slices.Contains(c.spellAll(v.AllowedTools), t) {
				c.add(name, r.loc+"."+c.h.keyOf("allowTools"), RuleToolRestrictions, "tool %q is not in the vetted allowedTools", truncate(t, 64))
			}
		}
	}
	if v.ToolsRestricted && !r.hasEnabledTools && c.h.hasMeaning("allowTools") {
		switch {
		case c.h.requireAllowList:
			c.add(name, r.loc, RuleToolRestrictions, "the vetted server restricts its tools but its tool allow list is missing")
		case !c.warned[v.ID]:
			// The profile lets a renderer leave the restriction to the prompt, but never
			// silently: the loss must reach the user as a warning naming the server.
			c.add(name, r.loc, RuleToolRestrictions, "the vetted server restricts its tools but its tool allow list is missing and no warning names the server")
		}
	}
	c.compareDenied(name, r, v)
	if c.h.hasMeaning("toolExposure") {
		for _, p := range r.toolExposure {
			if !validExposure(p.Value) {
				c.add(name, r.loc+"."+c.h.keyOf("toolExposure"), RuleServerMismatch, "exposure %q of %q is not valid", truncate(p.Value, 32), truncate(p.Name, 64))
			}
		}
		if r.exposure != nil && !validExposure(*r.exposure) {
			c.add(name, r.loc+"."+c.h.keyOf("exposure"), RuleServerMismatch, "exposure %q is not valid", truncate(*r.exposure, 32))
		}
		if !v.ToolsRestricted && c.h.exposureTools {
			c.compareExposure(name, r, v)
		}
		if v.ToolsRestricted && c.h.exposureTools {
			if r.exposure == nil || *r.exposure != "hidden" {
				c.add(name, r.loc+"."+c.h.keyOf("exposure"), RuleToolRestrictions, "the vetted server restricts its tools: exposure must be hidden")
			}
			for _, p := range r.toolExposure {
				switch {
				case p.Value == "hidden":
				case !slices.Contains(v.AllowedTools, p.Name):
					c.add(name, r.loc+"."+c.h.keyOf("toolExposure"), RuleToolRestrictions, "tool %q is exposed but not in the vetted allowedTools", truncate(p.Name, 64))
				case vettedExposure(v, p.Name) == "hidden":
					c.add(name, r.loc+"."+c.h.keyOf("toolExposure"), RuleToolRestrictions, "tool %q is exposed but the vetted toolExposure hides it", truncate(p.Name, 64))
				}
			}
		}
	}
}

// compareDenied checks that the server denies exactly the tools the vetted server does (the
// ones its exposure hides on a harness without exposure, host/exposure), in the harness's deny
// list: a config key meaning denyTools, whose entries must read back as the vetted names, or
// the rules of the deny flag. A harness without either cannot hide a tool.
func (c *checker) compareDenied(name string, r rendered, v abi.Server) {
	switch {
	case c.h.hasMeaning("denyTools"):
		got := make([]string, 0, len(r.deniedTools))
		for _, t := range r.deniedTools {
			lit, ok := c.in.Profile.ReadLiteral(t)
			if !ok {
				c.add(name, r.loc+"."+c.h.keyOf("denyTools"), RuleToolRestrictions, "deny entry %q is not a spelling harness %q reads back as a tool name", truncate(t, 64), c.in.Manifest.Harness)
				continue
			}
			got = append(got, lit)
		}
		if want := c.spellAll(v.DeniedTools); !slices.Equal(got, want) && (len(got) > 0 || len(want) > 0) {
			c.add(name, r.loc+"."+c.h.keyOf("denyTools"), RuleToolRestrictions, "the tool deny list is %q; the vetted server denies exactly %q", truncateAll(got), want)
		}
	case c.in.Profile.DenyFlag() != "":
		flag := c.in.Profile.DenyFlag()
		for _, t := range v.DeniedTools {
			if !c.denyRules[c.in.Profile.ToolRule(v.ID, t)] {
				c.add("", "args", RuleToolRestrictions, "server %q denies tool %q but %s does not name it", v.ID, truncate(t, 64), flag)
			}
		}
	case len(v.DeniedTools) > 0:
		c.add(name, r.loc, RuleToolRestrictions, "the vetted server denies tools %q but harness %q has no deny list", v.DeniedTools, c.in.Manifest.Harness)
	}
}

// compareExposure checks the exposure of a server the request does not restrict, on a harness
// that renders exposure itself: the same server exposure (none rendered means the harness's
// default, allowed only when the request gives none) and exactly the same tool entries.
func (c *checker) compareExposure(name string, r rendered, v abi.Server) {
	got := ""
	if r.exposure != nil {
		got = canonicalExposure(*r.exposure)
	}
	if got != canonicalExposure(v.Exposure) {
		c.add(name, r.loc+"."+c.h.keyOf("exposure"), RuleToolRestrictions, "exposure %q differs from the vetted %q", truncate(got, 32), v.Exposure)
	}
	want := make(map[string]string, len(v.ToolExposure))
	for _, p := range v.ToolExposure {
		want[p.Name] = canonicalExposure(p.Value)
	}
	same := len(r.toolExposure) == len(want)
	for i := 0; same && i < len(r.toolExposure); i++ {
		w, ok := want[r.toolExposure[i].Name]
		same = ok && canonicalExposure(r.toolExposure[i].Value) == w
	}
	if !same {
		c.add(name, r.loc+"."+c.h.keyOf("toolExposure"), RuleToolRestrictions, "toolExposure differs from the vetted server's")
	}
}

// vettedExposure is the exposure the vetted server gives tool: its exact toolExposure entry,
// else the first matching pattern, else the server's exposure.
func vettedExposure(v abi.Server, tool string) string {
	if e, ok := format.ToolExposure(v.ToolExposure, tool); ok {
		return e
	}
	return v.Exposure
}

// canonicalExposure maps the alias codemode-deferred to codemode.
func canonicalExposure(s string) string {
	if s == "codemode-deferred" {
		return "codemode"
	}
	return s
}

func truncateAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = truncate(s, 64)
	}
	return out
}

func validExposure(s string) bool {
	switch s {
	case "direct", "deferred", "codemode", "codemode-deferred", "hidden":
		return true
	}
	return false
}

// secretPlacement reports every secret placeholder in a rendered server that is not at the
// server, field and key the vetted request gave it (v nil: the server was never vetted).
func (c *checker) secretPlacement(name string, r rendered, v *abi.Server) {
	for _, l := range r.strs {
		for _, o := range Scan(l.s) {
			if o.Kind != KindSecret {
				continue
			}
			uses, known := c.secrets[o.Text]
			if !known {
				continue // reported as an unknown placeholder
			}
			// A value two servers share has one placeholder and one use per place.
			s := uses[0]
			placed := false
			for _, u := range uses {
				if v != nil && u.Server == r.id && u.Field == l.field && u.Key == l.key && l.s != l.key {
					placed = true
				}
				if u.Server == r.id {
					s = u
				}
			}
			if !placed {
				where := l.field
				if l.key != "" {
					where += " " + strconv.Quote(l.key)
				}
				c.add(name, r.loc, RuleSecretPlacement, "secret placeholder %s is at server %q %s; the vetted request put it at server %q %s %q",
					o.Text, truncate(r.id, 64), where, s.Server, s.Field, s.Key)
			}
		}
	}
}

// equalValue reports whether a and b are the same JSON value: objects compare member by member
// whatever their order (a parsed object has no duplicate names), numbers by their literal text.
func equalValue(a, b *Value) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case Bool:
		return a.Bool == b.Bool
	case Number:
		return a.Number == b.Number
	case String:
		return a.Str == b.Str
	case Array:
		return slices.EqualFunc(a.Items, b.Items, equalValue)
	case Object:
		if len(a.Members) != len(b.Members) {
			return false
		}
		for _, m := range a.Members {
			i := slices.IndexFunc(b.Members, func(n Member) bool { return n.Name == m.Name })
			if i < 0 || !equalValue(m.Value, b.Members[i].Value) {
				return false
			}
		}
	}
	return true
}
