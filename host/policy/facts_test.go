package policy

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/spec"
)

// defaultFacts computes the facts of req with the embedded default tunables.
func defaultFacts(t *testing.T, req *spec.Request, hostEnv []spec.Pair) Facts {
	t.Helper()
	e, err := defaultEngine()
	require.NoError(t, err, "New with the embedded policies")
	return e.Facts(req, hostEnv)
}

var defaultEngine = sync.OnceValues(func() (*Engine, error) { return New(context.Background(), Config{}) })

func TestURLFacts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		url      string
		scheme   string
		baseHost string
		loopback bool
		// wantFlags are the URL flags set on the server.
		wantFlags []string
	}{
		{name: "https remote", url: "https://mcp.example.com/mcp", scheme: "https", baseHost: "mcp.example.com"},
		{name: "uppercase scheme", url: "HTTPS://MCP.Example.com/", scheme: "https", baseHost: "mcp.example.com"},
		{name: "http localhost any case", url: "http://LocalHost:8080/", scheme: "http", baseHost: "localhost", loopback: true},
		{name: "http 127/8", url: "http://127.1.2.3/", scheme: "http", baseHost: "127.1.2.3", loopback: true},
		{name: "http [::1]", url: "http://[::1]:3000/mcp", scheme: "http", baseHost: "::1", loopback: true},
		{name: "long form ::1 is not exactly [::1]", url: "http://[0:0:0:0:0:0:0:1]/", scheme: "http", baseHost: "0:0:0:0:0:0:0:1"},
		{name: "mapped loopback is not [::1]", url: "http://[::ffff:127.0.0.1]/", scheme: "http", baseHost: "::ffff:127.0.0.1"},
		{name: "non-canonical quad", url: "http://127.0.0.01/", scheme: "http", baseHost: "127.0.0.01"},
		{name: "out of range quad", url: "http://127.0.0.256/", scheme: "http", baseHost: "127.0.0.256"},
		{name: "short quad", url: "http://127.1/", scheme: "http", baseHost: "127.1"},
		{name: "trailing dot", url: "http://localhost./", scheme: "http", baseHost: "localhost."},
		{
			name: "userinfo hides remote host", url: "http://127.0.0.1@evil.example/", scheme: "http",
			baseHost: "evil.example", wantFlags: []string{FlagURLUserinfo},
		},
		{
			name: "empty userinfo", url: "http://@127.0.0.1/", scheme: "http", baseHost: "127.0.0.1", loopback: true,
			wantFlags: []string{FlagURLUserinfo},
		},
		{
			name: "backslash trick", url: `http://evil.example\@127.0.0.1/`, scheme: "http", baseHost: "127.0.0.1", loopback: true,
			wantFlags: []string{FlagURLBadBytes, FlagURLUserinfo, FlagURLHostsDisagree},
		},
		{name: "at in fragment is no userinfo", url: "http://127.0.0.1/#@evil.example", scheme: "http", baseHost: "127.0.0.1", loopback: true},
		{name: "at in query", url: "http://127.0.0.1/?a=@evil", scheme: "http", baseHost: "127.0.0.1", loopback: true},
		{name: "port zero", url: "http://127.0.0.1:0/", scheme: "http", baseHost: "127.0.0.1", loopback: true, wantFlags: []string{FlagURLBadPort}},
		{name: "port too large", url: "https://h:65536/", scheme: "https", baseHost: "h", wantFlags: []string{FlagURLBadPort}},
		{name: "empty port", url: "https://h:/", scheme: "https", baseHost: "h", wantFlags: []string{FlagURLBadPort}},
		{name: "port then at", url: "http://127.0.0.1:80@evil.example/", scheme: "http", baseHost: "evil.example", wantFlags: []string{FlagURLUserinfo}},
		{name: "empty host", url: "http:///mcp", scheme: "http", baseHost: "", wantFlags: []string{FlagURLEmptyHost}},
		{name: "space", url: "https://a b/", scheme: "https", baseHost: "a b", wantFlags: []string{FlagURLBadBytes, FlagURLHostsDisagree}},
		{name: "non-ascii", url: "https://exämple.com/", scheme: "https", baseHost: "exämple.com", wantFlags: []string{FlagURLBadBytes}},
		{name: "percent-encoded host", url: "http://127.0.0.1%2e/", scheme: "http", baseHost: "127.0.0.1%2e", wantFlags: []string{FlagURLHostsDisagree}},
		{name: "other scheme", url: "ftp://127.0.0.1/", scheme: "ftp", baseHost: "", wantFlags: []string{FlagURLHostsDisagree, FlagURLEmptyHost}},
		{name: "missing", url: "", wantFlags: []string{FlagURLMissing}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := &spec.Request{Servers: []spec.Server{{ID: "s", Transport: "http", URL: tc.url}}}
			f := defaultFacts(t, req, nil)
			sf := f.Servers[0]
			if !assert.NotNil(t, sf.URL, "defaultFacts(t, url %q): want URL facts for an http server", tc.url) {
				return
			}
			assert.Equal(t, tc.scheme, sf.URL.Scheme, "defaultFacts(t, url %q).Scheme", tc.url)
			assert.Equal(t, tc.baseHost, sf.URL.BaseHost, "defaultFacts(t, url %q).BaseHost", tc.url)
			assert.Equal(t, tc.loopback, sf.URL.Loopback, "defaultFacts(t, url %q).Loopback", tc.url)
			want := tc.wantFlags
			if want == nil {
				want = []string{}
			}
			got := []string{}
			for _, fl := range sf.Flags {
				if len(fl) > 3 && fl[:3] == "url" {
					got = append(got, fl)
				}
			}
			assert.ElementsMatch(t, want, got, "defaultFacts(t, url %q) URL flags", tc.url)
			assert.Equal(t, []int{0}, f.HTTP, "defaultFacts(t, url %q).HTTP", tc.url)
		})
	}
}

func TestServerFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		srv  spec.Server
		want []string
	}{
		{name: "clean stdio", srv: spec.Server{ID: "fs", Transport: "stdio", Command: "npx"}, want: nil},
		{name: "id pattern", srv: spec.Server{ID: "Fs", Transport: "stdio", Command: "npx"}, want: []string{FlagIDInvalid}},
		{name: "id too long", srv: spec.Server{ID: string(slices.Repeat([]byte("a"), 65)), Transport: "stdio", Command: "npx"}, want: []string{FlagIDInvalid}},
		{name: "id 64 long", srv: spec.Server{ID: string(slices.Repeat([]byte("a"), 64)), Transport: "stdio", Command: "npx"}, want: nil},
		{name: "id leading dash", srv: spec.Server{ID: "-a", Transport: "stdio", Command: "npx"}, want: []string{FlagIDInvalid}},
		{name: "id double underscore", srv: spec.Server{ID: "a__b", Transport: "stdio", Command: "npx"}, want: []string{FlagIDDoubleUnderscore}},
		{name: "id trailing underscore", srv: spec.Server{ID: "a_", Transport: "stdio", Command: "npx"}, want: []string{FlagIDTrailingUnderscore}},
		{name: "transport", srv: spec.Server{ID: "a", Transport: "sse"}, want: []string{FlagTransportInvalid}},
		{name: "blank command", srv: spec.Server{ID: "a", Transport: "stdio", Command: "  "}, want: []string{FlagCommandInvalid}},
		{name: "padded command", srv: spec.Server{ID: "a", Transport: "stdio", Command: " npx"}, want: []string{FlagCommandInvalid}},
		{name: "newline command", srv: spec.Server{ID: "a", Transport: "stdio", Command: "npx\nrm"}, want: []string{FlagCommandInvalid}},
		{name: "option command", srv: spec.Server{ID: "a", Transport: "stdio", Command: "-e"}, want: []string{FlagCommandInvalid}},
		{name: "http has no command rule", srv: spec.Server{ID: "a", Transport: "http", URL: "https://h/"}, want: nil},
		{name: "credentials user", srv: spec.Server{ID: "a", Transport: "stdio", Command: "npx", Credentials: "user"}, want: nil},
		{name: "credentials shared", srv: spec.Server{ID: "a", Transport: "stdio", Command: "npx", Credentials: "shared"}, want: nil},
		{name: "unknown credentials", srv: spec.Server{ID: "a", Transport: "stdio", Command: "npx", Credentials: "admin"}, want: []string{FlagCredentialsUnknown}},
		{name: "credentials compared exactly", srv: spec.Server{ID: "a", Transport: "stdio", Command: "npx", Credentials: "User"}, want: []string{FlagCredentialsUnknown}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := defaultFacts(t, &spec.Request{Servers: []spec.Server{tc.srv}}, nil)
			assert.Equal(t, tc.want, f.Servers[0].Flags, "defaultFacts(t, %+v).Flags", tc.srv)
		})
	}
}

