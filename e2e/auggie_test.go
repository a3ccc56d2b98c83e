package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// auggieTimeout bounds one offline Auggie run. With a session naming a closed loopback port,
// `auggie -p` starts its MCP servers (waiting at most 10 s for them), then retries the Augment
// service without end, so every such run ends at this timeout.
const auggieTimeout = 25 * time.Second

// auggieDir is a scratch layout for Auggie: a git checkout, a private HOME and the directory the
// canaries report into.
type auggieDir struct {
	Dir, Checkout, Home, Out string
}

func newAuggieDir(t *testing.T) auggieDir {
	t.Helper()
	dir := t.TempDir()
	d := auggieDir{
		Dir:      dir,
		Checkout: filepath.Join(dir, "checkout"),
		Home:     filepath.Join(dir, "home"),
		Out:      filepath.Join(dir, "out"),
	}
	for _, p := range []string{filepath.Join(d.Checkout, ".git"), filepath.Join(d.Checkout, ".augment"), filepath.Join(d.Home, ".augment"), d.Out} {
		require.NoError(t, os.MkdirAll(p, 0o700), "mkdir %s", p)
	}
	return d
}

// servers writes {"mcpServers": servers} to path.
func (d auggieDir) servers(t *testing.T, path string, servers map[string]any) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"mcpServers": servers})
	require.NoError(t, err, "encode %s", path)
	require.NoError(t, os.WriteFile(path, b, 0o600), "write %s", path)
}

// canary is a stdio server entry running the canary, which reports to <out>/<id>.json.
func (d auggieDir) canary(canary, id string, args ...string) map[string]any {
	return map[string]any{"command": canary, "args": append([]string{filepath.Join(d.Out, id+".json")}, args...)}
}

// session is an AUGMENT_SESSION_AUTH value naming a closed loopback port as the Augment tenant:
// it is no credential, and every call to the service fails at once.
func auggieSession(t *testing.T) string {
	t.Helper()
	return `{"accessToken":"dummy","tenantURL":"http://127.0.0.1:` + closedPort(t) + `/","scopes":["email"]}`
}

// print runs `auggie -p hello` in the checkout with the environment harnessEnv builds for d and
// extra. A run that reaches the model call never ends, so a timeout is expected and not an error.
func (d auggieDir) print(t *testing.T, c clis, extra []string, args ...string) result {
	t.Helper()
	env := harnessEnv(c, d.Home, nil, extra...)
	argv := append([]string{c.Auggie, "-p", "hello"}, args...)
	res, err := run(context.Background(), auggieTimeout, d.Checkout, env, nil, argv...)
	if err != nil {
		require.Contains(t, err.Error(), "timed out", "auggie -p")
	}
	return res
}

func (d auggieDir) report(t *testing.T, id string, res result) canaryReport {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(d.Out, id+".json"))
	require.NoError(t, err, "Auggie must start server %s (stdout: %s, stderr: %s)", id, tail(res.Stdout), tail(res.Stderr))
	var rep canaryReport
	require.NoError(t, json.Unmarshal(raw, &rep), "decode canary report %s", raw)
	return rep
}

func (d auggieDir) started(id string) bool {
	_, err := os.Stat(filepath.Join(d.Out, id+".json"))
	return err == nil
}

// TestAuggieNeedsLogin records with the real Auggie the first reason it has no built-in renderer
// (docs/FORMATS.md §5.9): without an Augment session (`auggie login`, or AUGMENT_SESSION_AUTH)
// a run refuses to start, before any MCP server is started, so no offline run can load what a
// renderer writes.
func TestAuggieNeedsLogin(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	canary := canaryBinary(t)
	d := newAuggieDir(t)
	cfg := filepath.Join(d.Dir, "mcp.json")
	d.servers(t, cfg, map[string]any{"s": d.canary(canary, "s")})

	res := d.print(t, c, nil, "--mcp-config", cfg)
	assert.Equal(t, 1, res.Exit, "auggie -p without a session fails")
	assert.Contains(t, string(res.Stdout)+string(res.Stderr), "No auth provided", "auggie names the missing login")
	assert.False(t, d.started("s"), "no MCP server is started without a login")
}

