package host

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/policy"
	"github.com/loadout-dev/loadout/host/spec"
)

// permissive is a policy that refuses nothing and declares no secret: whatever a custom
// policy lets through, the host still puts sharedAuthority on one line and masks secrets.
var permissive = fstest.MapFS{"loadout/open/open.rego": {Data: []byte("package loadout.open\n\nspawn_env := {\"keys\": [], \"prefixes\": []}\n")}}

func prepare(t *testing.T, body string) *Prepared {
	t.Helper()
	ctx := context.Background()
	e, err := policy.New(ctx, policy.Config{FS: permissive, ReplaceDefaults: true})
	require.NoError(t, err)
	req, _, err := spec.Parse([]byte(body))
	require.NoError(t, err)
	d, err := e.Decide(ctx, req, nil, "claude")
	require.NoError(t, err)
	v, err := policy.Vet(req, d, nil, policy.VetOptions{})
	require.NoError(t, err)
	return &Prepared{Request: req, Vetted: v}
}

func TestSharedNoticesUnderAPermissivePolicy(t *testing.T) {
	p := prepare(t, `{"tokens":{"team":"tok-team-5e1a"},"mcpServers":[
		{"id":"team","transport":"http","url":"https://a.example.com/mcp","credentials":"shared",
		 "sharedAuthority":"  ops\nteam\u2028 tok-team-5e1a  "},
		{"id":"blank","transport":"http","url":"https://b.example.com/mcp","credentials":"shared","sharedAuthority":" "},
		{"id":"user","transport":"http","url":"https://c.example.com/mcp","credentials":"user","sharedAuthority":"ignored"}]}`)
	details, err := serverDetails(p, p.Vetted.Request())
	require.NoError(t, err)
	require.Len(t, details, 3)
	assert.Equal(t, "ops team  [REDACTED]", details[0].SharedAuthority, "one line, trimmed, the token masked")
	assert.Empty(t, details[1].SharedAuthority, "a blank authority names no one")
	assert.Empty(t, details[2].SharedAuthority, "only a shared server has one")

	got := withSharedNotices("## MCP servers\n- team: all tools", details, p.Vetted.Redactor())
	assert.Equal(t, "## MCP servers\n- team: all tools\n\n"+SharedPromptHeading+"\n\n- team: "+SharedNotice(details[0].SharedAuthority)+"\n", got)
	assert.Equal(t, "", withSharedNotices("", details[1:], nil), "no shared server with an authority: no section")
	assert.Equal(t, "x\n", withSharedNotices("x\n", nil, nil), "the plugin's prompt is left as it is")
}

// A policy that keeps a stdio user server does not get it started: the host refuses it.
func TestUserCommandsAreRefusedWhateverThePolicy(t *testing.T) {
	ctx := context.Background()
	h, err := New(ctx, Config{Policies: permissive, ReplaceDefaultPolicies: true})
	require.NoError(t, err)
	p, err := h.Vet(ctx, []byte(`{"mcpServers":[{"id":"files","command":"/usr/bin/mcp-files"}],
		"userServers":[{"id":"runner","command":"/tmp/evil"},{"id":"notes","transport":"http","url":"https://n.example.com/mcp"}]}`), nil, "")
	require.NoError(t, err)
	var kept []string
	for _, s := range p.Vetted.Request().Servers {
		kept = append(kept, s.ID)
	}
	assert.Equal(t, []string{"files", "u_notes"}, kept, "a catalog stdio server and an http user server stay")
	dropped := p.Vetted.Dropped()
	require.Len(t, dropped, 1, "only the stdio user server is refused: %+v", dropped)
	assert.Equal(t, "userServers[0].transport", dropped[0].Field)
	assert.Equal(t, CodeUserCommand, dropped[0].Code)
	assert.Equal(t, "host", dropped[0].Rule)
}