func TestEntryFacts(t *testing.T) {
	t.Parallel()
	srv := spec.Server{ID: "a", Transport: "stdio", Command: "npx", SecretKeys: []string{"K", "X-Api-Key", "_X"}, Env: []spec.Pair{
		{Name: "npm_config_registry", Value: "x"},
		{Name: "A=B", Value: "x"},
		{Name: "K", Value: "a\x00b"},
		{Name: "_X", Value: ""},
		{Name: "LOG_LEVEL", Value: "debug"},
		{Name: "mcp_access_token", Value: "t"},
		{Name: "GOPROXY", Value: "x"},
		{Name: "HTTPS_PROXY", Value: "x"},
		{Name: "xdg_config_home", Value: "x"},
		{Name: "Git_Ssh_Command", Value: "x"},
	}, Headers: []spec.Pair{
		{Name: "X-Api-Key", Value: "v"},
		{Name: "Bad Name", Value: "v"},
		{Name: "X", Value: "a\r\nInjected: 1"},
		{Name: "X-Trace", Value: "1"},
		{Name: "AUTHORIZATION", Value: "Bearer x"},
	}, AllowedTools: []string{"read", "x,Bash", "*"}}
	f := defaultFacts(t, &spec.Request{Servers: []spec.Server{srv}}, nil).Servers[0]
	assert.Equal(t, []EntryFacts{
		{Key: "npm_config_registry", KeyRefused: true},
		{Key: "A=B", KeyInvalid: true},
		{Key: "K", ValueInvalid: true, SecretNamed: true},
		{Key: "_X", SecretNamed: true, ValueEmpty: true},
		{Key: "mcp_access_token", KeyRefused: true, UserCredential: true},
		{Key: "GOPROXY", KeyRefused: true},
		{Key: "HTTPS_PROXY", KeyRefused: true},
		{Key: "xdg_config_home", KeyRefused: true},
		{Key: "Git_Ssh_Command", KeyRefused: true},
	}, f.Env, "defaultFacts env facts: LOG_LEVEL has none and is not listed")
	assert.Equal(t, []EntryFacts{
		{Key: "X-Api-Key", SecretNamed: true},
		{Key: "Bad Name", NameInvalid: true},
		{Key: "X", ValueInvalid: true},
		{Key: "AUTHORIZATION", UserCredential: true, TokenHeader: true},
	}, f.Headers, "defaultFacts header facts: X-Trace has none and is not listed")
	assert.Equal(t, []EntryFacts{{Key: "x,Bash", NameInvalid: true}, {Key: "*", NameInvalid: true}}, f.Tools,
		"defaultFacts tool facts: only names breaking the pattern are listed")
}

