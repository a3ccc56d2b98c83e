package readback_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/profile"
	"github.com/loadout-dev/loadout/sdk/profile/profileyaml"
	"github.com/loadout-dev/loadout/sdk/profile/readback"
)

func parse(t *testing.T, yaml string) *profile.Profile {
	t.Helper()
	p, err := profileyaml.Parse([]byte(yaml))
	require.NoError(t, err, "parse profile")
	return p
}

const jsonProfile = `harness: x
paths: [{root: config, path: c.json}]
config:
  root: config
  path: c.json
  format: json
  servers: servers
  topKeys: [flag]
  pinned: {lock: {on: true}}
  serverKeys: {command: command, args: args, env: env, url: url, headers: headers, pass: envPassthrough, timeout: timeout, oauth: oauth}
  oauthKeys: {cid: clientId, scopes: scopes}
valueSyntax: literal
tools: {in: config, names: {exact: true}}
`

const tomlProfile = `harness: y
paths: [{root: config, path: c.toml}]
config:
  root: config
  path: c.toml
  format: toml
  servers: s
  serverKeys: {command: command, args: args, env: env, url: url, pass: envPassthrough}
valueSyntax: literal
tools: {in: config, names: {exact: true}}
`

func strp(s string) *string { return &s }

// TestReadJSON: the servers in file order, each key by its meaning, the strings with where they
// sit, and no violation for a config that keeps the layout.
func TestReadJSON(t *testing.T) {
	cfg, err := readback.Read(parse(t, jsonProfile), `{"lock": {"on": true}, "flag": false, "servers": {
		"b": {"command": "c", "args": ["1", "2"], "env": {"Z": "z", "A": "a"}, "timeout": 5},
		"a": {"url": "https://x", "headers": {"H": "{{loadout.secret.1}}"}, "oauth": {"cid": "id", "scopes": "r w"}}}}`)
	require.NoError(t, err)
	require.Len(t, cfg.Servers, 2)
	b, a := cfg.Servers[0], cfg.Servers[1]
	assert.Equal(t, "b", b.ID, "file order")
	assert.Equal(t, "servers.b", b.Loc)
	assert.Equal(t, strp("c"), b.Command)
	assert.Equal(t, []string{"1", "2"}, b.Args)
	assert.Equal(t, []abi.Pair{{Name: "Z", Value: "z"}, {Name: "A", Value: "a"}}, b.Env, "env in file order")
	assert.Equal(t, []float64{5}, b.Timeouts)
	assert.Equal(t, strp("https://x"), a.URL)
	assert.Equal(t, readback.OAuth{Present: true, ClientID: strp("id"), Scopes: []string{"r", "w"}, HasScopes: true}, a.OAuth)
	assert.Contains(t, a.Strings, readback.Located{Field: "headers", Key: "H", S: "{{loadout.secret.1}}"}, "a header value sits at its field and key")
	assert.Empty(t, cfg.Stray)
}

// TestReadJSONViolations: each break of the layout is one violation with its location and rule
// code, in reading order; a config that does not parse is one content violation.
func TestReadJSONViolations(t *testing.T) {
	prof := parse(t, jsonProfile)
	cfg, err := readback.Read(prof, `{"other": "{{loadout.secret.1}}", "lock": {"on": false}, "servers": {
		"a": {"command": 1, "extra": "x", "oauth": {"port": 1}}}}`)
	var got []readback.Violation
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		got = append(got, *e.(*readback.Violation))
	}
	assert.Equal(t, []readback.Violation{
		{Loc: "other", Rule: readback.RuleConfigKey, Msg: `top-level key "other" is not allowed`},
		{Loc: "lock", Rule: readback.RuleConfigKey, Msg: `lock must be exactly {"on":true}, as the profile pins it`},
		{Loc: "servers.a.command", Rule: readback.RuleServerMismatch, Msg: "command is a number, want a string"},
		{Loc: "servers.a.extra", Rule: readback.RuleConfigKey, Msg: `server key "extra" is not allowed`},
		{Loc: "servers.a.oauth.port", Rule: readback.RuleConfigKey, Msg: `oauth key "port" is not allowed`},
	}, got)
	assert.Equal(t, []readback.Located{{Field: "other", S: "{{loadout.secret.1}}"}}, cfg.Stray, "the strings of a key not allowed")
	_, err = readback.Read(prof, `{"servers": {"a": {}, "a": {}}}`)
	assert.EqualError(t, err, "content: the file does not parse as json", "a duplicate key")
	_, err = readback.Read(prof, `{"lock": {"on": true}, "servers": []}`)
	assert.EqualError(t, err, "servers: config_key: servers is a array, want an object")
}

