package e2e

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clineTimeout bounds one offline Cline command.
const clineTimeout = 90 * time.Second

// TestClineRunsCheckoutCode records with the real Cline CLI why it has no built-in renderer
// (docs/FORMATS.md §5.7). Cline is started in a subdirectory of a git checkout that holds a
// .cline/hooks/TaskStart hook, a .cline/plugins module and skills in .cline/skills and
// .agents/skills, with its MCP settings file named by CLINE_MCP_SETTINGS_PATH, an empty
// --hooks-dir, the session kept in process (CLINE_SESSION_BACKEND_MODE=local) and a loopback
// model endpoint that answers 400. The checkout's hook and plugin run and its skills are
// offered to the model: nothing keeps them out. The settings file's server starts with its
// values as written (no expansion, a secret with $ \ " ' byte-exact), an unknown key is ignored,
// a disabled server is not started, the file is left byte for byte with its mode, and the server
// inherits Cline's whole environment.
func TestClineRunsCheckoutCode(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	canary := canaryBinary(t)
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	clineDir := filepath.Join(dir, "cline")
	checkout := filepath.Join(dir, "checkout")
	sub := filepath.Join(checkout, "sub")
	emptyHooks := filepath.Join(dir, "hooks")
	for _, p := range []string{home, clineDir, sub, emptyHooks} {
		require.NoError(t, os.MkdirAll(p, 0o700), "mkdir %s", p)
	}
	// A real repository: Cline looks for the workspace's .cline from the git top level.
	if b, err := exec.Command("git", "init", "-q", checkout).CombinedOutput(); err != nil {
		t.Fatalf("git init %s: %v: %s", checkout, err, b)
	}
	hookMark := filepath.Join(dir, "hook-ran")
	pluginMark := filepath.Join(dir, "plugin-ran")
	clineFile(t, filepath.Join(checkout, ".cline", "hooks", "TaskStart"), 0o700,
		"#!/bin/sh\ntouch '"+hookMark+"'\ncat >/dev/null\necho '{}'\n")
	clineFile(t, filepath.Join(checkout, ".cline", "plugins", "p.js"), 0o600,
		"require('fs').writeFileSync("+clineJS(pluginMark)+", 'x'); module.exports = {name: 'p'};\n")
	clineFile(t, filepath.Join(checkout, ".cline", "skills", "e2e-checkout-cline-skill", "SKILL.md"), 0o600,
		"---\nname: e2e-checkout-cline-skill\ndescription: from the checkout\n---\nbody\n")
	clineFile(t, filepath.Join(checkout, ".agents", "skills", "e2e-checkout-agents-skill", "SKILL.md"), 0o600,
		"---\nname: e2e-checkout-agents-skill\ndescription: from the checkout\n---\nbody\n")

	const secret = `s3cr$t \ " ' end`
	out := filepath.Join(dir, "vetted.json")
	offOut := filepath.Join(dir, "off.json")
	settings := filepath.Join(dir, "mcp.json")
	writeJSON(t, settings, map[string]any{"mcpServers": map[string]any{
		"vetted": map[string]any{
			"command":  canary,
			"args":     []string{out, "a$E2E_HARNESS_ONLY", "b${E2E_HARNESS_ONLY}", "${env:E2E_HARNESS_ONLY}", "~/x"},
			"env":      map[string]string{"E2E_ENTRY": "x$E2E_HARNESS_ONLY", "E2E_SECRET": secret},
			"bogusKey": 1,
		},
		"off": map[string]any{"command": canary, "args": []string{offOut}, "disabled": true},
	}})
	require.NoError(t, os.Chmod(settings, 0o600))
	before, err := os.ReadFile(settings)
	require.NoError(t, err)

	model := newModelRecorder(t)
	env := harnessEnv(c, home, nil, "CLINE_DIR="+clineDir, "CLINE_MCP_SETTINGS_PATH="+settings, "CLINE_SESSION_BACKEND_MODE=local")
	res, err := run(context.Background(), clineTimeout, sub, env, nil, c.Cline,
		"auth", "-p", "openai-compatible", "-k", "dummy", "-m", "gpt-4o", "-b", model.URL+"/v1")
	require.NoError(t, err, "cline auth")
	require.Equal(t, 0, res.Exit, "cline auth exit status (stderr: %s)", tail(res.Stderr))
	res, err = run(context.Background(), clineTimeout, sub, env, nil, c.Cline,
		"--json", "--retries", "1", "-t", "60", "--hooks-dir", emptyHooks, "say hi")
	require.NoError(t, err, "cline run")

	texts := model.texts()
	require.NotEmpty(t, texts, "Cline must reach the model endpoint (stdout: %s, stderr: %s)", tail(res.Stdout), tail(res.Stderr))
	assert.FileExists(t, hookMark, "Cline runs the checkout's .cline/hooks/TaskStart, --hooks-dir notwithstanding")
	assert.FileExists(t, pluginMark, "Cline runs the checkout's .cline/plugins module")
	joined := strings.Join(texts, "\n")
	assert.True(t, strings.Contains(joined, "e2e-checkout-cline-skill"), "the checkout's .cline/skills are offered")
	assert.True(t, strings.Contains(joined, "e2e-checkout-agents-skill"), "the checkout's .agents/skills are offered")
	assert.True(t, slices.Contains(texts, "vetted__canary_ping"), "the model is offered <server>__<tool>")
	assert.NoFileExists(t, offOut, "a disabled server is not started")

	after, err := os.ReadFile(settings)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "Cline leaves its MCP settings file byte for byte")
	if fi, err := os.Stat(settings); assert.NoError(t, err) {
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "and keeps its mode")
	}

	raw, err := os.ReadFile(out)
	require.NoError(t, err, "Cline must start the settings file's server")
	var rep canaryReport
	require.NoError(t, json.Unmarshal(raw, &rep), "decode canary report %s", raw)
	require.NotEmpty(t, rep.Cmdlines)
	assert.Equal(t, []string{canary, out, "a$E2E_HARNESS_ONLY", "b${E2E_HARNESS_ONLY}", "${env:E2E_HARNESS_ONLY}", "~/x"},
		rep.Cmdlines[0].Argv, "args reach the server as written")
	got := map[string]string{}
	for _, kv := range rep.Env {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v
	}
	assert.Equal(t, "harness-only-marker", got["E2E_HARNESS_ONLY"], "a stdio server inherits Cline's whole environment")
	assert.Equal(t, "x$E2E_HARNESS_ONLY", got["E2E_ENTRY"], "env values are not expanded")
	assert.Equal(t, secret, got["E2E_SECRET"], "a secret with $ \\ \" ' arrives byte-exact")
}