// TestAuggieRunsArgsThroughShell records with the real Auggie, given a session on a closed
// loopback port, what it does with MCP servers (docs/FORMATS.md §5.9): --mcp-config replaces
// the servers of ~/.augment/settings.json and the checkout's .augment/settings.json and
// settings.local.json, which are all loaded without it; it expands ${NAME} itself (an unset one
// fails the server), then joins command and args into one line that /bin/sh -c parses again,
// so a space splits an argument, $(…) runs and a quote breaks the server; and a stdio server
// gets only the entry's env over PATH and HOME.
func TestAuggieRunsArgsThroughShell(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	canary := canaryBinary(t)

	// Without --mcp-config, the home's and the checkout's settings all load.
	d := newAuggieDir(t)
	d.servers(t, filepath.Join(d.Home, ".augment", "settings.json"), map[string]any{"h": d.canary(canary, "h")})
	d.servers(t, filepath.Join(d.Checkout, ".augment", "settings.json"), map[string]any{"p": d.canary(canary, "p")})
	d.servers(t, filepath.Join(d.Checkout, ".augment", "settings.local.json"), map[string]any{"l": d.canary(canary, "l")})
	res := d.print(t, c, []string{"AUGMENT_SESSION_AUTH=" + auggieSession(t)})
	for _, id := range []string{"h", "p", "l"} {
		assert.True(t, d.started(id), "server %s of the home's or checkout's settings starts (stderr: %s)", id, tail(res.Stderr))
	}

	// With --mcp-config, only its servers load; values go through ${NAME} and then a shell.
	cfg := filepath.Join(d.Dir, "mcp.json")
	d.servers(t, cfg, map[string]any{
		"s": map[string]any{
			"command": canary,
			"args":    []string{filepath.Join(d.Out, "s.json"), "a$E2E_HARNESS_ONLY", "b${E2E_HARNESS_ONLY}", "two words", "$(echo ran)", "~/x"},
			"env":     map[string]string{"A": "${E2E_HARNESS_ONLY}", "B": "$E2E_HARNESS_ONLY", "C": "lit"},
			"bogus":   1,
		},
		"q": d.canary(canary, "q", `s3cr$t\"'`),
		"u": d.canary(canary, "u", "${E2E_UNSET}"),
	})
	before, err := os.ReadFile(cfg)
	require.NoError(t, err)
	for _, id := range []string{"h", "p", "l"} {
		require.NoError(t, os.Remove(filepath.Join(d.Out, id+".json")))
	}
	res = d.print(t, c, []string{"AUGMENT_SESSION_AUTH=" + auggieSession(t), "HOSTONLY=leak"}, "--mcp-config", cfg)
	out := string(res.Stdout) + string(res.Stderr)
	for _, id := range []string{"h", "p", "l"} {
		assert.False(t, d.started(id), "--mcp-config keeps server %s out", id)
	}
	rep := d.report(t, "s", res)
	require.NotEmpty(t, rep.Cmdlines, "the canary reports its command line")
	assert.Equal(t, []string{
		canary, filepath.Join(d.Out, "s.json"),
		"a", "bharness-only-marker", "two", "words", "ran", filepath.Join(d.Home, "x"),
	}, rep.Cmdlines[0].Argv, "auggie expands ${NAME}, then a shell parses the line again")
	shell := false
	for _, cl := range rep.Cmdlines[1:] {
		if len(cl.Argv) >= 3 && cl.Argv[0] == "/bin/sh" && cl.Argv[1] == "-c" && strings.HasPrefix(cl.Argv[2], canary+" ") {
			shell = true
		}
	}
	assert.True(t, shell, "an ancestor of the server is /bin/sh -c <command line>: %v", rep.Cmdlines)
	env := envMap(rep.Env)
	assert.Equal(t, "harness-only-marker", env["A"], "${NAME} is expanded in env values")
	assert.Equal(t, "$E2E_HARNESS_ONLY", env["B"], "$NAME is not expanded in env values")
	assert.Equal(t, "lit", env["C"])
	for k := range env {
		if k == "HOSTONLY" || k == "E2E_HARNESS_ONLY" || k == "AUGMENT_SESSION_AUTH" {
			t.Errorf("auggie's variable %s reached the server", k)
		}
	}
	assert.False(t, d.started("q"), "a quote in an argument breaks the shell line: the server does not start")
	assert.False(t, d.started("u"), "a server with an unset ${NAME} does not start")
	assert.Contains(t, out, `Missing environment variable "E2E_UNSET"`, "auggie names the unset variable")
	after, err := os.ReadFile(cfg)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the --mcp-config file is only read")
	assert.Contains(t, out, "Could not fetch tenant MCP server configurations", "auggie asks the Augment service for more servers")
}