// TestTunablesFacts holds each tunable list to the fact it feeds, with tunables other than the
// defaults.
func TestTunablesFacts(t *testing.T) {
	t.Parallel()
	tun, err := readTunablesShared(map[string]any{
		"url":     map[string]any{"schemes_anywhere": []any{"HTTPS", "http"}, "schemes_loopback": []any{}},
		"secrets": map[string]any{"always_secret_headers": []any{"X-Api-Key"}, "user_credential_headers": []any{}, "user_credential_env": []any{"my_token"}},
		"allow": map[string]any{
			"ids":         map[string]any{"reserved": []any{"admin"}, "reserved_prefixes": []any{"sys-"}},
			"tools":       map[string]any{"pattern": "^[a-z]+$"},
			"env_refused": map[string]any{"keys": []any{"foo"}, "prefixes": []any{"X_"}, "suffixes": []any{"_Y"}},
			"skills":      map[string]any{"denied_names": []any{"Deploy"}},
		},
	})
	require.NoError(t, err, "readTunables(custom)")
	req := &spec.Request{
		Servers: []spec.Server{
			{ID: "admin", Transport: "http", URL: "http://mcp.example.com/", Headers: []spec.Pair{{Name: "x-api-key", Value: "v"}, {Name: "Authorization", Value: "v"}}},
			{ID: "sys-a", Transport: "stdio", Command: "npx", AllowedTools: []string{"read", "Read"},
				Env: []spec.Pair{{Name: "Foo", Value: "1"}, {Name: "X_A", Value: "1"}, {Name: "A_Y", Value: "1"}, {Name: "MY_TOKEN", Value: "1"}, {Name: "LD_PRELOAD", Value: "1"}}},
		},
		Skills: []spec.Skill{{Name: "ok"}, {Name: "DEPLOY"}},
	}
	f := computeFacts(req, nil, tun)
	assert.Equal(t, []string{FlagIDReserved}, f.Servers[0].Flags, "reserved id")
	assert.True(t, f.Servers[0].URL.SchemeAnywhere, "http listed (case-insensitively) in schemes_anywhere")
	assert.False(t, f.Servers[0].URL.SchemeLoopback, "empty schemes_loopback")
	assert.Equal(t, []EntryFacts{{Key: "x-api-key", AlwaysSecret: true}, {Key: "Authorization", TokenHeader: true}}, f.Servers[0].Headers,
		"always-secret header; Authorization is no user credential when the list is empty")
	assert.Equal(t, []string{FlagIDReserved}, f.Servers[1].Flags, "reserved id prefix")
	assert.Equal(t, []EntryFacts{{Key: "Read", NameInvalid: true}}, f.Servers[1].Tools, "custom tool pattern")
	assert.Equal(t, []EntryFacts{
		{Key: "Foo", KeyRefused: true}, {Key: "X_A", KeyRefused: true}, {Key: "A_Y", KeyRefused: true},
		{Key: "MY_TOKEN", UserCredential: true},
	}, f.Servers[1].Env, "refused keys, prefixes and suffixes compared uppercased; LD_PRELOAD not refused by these tunables")
	assert.Equal(t, []SkillFacts{{}, {NameDenied: true}}, f.Skills, "denied skill names compared lowercased")
}

func TestTunablesErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		doc  map[string]any
		want string
	}{
		{name: "prefix without underscore", doc: map[string]any{"allow": map[string]any{"env_refused": map[string]any{"prefixes": []any{"LD"}}}}, want: "must end with"},
		{name: "empty suffix", doc: map[string]any{"allow": map[string]any{"env_refused": map[string]any{"suffixes": []any{""}}}}, want: "must not be empty"},
		{name: "bad pattern", doc: map[string]any{"allow": map[string]any{"tools": map[string]any{"pattern": "("}}}, want: "allow.tools.pattern"},
		{name: "list of the wrong type", doc: map[string]any{"allow": map[string]any{"ids": map[string]any{"reserved": "servers"}}}, want: "read data.tunables"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := readTunablesShared(tc.doc)
			require.Error(t, err, "readTunables(%s): want an error", tc.name)
			assert.Contains(t, err.Error(), tc.want, "readTunables(%s) error", tc.name)
		})
	}
}

func TestNoTunablesFailClosed(t *testing.T) {
	t.Parallel()
	tun, err := readTunablesShared(nil)
	require.NoError(t, err, "readTunables(nil)")
	req := &spec.Request{Servers: []spec.Server{
		{ID: "a", Transport: "stdio", Command: "npx", AllowedTools: []string{"read"}},
		{ID: "b", Transport: "http", URL: "https://h/"},
	}}
	f := computeFacts(req, nil, tun)
	assert.Equal(t, []EntryFacts{{Key: "read", NameInvalid: true}}, f.Servers[0].Tools, "no tool pattern: every tool name is invalid")
	assert.False(t, f.Servers[1].URL.SchemeAnywhere, "no schemes: none allowed anywhere")
	creds := computeFacts(&spec.Request{Servers: []spec.Server{{ID: "a", Transport: "stdio", Command: "npx", Credentials: "user"}}}, nil, tun)
	assert.Equal(t, []string{FlagCredentialsUnknown}, creds.Servers[0].Flags, "no credential modes: every credentials value but \"\" is unknown")
}

