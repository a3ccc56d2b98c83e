// Package readback reads a written harness config (JSON or TOML) back through the harness's
// profile (sdk/profile): the server entries it holds, each key read by the meaning the profile
// gives it, and every violation of the profile's layout found on the way (a key the profile
// does not list, a value of the wrong type, a duplicate key, a pinned key missing or changed).
// It compares nothing with a request: it says what the harness will find in the file.
//
// It is the one reader of a config: the host's plan check (host/plan) reads a plan's config
// through it before comparing it with the vetted request, loadout render's text output
// (cmd/loadout) and the conformity runner read written files with it, and the renderers' tests
// (sdk/format/formattest) read their plans with it. It is for tests and the host, not for a
// plugin's renderer: a plugin writes configs, it never reads one back. It holds the strict JSON
// parser (ParseJSON: no duplicate member names, valid UTF-8, bounded nesting) and the TOML one
// (ParseTOML, BurntSushi/toml). Every function is pure and safe for concurrent use.
package readback

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/profile"
)

// Rule codes of a Violation, the plan check's own (host/plan's Rule constants of these names).
const (
	RuleContent        = "content"         // the file does not parse as its format
	RuleConfigKey      = "config_key"      // a key the profile does not allow, or one of the wrong type at the top
	RuleServerMismatch = "server_mismatch" // a server key of the wrong type or value
)

// Violation is one way a config breaks its profile's layout.
type Violation struct {
	Loc  string // where in the config, e.g. mcpServers.a.env.K; empty for the file
	Rule string // one of the Rule* constants
	Msg  string
}

func (v *Violation) Error() string {
	if v.Loc == "" {
		return v.Rule + ": " + v.Msg
	}
	return v.Loc + ": " + v.Rule + ": " + v.Msg
}

// Server is one server entry of a written config as read back: what each key holds, by the
// meaning the profile gives it, the strings as written (read them as the harness does with the
// profile's ReadLiteral, ReadValue, ReadHeader and ReadURL). A nil pointer or a false Has* is a
// key the entry does not carry.
type Server struct {
	ID string
	// Loc is where the entry sits in the config (servers key, then its id).
	Loc                                            string
	Type, Command, URL, Cwd, Description, Exposure *string
	Args                                           []string
	HasArgs                                        bool
	Env, Headers, ToolExposure                     []Pair
	HasEnv, HasHeaders                             bool
	Enabled                                        *bool
	AllowTools                                     []string
	HasAllowTools                                  bool
	DenyTools                                      []string
	HasDenyTools                                   bool
	// EnvPassthrough are the names of a key meaning envPassthrough.
	EnvPassthrough    []string
	HasEnvPassthrough bool
	// Timeouts are the values of every key meaning timeout, in the profile's unit.
	Timeouts []float64
	// OAuth is what the keys meaning oauth, oauthClientId and oauthScopes hold.
	OAuth OAuth
	// Lifecycle and IdleTimeout are the keys meaning lifecycle and idleTimeout, as written.
	Lifecycle, IdleTimeout *string
	// Strings are every string of the entry (its id, keys of its maps, values) with where it
	// sits: what a secret placeholder's place is read from.
	Strings []Located
}

// Pair is a name and a value of a server entry's map (env, headers, toolExposure), in file
// order (a TOML table's in key order).
type Pair = abi.Pair

// OAuth is a server's OAuth setting as read back.
type OAuth struct {
	// Present: a key meaning oauth is there (the flat keys set ClientID and Scopes only).
	Present               bool
	ClientID, MetadataURL *string
	CallbackPort          *int64
	Scopes                []string
	HasScopes             bool
}

// Located is one string of a config with where it sits: the meaning (or, for a key the profile
// does not list, the key) of the server key holding it, and the map key it is the value of.
type Located struct {
	Field, Key, S string
}

// Config is a written config as read back.
type Config struct {
	// Servers are the entries of the servers table, in file order (a TOML table's keys in
	// document order).
	Servers []Server
	// Stray are the strings under top-level keys the profile does not allow.
	Stray []Located
}

