package policy

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/loadout-dev/loadout/host/spec"
)

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
			f := ComputeFacts(req, nil)
			sf := f.Servers[0]
			if !assert.NotNil(t, sf.URL, "ComputeFacts(url %q): want URL facts for an http server", tc.url) {
				return
			}
			assert.Equal(t, tc.scheme, sf.URL.Scheme, "ComputeFacts(url %q).Scheme", tc.url)
			assert.Equal(t, tc.baseHost, sf.URL.BaseHost, "ComputeFacts(url %q).BaseHost", tc.url)
			assert.Equal(t, tc.loopback, sf.URL.Loopback, "ComputeFacts(url %q).Loopback", tc.url)
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
			assert.ElementsMatch(t, want, got, "ComputeFacts(url %q) URL flags", tc.url)
			assert.Equal(t, []int{0}, f.HTTP, "ComputeFacts(url %q).HTTP", tc.url)
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
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := ComputeFacts(&spec.Request{Servers: []spec.Server{tc.srv}}, nil)
			assert.Equal(t, tc.want, f.Servers[0].Flags, "ComputeFacts(%+v).Flags", tc.srv)
		})
	}
}

func TestEnvAndHeaderFacts(t *testing.T) {
	t.Parallel()
	srv := spec.Server{ID: "a", Transport: "stdio", Command: "npx", Env: []spec.Pair{
		{Name: "npm_config_registry", Value: "x"},
		{Name: "A=B", Value: "x"},
		{Name: "K", Value: "a\x00b"},
		{Name: "_X", Value: ""},
	}, Headers: []spec.Pair{
		{Name: "X-Api-Key", Value: "v"},
		{Name: "Bad Name", Value: "v"},
		{Name: "X", Value: "a\r\nInjected: 1"},
	}}
	f := ComputeFacts(&spec.Request{Servers: []spec.Server{srv}}, nil).Servers[0]
	assert.Equal(t, []EnvFacts{
		{Upper: "NPM_CONFIG_REGISTRY", Prefixes: []string{"NPM_", "NPM_CONFIG_"}, Suffixes: []string{"_CONFIG_REGISTRY", "_REGISTRY"}},
		{Upper: "A=B", KeyInvalid: true},
		{Upper: "K", ValueInvalid: true},
		{Upper: "_X", Prefixes: []string{"_"}, Suffixes: []string{"_X"}},
	}, f.Env, "ComputeFacts env facts")
	assert.Equal(t, []HeaderFacts{
		{Lower: "x-api-key"},
		{Lower: "bad name", NameInvalid: true},
		{Lower: "x", ValueInvalid: true},
	}, f.Headers, "ComputeFacts header facts")
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
	f := ComputeFacts(req, []spec.Pair{{Name: "PATH", Value: "/secret/value"}, {Name: "LC_ALL", Value: "C"}})
	assert.Equal(t, []int{1}, f.HTTP, "ComputeFacts().HTTP")
	assert.Equal(t, []int{1, 2}, f.Credentialed, "ComputeFacts().Credentialed")
	assert.Equal(t, []string{"PATH", "LC_ALL"}, f.HostEnv, "ComputeFacts().HostEnv holds names only")
	assert.True(t, f.Servers[0].Token, "server a has a stored token")
	assert.False(t, f.Servers[2].Token, "an empty stored token is no token")
	assert.True(t, f.Servers[1].SharedAuthorityOK, "one-line sharedAuthority")
	assert.False(t, f.Servers[2].SharedAuthorityOK, "two-line sharedAuthority")
}
