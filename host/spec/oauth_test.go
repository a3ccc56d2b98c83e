package spec_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/spec"
)

// httpServer is a request with one http server carrying extra members.
func httpServer(extra string) string {
	return `{"mcpServers":[{"id":"docs","transport":"http","url":"https://mcp.example.com/mcp"` + extra + `}]}`
}

func TestParseOAuth(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		extra     string
		want      *spec.OAuth
		dropped   bool
		wantDiags []diag
	}{
		{
			name:  "every member",
			extra: `,"oauth":{"clientId":"my-client","callbackPort":8765,"scopes":["read","write:all"],"authServerMetadataUrl":"https://auth.example.com/.well-known/oauth-authorization-server"}`,
			want: &spec.OAuth{ClientID: "my-client", CallbackPort: 8765, Scopes: []string{"read", "write:all"},
				AuthServerMetadataURL: "https://auth.example.com/.well-known/oauth-authorization-server"},
		},
		{name: "null and empty are absent", extra: `,"oauth":{"clientId":null,"scopes":[]}`},
		{name: "null oauth is absent", extra: `,"oauth":null`},
		{name: "a url client id", extra: `,"oauth":{"clientId":"https://app.example.com/client.json"}`,
			want: &spec.OAuth{ClientID: "https://app.example.com/client.json"}},
		{name: "port bounds", extra: `,"oauth":{"callbackPort":65535}`, want: &spec.OAuth{CallbackPort: 65535}},
	}
	bad := []struct{ name, extra, field string }{
		{"not an object", `,"oauth":"yes"`, "mcpServers[0].oauth"},
		{"client id not a string", `,"oauth":{"clientId":7}`, "mcpServers[0].oauth.clientId"},
		{"empty client id", `,"oauth":{"clientId":""}`, "mcpServers[0].oauth.clientId"},
		{"client id with a dollar", `,"oauth":{"clientId":"${CLIENT}"}`, "mcpServers[0].oauth.clientId"},
		{"client id with a bang", `,"oauth":{"clientId":"!cat /etc/passwd"}`, "mcpServers[0].oauth.clientId"},
		{"client id with a space", `,"oauth":{"clientId":"a b"}`, "mcpServers[0].oauth.clientId"},
		{"client id with a newline", `,"oauth":{"clientId":"a\nb"}`, "mcpServers[0].oauth.clientId"},
		{"port zero", `,"oauth":{"callbackPort":0}`, "mcpServers[0].oauth.callbackPort"},
		{"port too large", `,"oauth":{"callbackPort":65536}`, "mcpServers[0].oauth.callbackPort"},
		{"port negative", `,"oauth":{"callbackPort":-1}`, "mcpServers[0].oauth.callbackPort"},
		{"port fraction", `,"oauth":{"callbackPort":8765.5}`, "mcpServers[0].oauth.callbackPort"},
		{"port exponent", `,"oauth":{"callbackPort":8e3}`, "mcpServers[0].oauth.callbackPort"},
		{"port string", `,"oauth":{"callbackPort":"8765"}`, "mcpServers[0].oauth.callbackPort"},
		{"scopes a string", `,"oauth":{"scopes":"read write"}`, "mcpServers[0].oauth.scopes"},
		{"scope not a string", `,"oauth":{"scopes":["read",1]}`, "mcpServers[0].oauth.scopes[1]"},
		{"scope with a space", `,"oauth":{"scopes":["read write"]}`, "mcpServers[0].oauth.scopes[0]"},
		{"scope listed twice", `,"oauth":{"scopes":["read","read"]}`, "mcpServers[0].oauth.scopes[1]"},
		{"metadata url not a string", `,"oauth":{"authServerMetadataUrl":true}`, "mcpServers[0].oauth.authServerMetadataUrl"},
		{"metadata url with a dollar", `,"oauth":{"authServerMetadataUrl":"https://${HOST}/x"}`, "mcpServers[0].oauth.authServerMetadataUrl"},
		{"client secret is not a member", `,"oauth":{"clientSecret":"s3cret"}`, "mcpServers[0].oauth.clientSecret"},
	}
	for _, b := range bad {
		tests = append(tests, struct {
			name      string
			extra     string
			want      *spec.OAuth
			dropped   bool
			wantDiags []diag
		}{name: b.name, extra: b.extra, dropped: true, wantDiags: []diag{{"server", b.field, spec.CodeInvalidOAuth}}})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, diags := mustParse(t, httpServer(tt.extra))
			assert.Equal(t, tt.wantDiags, nilIfEmpty(diagsOf(diags)), "diagnostics")
			if tt.dropped {
				assert.Empty(t, req.Servers, "an invalid oauth drops the server")
				for _, d := range diags {
					assert.Contains(t, d.Message, "server dropped", "the diagnostic says the server is dropped")
				}
				return
			}
			require.Len(t, req.Servers, 1)
			assert.Equal(t, tt.want, req.Servers[0].OAuth, "oauth")
		})
	}
}

