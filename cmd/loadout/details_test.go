package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/internal/testplugins"
)

// detailsRequest has a shared server, a per-session stdio server with a secret, a server
// shared across a space, and a user server (dropped: user servers are off by default).
const detailsRequest = `{"run":{"user":"alice"},"mcpServers":[
  {"id":"team-docs","transport":"http","url":"https://docs.example.com/mcp","credentials":"shared",
   "sharedAuthority":"the platform team","users":["alice"],"headers":{"Authorization":"Bearer team-secret-77a1"}},
  {"id":"files","command":"/usr/bin/mcp-files","env":{"B":"2","A":"1","KEY":"files-secret-2b9c"},"secretKeys":["KEY"]},
  {"id":"wiki","transport":"http","url":"https://wiki.example.com/mcp","scope":"space"}
],"userServers":[{"id":"mine","transport":"http","url":"https://mine.example.com/mcp"}]}`

func renderDetails(t *testing.T, harness, body string) host.Result {
	t.Helper()
	req := filepath.Join(t.TempDir(), "request.json")
	require.NoError(t, os.WriteFile(req, []byte(body), 0o644))
	args := append([]string{"render", "--harness", harness, "--dry-run", "--format", "json", req}, pluginArgs(t)...)
	code, stdout, stderr := runCLI(t, "", args...)
	require.Equal(t, exitOK, code, "loadout %v: stderr %s", args, stderr)
	for _, s := range []string{"team-secret-77a1", "files-secret-2b9c"} {
		require.NotContains(t, stdout, s, "the result holds no secret")
	}
	sch, err := jsonschema.NewCompiler().Compile(filepath.Join(testplugins.Root(t), "docs", "result.schema.json"))
	require.NoError(t, err, "compile the result schema")
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(stdout)))
	require.NoError(t, err)
	require.NoError(t, sch.Validate(inst), "the result against docs/result.schema.json:\n%s", stdout)
	var res host.Result
	require.NoError(t, json.Unmarshal([]byte(stdout), &res), "result JSON: %s", stdout)
	return res
}

func TestRenderServerDetails(t *testing.T) {
	keys := map[string]string{}
	for _, h := range []string{"claude", "codex", "pi"} {
		t.Run(h, func(t *testing.T) {
			res := renderDetails(t, h, detailsRequest)
			require.Equal(t, []string{"team-docs", "files", "wiki"}, res.Servers)
			require.Len(t, res.ServerDetails, 3, "one detail per kept server")
			var got [][4]string
			for i, d := range res.ServerDetails {
				assert.Equal(t, res.Servers[i], d.ID, "details follow the order of servers")
				assert.Regexp(t, "^[0-9a-f]{64}$", d.InstanceKey, "%s: the instance key is a hex SHA-256", d.ID)
				got = append(got, [4]string{d.ID, d.Source, d.Scope, d.SharedAuthority})
				if prev, ok := keys[d.ID]; ok {
					assert.Equal(t, prev, d.InstanceKey, "%s: the key does not depend on the harness", d.ID)
				}
				keys[d.ID] = d.InstanceKey
			}
			assert.Equal(t, [][4]string{
				{"team-docs", "catalog", "session", "the platform team"},
				{"files", "catalog", "session", ""},
				{"wiki", "catalog", "space", ""},
			}, got)
			assert.Equal(t, "shared", res.ServerDetails[0].Credentials)

			notice := host.SharedNotice("the platform team")
			assert.Contains(t, res.Prompt, host.SharedPromptHeading+"\n\n- team-docs: "+notice+"\n",
				"the prompt says whose credential the shared server hands out: %s", res.Prompt)
			var warned bool
			for _, w := range res.Warnings {
				if w.Code == "shared_credential" && w.Server == "team-docs" {
					warned = true
					assert.Equal(t, notice, w.Message, "the policy warning and the prompt say the same")
				}
			}
			assert.True(t, warned, "the policy warns about the shared server: %+v", res.Warnings)
		})
	}
}

// The same servers with env and headers in another order have the same keys; another env
// value changes the one server it belongs to.
func TestRenderInstanceKeysFollowTheValues(t *testing.T) {
	keysOf := func(body string) map[string]string {
		res := renderDetails(t, "claude", body)
		out := map[string]string{}
		for _, d := range res.ServerDetails {
			out[d.ID] = d.InstanceKey
		}
		return out
	}
	want := keysOf(detailsRequest)
	reordered := `{"run":{"user":"alice"},"mcpServers":[
  {"id":"team-docs","transport":"http","url":"https://docs.example.com/mcp","credentials":"shared",
   "sharedAuthority":"the platform team","users":["alice"],"headers":{"Authorization":"Bearer team-secret-77a1"}},
  {"id":"files","command":"/usr/bin/mcp-files","env":{"KEY":"files-secret-2b9c","A":"1","B":"2"},"secretKeys":["KEY"]},
  {"id":"wiki","transport":"http","url":"https://wiki.example.com/mcp","scope":"space"}
]}`
	assert.Equal(t, want, keysOf(reordered), "env in another order")
	changed := `{"run":{"user":"alice"},"mcpServers":[
  {"id":"team-docs","transport":"http","url":"https://docs.example.com/mcp","credentials":"shared",
   "sharedAuthority":"the platform team","users":["alice"],"headers":{"Authorization":"Bearer team-secret-77a1"}},
  {"id":"files","command":"/usr/bin/mcp-files","env":{"B":"2","A":"1","KEY":"files-secret-2b9d"},"secretKeys":["KEY"]},
  {"id":"wiki","transport":"http","url":"https://wiki.example.com/mcp","scope":"app"}
]}`
	got := keysOf(changed)
	assert.Equal(t, want["team-docs"], got["team-docs"], "an unchanged server keeps its key")
	assert.NotEqual(t, want["files"], got["files"], "another secret value, another key")
	assert.NotEqual(t, want["wiki"], got["wiki"], "another scope, another key")
}

// A prompt without a shared server gets no shared-credentials section.
func TestRenderPromptWithoutSharedServer(t *testing.T) {
	res := renderDetails(t, "codex", `{"mcpServers":[{"id":"wiki","transport":"http","url":"https://wiki.example.com/mcp"}]}`)
	assert.NotContains(t, res.Prompt, host.SharedPromptHeading)
	require.Len(t, res.ServerDetails, 1)
	assert.Empty(t, res.ServerDetails[0].SharedAuthority)
	assert.Empty(t, res.ServerDetails[0].Credentials)
}

// A sharedAuthority that quotes a secret reaches neither the result, nor the prompt, nor the
// warning: the secret is masked wherever the text goes.
func TestRenderSharedAuthorityIsMasked(t *testing.T) {
	body := `{"run":{"user":"alice"},"mcpServers":[
  {"id":"team-docs","transport":"http","url":"https://docs.example.com/mcp","credentials":"shared",
   "sharedAuthority":"ops, key Bearer team-secret-77a1","headers":{"Authorization":"Bearer team-secret-77a1"}}]}`
	res := renderDetails(t, "claude", body) // fails on any secret in the output
	require.Len(t, res.ServerDetails, 1)
	got := res.ServerDetails[0].SharedAuthority
	assert.Equal(t, "ops, key [REDACTED]", got, "the secret is masked")
	assert.Contains(t, res.Prompt, "- team-docs: "+host.SharedNotice(got)+"\n")
}