// Read reads content, a written config (secrets substituted or masked: the layout does not
// depend on them), back through p: its servers in file order, and every violation of p's
// layout, joined (each a *Violation); a content that does not parse is one of RuleContent.
func Read(p *profile.Profile, content string) (Config, error) {
	if p.Config.Servers == "" {
		return Config{}, errors.New("the profile has no config file")
	}
	cfg, vs, ok := Reader{}.Read(p, content)
	if !ok && len(vs) == 0 {
		vs = append(vs, Violation{Rule: RuleContent, Msg: "the file does not parse as " + p.Config.Format})
	}
	errs := make([]error, len(vs))
	for i := range vs {
		errs[i] = &vs[i]
	}
	return cfg, errors.Join(errs...)
}

// Reader reads configs for a checker, which adds its own findings to the reader's in reading
// order. The zero Reader is Read's.
type Reader struct {
	// Passthrough, when set, is called with the names a key meaning envPassthrough holds, as
	// soon as they are read; the violations it returns follow the ones read before them.
	Passthrough func(s *Server, names []string) []Violation
}

// Read reads content back through p, returning the violations in reading order. ok is false
// when content is no config at all: it does not parse (no violation says so: the caller reports
// the parse error) or a JSON config's top level or servers table is not an object (a violation
// says so), or p has no config file.
func (rd Reader) Read(p *profile.Profile, content string) (cfg Config, vs []Violation, ok bool) {
	cf := &p.Config
	if cf.Servers == "" {
		return Config{}, nil, false
	}
	r := &reader{Reader: rd, cf: cf}
	if cf.Format == abi.FormatJSON {
		ok = r.readJSON(content, &cfg)
	} else {
		ok = r.readTOML(content, &cfg)
	}
	return cfg, r.vs, ok
}

// reader is one Read: the profile's config and the violations found so far.
type reader struct {
	Reader
	cf *profile.Config
	vs []Violation
}

func (r *reader) add(loc, rule, format string, args ...any) {
	r.vs = append(r.vs, Violation{Loc: loc, Rule: rule, Msg: fmt.Sprintf(format, args...)})
}

// passthrough runs the caller's hook over a key meaning envPassthrough.
func (r *reader) passthrough(s *Server, names []string) {
	if r.Passthrough != nil {
		r.vs = append(r.vs, r.Passthrough(s, names)...)
	}
}

func strp(s string) *string { return &s }

func (r *reader) readJSON(content string, cfg *Config) bool {
	cf := r.cf
	v, err := ParseJSON([]byte(content))
	if err != nil {
		return false
	}
	if v.Kind != Object {
		r.add("", RuleConfigKey, "config is a %s, want an object", v.Kind)
		return false
	}
	found := false
	for _, m := range v.Members {
		pin, pinned := cf.Pinned[m.Name]
		switch {
		case m.Name == cf.Servers:
			found = true
			if m.Value.Kind != Object {
				r.add(m.Name, RuleConfigKey, "%s is a %s, want an object", m.Name, m.Value.Kind)
				*cfg = Config{}
				return false
			}
			for _, sm := range m.Value.Members {
				cfg.Servers = append(cfg.Servers, r.readJSONServer(cf.Servers+"."+sm.Name, sm.Name, sm.Value))
			}
		case slices.Contains(cf.TopKeys, m.Name):
			if m.Value.Kind != Bool {
				r.add(m.Name, RuleConfigKey, "%s is a %s, want a boolean", m.Name, m.Value.Kind)
			}
		case pinned:
			if want, text := pinnedValue(pin); want == nil || !equalValue(m.Value, want) {
				r.add(m.Name, RuleConfigKey, "%s must be exactly %s, as the profile pins it", m.Name, text)
			}
		default:
			r.add(JoinPath("", m.Name), RuleConfigKey, "top-level key %q is not allowed", truncate(m.Name, 64))
			for _, s := range m.Value.Strings() {
				cfg.Stray = append(cfg.Stray, Located{Field: m.Name, S: s})
			}
		}
	}
	if !found {
		r.add(cf.Servers, RuleConfigKey, "config has no %s object", cf.Servers)
	}
	for _, key := range slices.Sorted(maps.Keys(cf.Pinned)) {
		if !slices.ContainsFunc(v.Members, func(m Member) bool { return m.Name == key }) {
			_, text := pinnedValue(cf.Pinned[key])
			r.add(key, RuleConfigKey, "config lacks %s, which the profile pins to %s", key, text)
		}
	}
	return true
}

