package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileBody has what the default policies refuse: a plain-http external server, NODE_OPTIONS
// in a stdio server's env, and an X-Api-Key header that secretKeys does not list.
const hostileBody = `{"harness":"claude","mcpServers":[
	{"id":"plain","transport":"http","url":"http://mcp.corp.example/mcp"},
	{"id":"node","command":"mcp-files","env":{"NODE_OPTIONS":"--require /tmp/x.js","KEEP":"1"}},
	{"id":"keyed","transport":"http","url":"https://mcp.corp.example/mcp","headers":{"X-Api-Key":"cleartext-key-7781"}}]}`

// evalOut is what `policy eval --format json` prints, the parts these tests read.
type evalOut struct {
	Sources []struct{ Kind, Name, Revision string } `json:"sources"`
	Servers []string                                `json:"servers"`
	Dropped []struct{ Field, Code, Rule string }    `json:"dropped"`
	Rules   []struct {
		Rule     string `json:"rule"`
		Elements []any  `json:"elements"`
	} `json:"rules"`
}

func evalHostile(t *testing.T, args ...string) evalOut {
	t.Helper()
	code, stdout, stderr := runCLI(t, hostileBody, append([]string{"policy", "eval", "--format", "json"}, append(args, "-")...)...)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	var out evalOut
	require.NoError(t, json.Unmarshal([]byte(stdout), &out), stdout)
	return out
}

// defaultsHeld reports what the default rules decided about hostileBody: the plain-http server
// refused, NODE_OPTIONS dropped, X-Api-Key declared a secret.
func defaultsHeld(out evalOut) (plainRefused, nodeOptionsDropped, apiKeySecret bool) {
	plainRefused = !strings.Contains(strings.Join(out.Servers, ","), "plain")
	for _, d := range out.Dropped {
		if d.Field == "mcpServers[1].env.NODE_OPTIONS" {
			nodeOptionsDropped = true
		}
	}
	for _, r := range out.Rules {
		if r.Rule == "data.loadout.secrets.secret" {
			b, _ := json.Marshal(r.Elements)
			apiKeySecret = strings.Contains(string(b), `"X-Api-Key"`)
		}
	}
	return
}

// A directory holding only a team's rule keeps every default protection, as a directory and
// as a bundle; eval lists the sources in force. Replacing the defaults takes a flag that says
// so, and then the default protections are gone.
func TestTeamPoliciesKeepTheDefaults(t *testing.T) {
	dir := corpPolicies(t)
	for name, args := range map[string][]string{
		"directory": {"--policies", dir},
		"bundle":    {"--policies", writeBundleFile(t, dir)},
	} {
		t.Run(name, func(t *testing.T) {
			out := evalHostile(t, args...)
			plain, node, key := defaultsHeld(out)
			assert.True(t, plain, "the plain-http external server is refused: %+v", out)
			assert.True(t, node, "NODE_OPTIONS is dropped: %+v", out.Dropped)
			assert.True(t, key, "X-Api-Key is a secret: %+v", out.Rules)
			require.Len(t, out.Sources, 2, "eval lists every source in force: %+v", out.Sources)
			assert.Equal(t, "defaults", out.Sources[0].Kind)
			assert.Equal(t, args[1], out.Sources[1].Name)
		})
	}

	out := evalHostile(t, "--policies", dir, "--replace-default-policies")
	plain, node, key := defaultsHeld(out)
	assert.False(t, plain || node || key, "replaced: the team's rules alone decide: %+v", out)
	require.Len(t, out.Sources, 1)
	assert.Equal(t, dir, out.Sources[0].Name)

	code, _, stderr := runCLI(t, hostileBody, "policy", "eval", "--replace-default-policies", "-")
	assert.Equal(t, exitUsage, code, "replacing the defaults with nothing is a usage error")
	assert.Contains(t, stderr, "--replace-default-policies")

	code, stdout, stderr := runCLI(t, hostileBody, "policy", "eval", "--policies", dir, "-")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "policy sources:\n  defaults embedded\n  directory "+dir+"\n", "the text output lists the sources")
}

// serve lays --policies over the defaults as render does.
func TestServeTeamPoliciesKeepTheDefaults(t *testing.T) {
	base, _, _ := startServeCmd(t, append([]string{"--policies", corpPolicies(t)}, pluginArgs(t)...)...)
	resp, err := http.Post(base+"/v1/render", "application/json", strings.NewReader(hostileBody))
	require.NoError(t, err)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	var res struct {
		Servers []string `json:"servers"`
	}
	require.NoError(t, json.Unmarshal(raw, &res))
	assert.Equal(t, []string{"node", "keyed"}, res.Servers, "the plain-http server is refused by the defaults: %s", raw)
	assert.NotContains(t, string(raw), "--require", "NODE_OPTIONS is dropped")
}

// writeBundleFile writes dir as an OPA bundle file and returns its path.
func writeBundleFile(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "team.tar.gz")
	require.NoError(t, os.WriteFile(path, policyBundle(t, dir, "team-1"), 0o644))
	return path
}

// A local bundle without --verification-key is used with a warning, and the render names the
// revision that decided it.
func TestRenderUnsignedBundleWarnsAndNamesItsRevision(t *testing.T) {
	bundle := writeBundleFile(t, corpPolicies(t))
	args := append([]string{"render", "--harness", "claude", "--dry-run", "--format", "json", "--policies", bundle, "-"}, pluginArgs(t)...)
	code, stdout, stderr := runCLI(t, `{"mcpServers":[{"id":"docs","transport":"http","url":"https://mcp.corp.example/mcp"}]}`, args...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "the policy bundle is not verified")
	var res struct {
		PolicyRevision string `json:"policyRevision"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &res), stdout)
	assert.Equal(t, "team-1", res.PolicyRevision)
}
