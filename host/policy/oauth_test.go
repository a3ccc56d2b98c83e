package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/spec"
	"github.com/loadout-dev/loadout/sdk/abi"
)

func TestVetOAuthAndLifecycle(t *testing.T) {
	t.Parallel()
	oauth := &spec.OAuth{ClientID: "loadout", CallbackPort: 8765, Scopes: []string{"read", "write"},
		AuthServerMetadataURL: "https://auth.example.com/.well-known/oauth-authorization-server"}
	req := &spec.Request{Servers: []spec.Server{
		{Index: 0, ID: "docs", Transport: "http", URL: "https://mcp.example.com/mcp", Enabled: true, OAuth: oauth},
		{Index: 1, ID: "evil", Transport: "http", URL: "https://mcp.example.com/mcp", Enabled: true,
			OAuth: &spec.OAuth{AuthServerMetadataURL: "http://auth.evil.example/meta"}},
		{Index: 2, ID: "fs", Transport: "stdio", Command: "/bin/fs", Enabled: true, Lifecycle: "lazy", IdleTimeout: 10},
	}}
	v := vet(t, req, nil, VetOptions{})
	got := v.Request()
	require.Len(t, got.Servers, 2, "the server whose metadata URL is plain http to a remote host is refused")
	assert.Equal(t, &abi.OAuth{ClientID: "loadout", CallbackPort: 8765, Scopes: []string{"read", "write"},
		AuthServerMetadataURL: "https://auth.example.com/.well-known/oauth-authorization-server"}, got.Servers[0].OAuth)
	assert.Equal(t, "lazy", got.Servers[1].Lifecycle)
	assert.InDelta(t, 10.0, got.Servers[1].IdleTimeout, 0)
	var fields []string
	for _, d := range v.Dropped() {
		fields = append(fields, d.Field+" "+d.Code)
	}
	assert.Equal(t, []string{"mcpServers[1].oauth.authServerMetadataUrl url_not_allowed"}, fields, "the drop names the metadata URL")

	// The plugin request is a copy: changing it does not change the vetted value.
	got.Servers[0].OAuth.Scopes[0] = "admin"
	assert.Equal(t, "read", v.Request().Servers[0].OAuth.Scopes[0], "Request hands out copies")
}

// In a container run, a loopback metadata URL is rewritten like the server url.
func TestVetOAuthContainerRewrite(t *testing.T) {
	t.Parallel()
	req := &spec.Request{Run: spec.Run{Container: true}, Servers: []spec.Server{
		{Index: 0, ID: "local", Transport: "http", URL: "http://127.0.0.1:8080/mcp", Enabled: true,
			OAuth: &spec.OAuth{AuthServerMetadataURL: "http://localhost:9000/meta"}},
	}}
	v := vet(t, req, nil, VetOptions{})
	got := v.Request()
	require.Len(t, got.Servers, 1)
	assert.Equal(t, "http://host.docker.internal:8080/mcp", got.Servers[0].URL)
	assert.Equal(t, "http://host.docker.internal:9000/meta", got.Servers[0].OAuth.AuthServerMetadataURL)
	var fields []string
	for _, d := range v.Dropped() {
		fields = append(fields, d.Field)
	}
	assert.Equal(t, []string{"mcpServers[0].url", "mcpServers[0].oauth.authServerMetadataUrl"}, fields)
}

func TestVetRefusesPlaceholderInOAuth(t *testing.T) {
	t.Parallel()
	req := &spec.Request{Servers: []spec.Server{{Index: 0, ID: "docs", Transport: "http", URL: "https://mcp.example.com/mcp",
		OAuth: &spec.OAuth{ClientID: "{{loadout.secret.1}}"}}}}
	_, err := Vet(req, &Decision{Servers: []ServerDecision{{Allow: true}}}, nil, VetOptions{})
	assert.ErrorIs(t, err, ErrPlaceholder)
}