// pinnedValue is a value of config.pinned as JSON, parsed, and its text (maps marshal in sorted
// key order); nil for a value JSON cannot hold.
func pinnedValue(v any) (*Value, string) {
	text, err := json.Marshal(v)
	if err != nil {
		return nil, "?"
	}
	value, err := ParseJSON(text)
	if err != nil {
		return nil, string(text)
	}
	return value, string(text)
}

func (r *reader) readJSONServer(loc, id string, v *Value) Server {
	s := Server{ID: id, Loc: loc}
	s.Strings = append(s.Strings, Located{Field: "id", S: id})
	if v.Kind != Object {
		r.add(loc, RuleServerMismatch, "server entry is a %s, want an object", v.Kind)
		return s
	}
	bad := func(key string, want string, got Kind) {
		r.add(loc+"."+key, RuleServerMismatch, "%s is a %s, want %s", key, got, want)
	}
	pairs := func(key string, x *Value) []Pair {
		if x.Kind != Object {
			bad(key, "an object", x.Kind)
			return nil
		}
		var out []Pair
		for _, m := range x.Members {
			s.Strings = append(s.Strings, Located{Field: key, Key: m.Name, S: m.Name})
			if m.Value.Kind != String {
				bad(key+"."+m.Name, "a string", m.Value.Kind)
				continue
			}
			s.Strings = append(s.Strings, Located{Field: key, Key: m.Name, S: m.Value.Str})
			out = append(out, Pair{Name: m.Name, Value: m.Value.Str})
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
			s.Strings = append(s.Strings, Located{Field: key, S: it.Str})
			out = append(out, it.Str)
		}
		return out
	}
	for _, m := range v.Members {
		key, x := m.Name, m.Value
		meaning := r.cf.ServerKeys[key]
		switch meaning {
		case "":
			r.add(loc+"."+key, RuleConfigKey, "server key %q is not allowed", truncate(key, 64))
			for _, str := range x.Strings() {
				s.Strings = append(s.Strings, Located{Field: key, S: str})
			}
		case "type", "command", "url", "cwd", "description", "exposure":
			if x.Kind != String {
				bad(key, "a string", x.Kind)
				continue
			}
			s.Strings = append(s.Strings, Located{Field: meaning, S: x.Str})
			s.setString(meaning, x.Str)
		case "args":
			s.HasArgs = true
			s.Args = strList(meaning, x)
		case "allowTools":
			s.HasAllowTools = true
			s.AllowTools = strList(key, x)
		case "denyTools":
			s.HasDenyTools = true
			s.DenyTools = strList(key, x)
		case "envPassthrough":
			s.HasEnvPassthrough = true
			s.EnvPassthrough = strList(key, x)
			r.passthrough(&s, s.EnvPassthrough)
		case "env":
			s.HasEnv = true
			s.Env = pairs(meaning, x)
		case "headers":
			s.HasHeaders = true
			s.Headers = pairs(meaning, x)
		case "toolExposure":
			s.ToolExposure = pairs(meaning, x)
		case "enabled":
			if x.Kind != Bool {
				bad(key, "a boolean", x.Kind)
				continue
			}
			b := x.Bool
			s.Enabled = &b
		case "timeout":
			n, err := strconv.ParseFloat(x.Number, 64)
			if x.Kind != Number || err != nil || !(n > 0) {
				r.add(loc+"."+key, RuleServerMismatch, "%s must be a positive number", key)
				break
			}
			s.Timeouts = append(s.Timeouts, n)
		case "oauth":
			r.readJSONOAuth(loc, &s, key, x)
		case "oauthScopes":
			for _, str := range x.Strings() {
				s.Strings = append(s.Strings, Located{Field: "oauth", Key: key, S: str})
			}
			r.readJSONScopes(loc+"."+key, &s, x)
		case "oauthClientId":
			if x.Kind != String {
				bad(key, "a string", x.Kind)
				continue
			}
			s.Strings = append(s.Strings, Located{Field: "oauth", Key: key, S: x.Str})
			s.OAuth.ClientID = strp(x.Str)
		case "lifecycle":
			if x.Kind != String {
				bad(key, "a string", x.Kind)
				continue
			}
			s.Strings = append(s.Strings, Located{Field: meaning, S: x.Str})
			s.Lifecycle = strp(x.Str)
		case "idleTimeout":
			if x.Kind != Number {
				bad(key, "a number", x.Kind)
				continue
			}
			s.IdleTimeout = strp(x.Number)
		}
	}
	return s
}