// TestClineHubDaemonOutlivesRun records with the real Cline CLI where a run's session lives by
// default (docs/FORMATS.md §5.7): the first run starts a hub daemon that outlives it (the
// run's own session stays in the run), and a later run hands its session to that daemon, whose MCP servers are those of the first run's
// settings file, started with the daemon's environment. CLINE_HUB_PORT keeps the test's daemon
// apart from any other; the test kills the daemon it started.
func TestClineHubDaemonOutlivesRun(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	canary := canaryBinary(t)
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	checkout := filepath.Join(dir, "checkout")
	for _, p := range []string{home, checkout} {
		require.NoError(t, os.MkdirAll(p, 0o700), "mkdir %s", p)
	}
	settings := func(id string) (path, out string) {
		path, out = filepath.Join(dir, id+"-mcp.json"), filepath.Join(dir, id+".json")
		writeJSON(t, path, map[string]any{"mcpServers": map[string]any{id: map[string]any{"command": canary, "args": []string{out}}}})
		return path, out
	}
	firstSettings, firstOut := settings("first")
	secondSettings, secondOut := settings("second")
	model := newModelRecorder(t)
	env := func(settings string, extra ...string) []string {
		return harnessEnv(c, home, nil, append([]string{"CLINE_DIR=" + filepath.Join(dir, "cline"),
			"CLINE_HUB_PORT=" + closedPort(t), "CLINE_MCP_SETTINGS_PATH=" + settings}, extra...)...)
	}
	first := env(firstSettings, "E2E_FIRST_RUN=1")
	port, _ := lookupEnv(first, "CLINE_HUB_PORT")
	res, err := run(context.Background(), clineTimeout, checkout, first, nil, c.Cline,
		"auth", "-p", "openai-compatible", "-k", "dummy", "-m", "gpt-4o", "-b", model.URL+"/v1")
	require.NoError(t, err, "cline auth")
	require.Equal(t, 0, res.Exit, "cline auth exit status (stderr: %s)", tail(res.Stderr))
	t.Cleanup(func() { killClineDaemon(t, port) })
	_, err = run(context.Background(), clineTimeout, checkout, first, nil, c.Cline, "--json", "--retries", "1", "-t", "60", "say hi")
	require.NoError(t, err, "first cline run")
	require.FileExists(t, firstOut, "the first run starts its server")
	require.NoError(t, os.Remove(firstOut))
	// The run starts the daemon detached and does not wait for it; on a busy machine it may
	// listen only after the run has ended. Wait for it, as a later run of a launcher would
	// find it once it listens.
	require.Eventually(t, func() bool { return clineDaemonListening(port) }, clineTimeout, 250*time.Millisecond,
		"the first run leaves a hub daemon listening on CLINE_HUB_PORT %s", port)

	// The same port: the second run finds the daemon the first one started.
	second := setEnv(env(secondSettings), "CLINE_HUB_PORT", port)
	_, err = run(context.Background(), clineTimeout, checkout, second, nil, c.Cline, "--json", "--retries", "1", "-t", "60", "say hi")
	require.NoError(t, err, "second cline run")
	assert.NoFileExists(t, secondOut, "the second run's CLINE_MCP_SETTINGS_PATH does not reach the daemon")
	raw, err := os.ReadFile(firstOut)
	require.NoError(t, err, "the daemon starts the first run's servers for the second run")
	var rep canaryReport
	require.NoError(t, json.Unmarshal(raw, &rep), "decode canary report %s", raw)
	require.GreaterOrEqual(t, len(rep.Cmdlines), 2, "the canary reports its parent")
	assert.Contains(t, rep.Cmdlines[1].Argv, "--cline-hub-daemon", "the server's parent is the hub daemon, not the run")
	assert.Contains(t, rep.Cmdlines[1].Argv, port, "the daemon listens on CLINE_HUB_PORT")
	assert.Contains(t, rep.Env, "E2E_FIRST_RUN=1", "the daemon's servers get the first run's environment")
}

// killClineDaemon kills the Cline hub daemon listening on port.
func killClineDaemon(t *testing.T, port string) {
	t.Helper()
	for _, pid := range clineDaemonPIDs(port) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// clineDaemonPIDs lists the processes whose command line holds --cline-hub-daemon and
// --port port (the test chose a port nothing else used).
func clineDaemonPIDs(port string) []int {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var pids []int
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		argv := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		i := slices.Index(argv, "--port")
		if !slices.Contains(argv, "--cline-hub-daemon") || i < 0 || i+1 >= len(argv) || argv[i+1] != port {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// clineDaemonListening reports whether a Cline hub daemon for port is running and accepts
// connections on 127.0.0.1:port.
func clineDaemonListening(port string) bool {
	if len(clineDaemonPIDs(port)) == 0 {
		return false
	}
	conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", port), time.Second)
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}

// clineFile writes content to path with mode, creating its directory.
func clineFile(t *testing.T, path string, mode os.FileMode, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700), "mkdir for %s", path)
	require.NoError(t, os.WriteFile(path, []byte(content), mode), "write %s", path)
}

// clineJS quotes s as a JavaScript string literal (JSON's syntax is a subset).
func clineJS(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