func TestRequestFacts(t *testing.T) {
	t.Parallel()
	req := &spec.Request{
		Servers: []spec.Server{
			{ID: "a", Transport: "stdio", Command: "npx"},
			{ID: "b", Transport: "http", URL: "https://h/", Credentials: "shared", SharedAuthority: "team"},
			{ID: "c", Transport: "stdio", Command: "npx", HasUsers: true, SharedAuthority: "two\nlines"},
		},
		Tokens: []spec.Pair{{Name: "a", Value: "t"}, {Name: "c", Value: ""}},
	}
	f := defaultFacts(t, req, []spec.Pair{{Name: "PATH", Value: "/secret/value"}, {Name: "LC_ALL", Value: "C"}})
	assert.Equal(t, []int{1}, f.HTTP, "defaultFacts(t, ).HTTP")
	assert.Equal(t, []string{"PATH", "LC_ALL"}, f.HostEnv, "defaultFacts(t, ).HostEnv holds names only")
	assert.True(t, f.Servers[0].Token, "server a has a stored token")
	assert.False(t, f.Servers[2].Token, "an empty stored token is no token")
	assert.True(t, f.Servers[1].SharedAuthorityOK, "one-line sharedAuthority")
	assert.False(t, f.Servers[2].SharedAuthorityOK, "two-line sharedAuthority")
}

func TestUserListedAndToolFacts(t *testing.T) {
	t.Parallel()
	servers := []spec.Server{
		{ID: "a", Transport: "stdio", Command: "npx", Credentials: "shared", HasUsers: true, Users: []string{"bob", "alice"}},
		{ID: "b", Transport: "stdio", Command: "npx", Credentials: "shared", HasUsers: true, Users: []string{"Alice"}},
		{ID: "c", Transport: "stdio", Command: "npx", HasUsers: true, Users: []string{}},
		{ID: "d", Transport: "stdio", Command: "npx", ToolsDeclared: true, AllowedTools: []string{"x,Bash", "*"}},
		{ID: "e", Transport: "stdio", Command: "npx", ToolsDeclared: true, AllowedTools: []string{"*", "read"}},
		{ID: "f", Transport: "stdio", Command: "npx", ToolsDeclared: true},
		{ID: "g", Transport: "stdio", Command: "npx", AllowedTools: []string{"*"}},
	}
	tests := []struct {
		name            string
		run             spec.Run
		wantListed      []bool
		wantNoValidTool []bool
	}{
		{
			name: "run user alice", run: spec.Run{User: "alice", HasUser: true},
			wantListed:      []bool{true, false, false, false, false, false, false},
			wantNoValidTool: []bool{false, false, false, true, false, true, false},
		},
		{
			name: "no run user lists nobody", run: spec.Run{User: "alice"},
			wantListed:      []bool{false, false, false, false, false, false, false},
			wantNoValidTool: []bool{false, false, false, true, false, true, false},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := defaultFacts(t, &spec.Request{Run: tc.run, Servers: servers}, nil)
			for i, sf := range f.Servers {
				assert.Equal(t, tc.wantListed[i], sf.UserListed, "defaultFacts(%s): servers[%d].UserListed", tc.name, i)
				assert.Equal(t, tc.wantNoValidTool[i], sf.NoValidTool, "defaultFacts(%s): servers[%d].NoValidTool", tc.name, i)
			}
		})
	}
}

// readTunablesShared is readTunables holding the package's interned lock shared, as Decide
// does: it builds AST values while other tests load policies.
func readTunablesShared(doc any) (*tunables, error) {
	interned.RLock()
	defer interned.RUnlock()
	return readTunables(doc)
}