// setString records a string-valued key of a server by its meaning.
func (s *Server) setString(meaning, v string) {
	switch meaning {
	case "type":
		s.Type = strp(v)
	case "command":
		s.Command = strp(v)
	case "url":
		s.URL = strp(v)
	case "cwd":
		s.Cwd = strp(v)
	case "description":
		s.Description = strp(v)
	case "exposure":
		s.Exposure = strp(v)
	}
}

func (r *reader) readTOML(content string, cfg *Config) bool {
	cf := r.cf
	doc, err := ParseTOML(content)
	if err != nil {
		return false
	}
	// Top-level keys in document order (map order would make the violations differ from one
	// read to the next), then any the decoder holds that Keys does not name, sorted.
	var top []string
	named := map[string]bool{}
	for _, k := range doc.Keys {
		if len(k) >= 1 && !named[k[0]] {
			named[k[0]] = true
			top = append(top, k[0])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(doc.Map)) {
		if !named[k] {
			top = append(top, k)
		}
	}
	for _, k := range top {
		v, ok := doc.Map[k]
		if k == cf.Servers || !ok {
			continue
		}
		r.add(k, RuleConfigKey, "top-level key %q is not allowed", truncate(k, 64))
		for _, s := range tomlStrings(map[string]any{k: v}) {
			cfg.Stray = append(cfg.Stray, Located{Field: k, S: s})
		}
	}
	sort.SliceStable(cfg.Stray, func(i, j int) bool { return cfg.Stray[i].Field < cfg.Stray[j].Field })
	table, _ := doc.Map[cf.Servers].(map[string]any)
	if raw, present := doc.Map[cf.Servers]; present && table == nil {
		r.add(cf.Servers, RuleConfigKey, "%s is a %T, want a table", cf.Servers, raw)
		return true
	}
	var order []string
	seen := map[string]bool{}
	for _, k := range doc.Keys {
		if len(k) >= 2 && k[0] == cf.Servers && !seen[k[1]] {
			seen[k[1]] = true
			order = append(order, k[1])
		}
	}
	for _, id := range slices.Sorted(maps.Keys(table)) {
		if !seen[id] { // not reported by Keys: keep it, after the ordered ones, sorted
			seen[id] = true
			order = append(order, id)
		}
	}
	for _, id := range order {
		loc := cf.Servers + "." + strconv.Quote(id)
		cfg.Servers = append(cfg.Servers, r.readTOMLServer(loc, id, table[id]))
	}
	return true
}

func (r *reader) readTOMLServer(loc, id string, v any) Server {
	s := Server{ID: id, Loc: loc}
	s.Strings = append(s.Strings, Located{Field: "id", S: id})
	m, ok := v.(map[string]any)
	if !ok {
		r.add(loc, RuleServerMismatch, "server entry is a %T, want a table", v)
		return s
	}
	bad := func(key, want string, got any) {
		r.add(loc+"."+key, RuleServerMismatch, "%s is a %T, want %s", key, got, want)
	}
	strList := func(key string, x any) ([]string, bool) {
		list, ok := x.([]any)
		if !ok {
			bad(key, "an array", x)
			return nil, false
		}
		out := []string{}
		for _, it := range list {
			str, ok := it.(string)
			if !ok {
				bad(key+"[]", "a string", it)
				return nil, false
			}
			s.Strings = append(s.Strings, Located{Field: key, S: str})
			out = append(out, str)
		}
		return out, true
	}
	pairs := func(key string, x any) []Pair {
		t, ok := x.(map[string]any)
		if !ok {
			bad(key, "a table", x)
			return nil
		}
		var out []Pair
		for _, k := range slices.Sorted(maps.Keys(t)) {
			s.Strings = append(s.Strings, Located{Field: key, Key: k, S: k})
			str, ok := t[k].(string)
			if !ok {
				bad(key+"."+k, "a string", t[k])
				continue
			}
			s.Strings = append(s.Strings, Located{Field: key, Key: k, S: str})
			out = append(out, Pair{Name: k, Value: str})
		}
		return out
	}
	for _, key := range slices.Sorted(maps.Keys(m)) {
		x := m[key]
		meaning := r.cf.ServerKeys[key]
		switch meaning {
		case "":
			r.add(loc+"."+key, RuleConfigKey, "server key %q is not allowed", truncate(key, 64))
			for _, str := range tomlStrings(map[string]any{key: x}) {
				s.Strings = append(s.Strings, Located{Field: key, S: str})
			}
		case "type", "command", "url", "cwd", "description", "exposure":
			str, ok := x.(string)
			if !ok {
				bad(key, "a string", x)
				continue
			}
			s.Strings = append(s.Strings, Located{Field: meaning, S: str})
			s.setString(meaning, str)
		case "args":
			s.HasArgs = true
			s.Args, _ = strList(meaning, x)
		case "allowTools":
			s.HasAllowTools = true
			s.AllowTools, _ = strList(key, x)
		case "denyTools":
			s.HasDenyTools = true
			s.DenyTools, _ = strList(key, x)
		case "toolExposure":
			s.ToolExposure = pairs(meaning, x)
		case "envPassthrough":
			s.HasEnvPassthrough = true
			if list, ok := strList(key, x); ok {
				s.EnvPassthrough = list
				r.passthrough(&s, list)
			}
		case "env":
			s.HasEnv = true
			s.Env = pairs("env", x)
		case "headers":
			s.HasHeaders = true
			s.Headers = pairs("headers", x)
		case "enabled":
			b, ok := x.(bool)
			if !ok {
				bad(key, "a boolean", x)
				continue
			}
			s.Enabled = &b
		case "timeout":
			switch n := x.(type) {
			case int64:
				if n <= 0 {
					r.add(loc+"."+key, RuleServerMismatch, "%s must be positive", key)
					break
				}
				s.Timeouts = append(s.Timeouts, float64(n))
			case float64:
				if !(n > 0) {
					r.add(loc+"."+key, RuleServerMismatch, "%s must be positive", key)
					break
				}
				s.Timeouts = append(s.Timeouts, n)
			default:
				bad(key, "a number", x)
			}
		case "oauth":
			r.readTOMLOAuth(loc, &s, key, x)
		case "oauthScopes":
			for _, str := range tomlStrings(map[string]any{key: x}) {
				s.Strings = append(s.Strings, Located{Field: "oauth", Key: key, S: str})
			}
			r.readTOMLScopes(loc+"."+key, &s, x)
		case "oauthClientId":
			str, ok := x.(string)
			if !ok {
				bad(key, "a string", x)
				continue
			}
			s.Strings = append(s.Strings, Located{Field: "oauth", Key: key, S: str})
			s.OAuth.ClientID = strp(str)
		case "lifecycle":
			str, ok := x.(string)
			if !ok {
				bad(key, "a string", x)
				continue
			}
			s.Strings = append(s.Strings, Located{Field: meaning, S: str})
			s.Lifecycle = strp(str)
		case "idleTimeout":
			switch n := x.(type) {
			case int64:
				s.IdleTimeout = strp(strconv.FormatInt(n, 10))
			case float64:
				s.IdleTimeout = strp(strconv.FormatFloat(n, 'g', -1, 64))
			default:
				bad(key, "a number", x)
			}
		}
	}
	return s
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

// truncate cuts s to at most n bytes at a rune boundary, marking the cut with "…".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
