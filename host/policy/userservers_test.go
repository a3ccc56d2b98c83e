package policy

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/spec"
)

// userServersRequest has a catalog server, a catalog server that claims the user prefix, and
// user servers: http, stdio, one a catalog rule refuses and one with an env entry R4 drops.
const userServersRequest = `{
  "mcpServers": [
    {"id": "docs", "transport": "http", "url": "https://docs.example.com/mcp"},
    {"id": "u_notes", "transport": "http", "url": "https://fake.example.com/mcp"}
  ],
  "userServers": [
    {"id": "notes", "transport": "http", "url": "https://notes.example.com/mcp",
     "headers": {"Authorization": "Bearer notes-secret"}},
    {"id": "runner", "command": "npx"},
    {"id": "plain", "transport": "http", "url": "http://evil.example/mcp"},
    {"id": "hooked", "transport": "http", "url": "https://hooked.example.com/mcp", "headers": {"Bad Header": "x"}}
  ]
}`

// vetUserServers parses userServersRequest and vets it with the default policy, userServers
// set to mode.
func vetUserServers(t *testing.T, mode string) *Vetted {
	t.Helper()
	ctx := context.Background()
	e, err := New(ctx, Config{FS: withDefaults(t, map[string]string{
		"tunables/userservers/data.yaml": "userServers: " + mode + "\n",
	})})
	require.NoError(t, err, "New with userServers %s", mode)
	req, _, err := spec.Parse([]byte(userServersRequest))
	require.NoError(t, err)
	d, err := e.Decide(ctx, req, nil, "claude")
	require.NoError(t, err, "Decide")
	v, err := Vet(req, d, nil, VetOptions{})
	require.NoError(t, err, "Vet")
	return v
}

// outcome is what the tests compare: the kept ids, and each drop as "field code".
func outcome(v *Vetted) (kept, dropped []string, warnings []string) {
	for _, s := range v.Request().Servers {
		kept = append(kept, s.ID)
	}
	for _, d := range v.Dropped() {
		dropped = append(dropped, d.Field+" "+d.Code)
	}
	for _, w := range v.Warnings() {
		warnings = append(warnings, w.Code+": "+w.Message)
	}
	return kept, dropped, warnings
}

func TestVetUserServers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode                    string
		kept, dropped, warnings []string
	}{
		{
			mode: "none",
			kept: []string{"docs"},
			dropped: []string{
				"mcpServers[1].id id_reserved",
				"userServers[0].id user_servers_off",
				"userServers[1].id user_servers_off",
				"userServers[2].url url_not_allowed",
				"userServers[2].id user_servers_off",
				"userServers[3].id user_servers_off",
			},
		},
		{
			mode: "remote",
			kept: []string{"docs", "u_notes", "u_hooked"},
			dropped: []string{
				"mcpServers[1].id id_reserved",
				"userServers[1].transport user_server_stdio_dropped",
				"userServers[2].url url_not_allowed",
				"userServers[3].headers.Bad Header header_name_invalid",
			},
			warnings: []string{"user_server_stdio_dropped: user server u_runner is stdio and userServers is remote: only http user servers are kept"},
		},
		{
			mode: "all",
			kept: []string{"docs", "u_notes", "u_hooked"},
			dropped: []string{
				"mcpServers[1].id id_reserved",
				"userServers[1].transport user_server_stdio_refused",
				"userServers[2].url url_not_allowed",
				"userServers[3].headers.Bad Header header_name_invalid",
			},
		},
		{
			// A value the rules do not know fails closed, as none.
			mode: "any",
			kept: []string{"docs"},
			dropped: []string{
				"mcpServers[1].id id_reserved",
				"userServers[0].id user_servers_off",
				"userServers[1].id user_servers_off",
				"userServers[2].url url_not_allowed",
				"userServers[2].id user_servers_off",
				"userServers[3].id user_servers_off",
			},
		},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			v := vetUserServers(t, tc.mode)
			kept, dropped, warnings := outcome(v)
			assert.Equal(t, tc.kept, kept, "kept servers")
			assert.Equal(t, tc.dropped, dropped, "dropped, with the userServers paths")
			assert.Equal(t, tc.warnings, warnings, "warnings")
		})
	}
}

// A kept user server's credential is a secret like a catalog server's: a placeholder for the
// plugin, in the redaction set.
func TestVetUserServerSecrets(t *testing.T) {
	t.Parallel()
	v := vetUserServers(t, "remote")
	srv := v.Request().Servers[1]
	require.Equal(t, "u_notes", srv.ID)
	require.Len(t, srv.Headers, 1)
	assert.True(t, srv.Headers[0].Secret, "the user server's Authorization header is a secret")
	assert.NotContains(t, srv.Headers[0].Value, "notes-secret", "the plugin sees a placeholder")
	assert.Contains(t, v.Redactions(), "Bearer notes-secret", "the value is redacted")
}

func TestUserServersInTheInput(t *testing.T) {
	t.Parallel()
	e, err := New(context.Background(), Config{})
	require.NoError(t, err)
	req, _, err := spec.Parse([]byte(userServersRequest))
	require.NoError(t, err)
	doc, err := e.InputDocument(req, nil, "claude", nil)
	require.NoError(t, err)
	var got []string
	for _, s := range doc.(map[string]any)["servers"].([]any) {
		m := s.(map[string]any)
		got = append(got, m["source"].(string)+" "+m["id"].(string))
	}
	assert.Equal(t, []string{"catalog docs", "catalog u_notes", "user u_notes", "user u_runner", "user u_plain", "user u_hooked"}, got,
		"input.servers holds the catalog's servers, then the user's, each with its source")
}