// TestReadTOML: the servers in document order, a table's keys sorted.
func TestReadTOML(t *testing.T) {
	cfg, err := readback.Read(parse(t, tomlProfile), "[s.z]\ncommand = \"c\"\nenv = {B = \"b\", A = \"a\"}\n[s.a]\nurl = \"u\"\n")
	require.NoError(t, err)
	require.Len(t, cfg.Servers, 2)
	assert.Equal(t, []string{"z", "a"}, []string{cfg.Servers[0].ID, cfg.Servers[1].ID}, "document order")
	assert.Equal(t, `s."z"`, cfg.Servers[0].Loc)
	assert.Equal(t, []abi.Pair{{Name: "A", Value: "a"}, {Name: "B", Value: "b"}}, cfg.Servers[0].Env, "a table's keys sorted")
	_, err = readback.Read(parse(t, tomlProfile), "top = 1\n[s.a]\nbad = true\n")
	assert.EqualError(t, err, "top: config_key: top-level key \"top\" is not allowed\ns.\"a\".bad: config_key: server key \"bad\" is not allowed")
}

// TestReaderPassthrough: the hook sees a key meaning envPassthrough as it is read, and what it
// returns falls among the reader's violations in reading order.
func TestReaderPassthrough(t *testing.T) {
	for _, tc := range []struct{ profile, content string }{
		{jsonProfile, `{"lock": {"on": true}, "servers": {"a": {"args": 1, "pass": ["P"], "url": 2}}}`},
		{tomlProfile, "[s.a]\nargs = 1\npass = [\"P\"]\nurl = 2\n"},
	} {
		rd := readback.Reader{Passthrough: func(s *readback.Server, names []string) []readback.Violation {
			return []readback.Violation{{Loc: s.Loc, Rule: "hook", Msg: names[0]}}
		}}
		cfg, vs, ok := rd.Read(parse(t, tc.profile), tc.content)
		require.True(t, ok)
		rules := []string{}
		for _, v := range vs {
			rules = append(rules, v.Rule)
		}
		assert.Equal(t, []string{readback.RuleServerMismatch, "hook", readback.RuleServerMismatch}, rules, "%s", tc.content)
		assert.Equal(t, []string{"P"}, cfg.Servers[0].EnvPassthrough)
	}
}

// FuzzRead reads arbitrary content through a JSON and a TOML profile: it never panics, reading
// is deterministic, a violation always names its rule, and a server the reader returns has the
// id its file gives it, once.
func FuzzRead(f *testing.F) {
	profiles := []*profile.Profile{}
	for _, src := range []string{jsonProfile, tomlProfile} {
		p, err := profileyaml.Parse([]byte(src))
		require.NoError(f, err)
		profiles = append(profiles, p)
	}
	for _, seed := range []string{
		`{"lock": {"on": true}, "servers": {"a": {"command": "c", "args": ["1"], "env": {"A": "a"}, "oauth": {"cid": "x", "scopes": ["r"]}}}}`,
		`{"servers": {"a": {}, "a": {}}}`, `{"servers": []}`, `[]`, `{"x": 1e999}`, `{"servers": {"a": {"url": "\ud800"}}}`,
		"[s.a]\ncommand = \"c\"\nargs = [\"1\"]\n[s.a.env]\nA = \"a\"\n", "[s]\na = 1\n", "s = 1\n", "[[s.a]]\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, content string) {
		for _, p := range profiles {
			cfg, vs, ok := readback.Reader{}.Read(p, content)
			again, vsAgain, okAgain := readback.Reader{}.Read(p, content)
			require.Equal(t, ok, okAgain, "ok of a second read")
			require.Equal(t, vs, vsAgain, "violations of a second read")
			require.Equal(t, cfg, again, "servers of a second read")
			for _, v := range vs {
				assert.NotEmpty(t, v.Rule, "violation %q has no rule", v.Msg)
			}
			seen := map[string]bool{}
			for _, s := range cfg.Servers {
				assert.False(t, seen[s.ID] && len(vs) == 0, "server %q read twice without a violation", s.ID)
				seen[s.ID] = true
			}
		}
	})
}