func nilIfEmpty(d []diag) []diag {
	if len(d) == 0 {
		return nil
	}
	return d
}

// oauth on a stdio server has no meaning (Claude Code strips it, Codex refuses the whole
// config): it is ignored with a diagnostic, whatever it holds, and the server is kept.
func TestParseOAuthOnStdioIgnored(t *testing.T) {
	t.Parallel()
	for _, oauth := range []string{`{"clientId":"x"}`, `{"clientId":1}`, `"junk"`} {
		req, diags := mustParse(t, `{"mcpServers":[{"id":"fs","command":"/bin/fs","oauth":`+oauth+`}]}`)
		require.Len(t, req.Servers, 1, "oauth %s: the stdio server is kept", oauth)
		assert.Nil(t, req.Servers[0].OAuth, "oauth %s", oauth)
		assert.Equal(t, []diag{{"server", "mcpServers[0].oauth", spec.CodeFieldIgnored}}, diagsOf(diags), "oauth %s", oauth)
	}
}

// A member that only folds to an oauth field refuses the request (R11).
func TestParseOAuthFoldedMember(t *testing.T) {
	t.Parallel()
	_, _, err := spec.Parse([]byte(httpServer(`,"oauth":{"clientId":"a","ClientId":"b"}`)))
	var rej *spec.RejectError
	require.ErrorAs(t, err, &rej)
	assert.Equal(t, spec.CodeFoldedMember, rej.Code)
	assert.Equal(t, "mcpServers[0].oauth.ClientId", rej.Field)
}

func TestParseLifecycle(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"lazy", "eager", "keep-alive", "lazy-keep-alive"} {
		req, diags := mustParse(t, `{"mcpServers":[{"id":"fs","command":"/bin/fs","lifecycle":"`+mode+`","idleTimeout":15}]}`)
		assert.Empty(t, diags, "lifecycle %s", mode)
		require.Len(t, req.Servers, 1)
		assert.Equal(t, mode, req.Servers[0].Lifecycle)
		assert.InDelta(t, 15.0, req.Servers[0].IdleTimeout, 0)
	}
	tests := []struct{ extra, field, code string }{
		{`"lifecycle":"sometimes"`, "mcpServers[0].lifecycle", spec.CodeInvalidValue},
		{`"lifecycle":"LAZY"`, "mcpServers[0].lifecycle", spec.CodeInvalidValue},
		{`"lifecycle":1`, "mcpServers[0].lifecycle", spec.CodeInvalidValue},
		{`"idleTimeout":0`, "mcpServers[0].idleTimeout", spec.CodeInvalidValue},
		{`"idleTimeout":-5`, "mcpServers[0].idleTimeout", spec.CodeInvalidValue},
		{`"idleTimeout":"10"`, "mcpServers[0].idleTimeout", spec.CodeWrongType},
	}
	for _, tt := range tests {
		req, diags := mustParse(t, `{"mcpServers":[{"id":"fs","command":"/bin/fs",`+tt.extra+`}]}`)
		require.Len(t, req.Servers, 1, "%s: a bad lifecycle setting is removed, the server kept", tt.extra)
		assert.Empty(t, req.Servers[0].Lifecycle, tt.extra)
		assert.Zero(t, req.Servers[0].IdleTimeout, tt.extra)
		assert.Equal(t, []diag{{"server", tt.field, tt.code}}, diagsOf(diags), tt.extra)
		assert.True(t, strings.Contains(diags[0].Message, "removed") || strings.Contains(diags[0].Message, "ignored"), "%s: %s", tt.extra, diags[0].Message)
	}
}
