package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClaudeStrictMCPConfig shows with the real Claude Code why the claude profile requires
// --strict-mcp-config (docs/FORMATS.md §1.2, docs/SECURITY.md): the checkout holds a project
// `.mcp.json` naming a server no policy vetted. With the rendered args Claude loads exactly the
// rendered servers and never starts the intruder; with the same args less that one flag,
// `claude -p` connects the intruder without asking. The plan checker refuses a plan without
// the flag (host/hostile_test.go), so no plugin can open this door.
func TestClaudeStrictMCPConfig(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	canary, loadout := canaryBinary(t), loadoutBinary(t)
	sc := newScenario(t, "claude", c)
	r := renderWithLoadout(t, sc, loadout, canary, c)
	require.Contains(t, r.Args, "--strict-mcp-config", "the claude render must carry --strict-mcp-config")

	intruderOut := filepath.Join(sc.Dir, "intruder-report.json")
	writeJSON(t, filepath.Join(sc.Checkout, ".mcp.json"), map[string]any{"mcpServers": map[string]any{
		"intruder": map[string]any{"type": "stdio", "command": canary, "args": []string{intruderOut}}}})

	load := func(args []string) claudeInit {
		t.Helper()
		env := harnessEnv(c, sc.Home, r.Env, "CLAUDE_CONFIG_DIR="+sc.Config)
		argv := append([]string{c.Claude, "-p"}, args...)
		argv = append(argv, "--output-format", "stream-json", "--verbose", "--", "Reply with OK.")
		line, err := firstLine(context.Background(), claudeTimeout, sc.Checkout, env, func(b []byte) bool {
			return strings.Contains(string(b), `"subtype":"init"`)
		}, argv...)
		require.NoError(t, err, "claude %v: want the stream-json init line", args)
		var in claudeInit
		require.NoError(t, json.Unmarshal(line, &in), "decode claude init line %s", line)
		return in
	}
	names := func(in claudeInit) map[string]string {
		m := map[string]string{}
		for _, s := range in.MCPServers {
			m[s.Name] = s.Status
		}
		return m
	}

	strict := names(load(r.Args))
	assert.NotContains(t, strict, "intruder", "with --strict-mcp-config Claude must ignore the checkout's .mcp.json")
	for _, id := range r.Servers {
		assert.Contains(t, strict, id, "with --strict-mcp-config Claude still loads the rendered server %q", id)
	}
	_, err := os.Stat(intruderOut)
	assert.True(t, os.IsNotExist(err), "with --strict-mcp-config the intruder must never start (stat: %v)", err)

	loose := slices.DeleteFunc(slices.Clone(r.Args), func(a string) bool { return a == "--strict-mcp-config" })
	require.Len(t, loose, len(r.Args)-1, "exactly one --strict-mcp-config to remove")
	open := names(load(loose))
	assert.Equal(t, "connected", open["intruder"], "without --strict-mcp-config, claude -p connects the checkout's server unasked")
	_, err = os.Stat(intruderOut)
	assert.NoError(t, err, "without --strict-mcp-config the intruder process was started")
}

// TestCopilotIgnoresCheckoutServers shows with the real Copilot CLI why the copilot profile
// pins COPILOT_ALLOW_ALL=false (docs/FORMATS.md §5.2): the checkout holds a `.mcp.json` naming
// a server no policy vetted, and the caller's environment has COPILOT_ALLOW_ALL=true, which
// makes Copilot trust the working directory. With the rendered env applied over the caller's,
// Copilot loads exactly the rendered servers and never starts the intruder; with the same env
// less that one variable, `copilot -p` connects the intruder. The plan checker refuses a plan
// that drops or flips it (hostile attack env-trust-all).
func TestCopilotIgnoresCheckoutServers(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	canary, loadout := canaryBinary(t), loadoutBinary(t)
	sc := newScenario(t, "copilot", c)
	r := renderWithLoadout(t, sc, loadout, canary, c)
	require.Contains(t, r.Env, envVar{Name: "COPILOT_ALLOW_ALL", Value: "false"}, "the copilot render must pin COPILOT_ALLOW_ALL=false")

	intruderOut := filepath.Join(sc.Dir, "intruder-report.json")
	writeJSON(t, filepath.Join(sc.Checkout, ".mcp.json"), map[string]any{"mcpServers": map[string]any{
		"intruder": map[string]any{"command": canary, "args": []string{intruderOut}, "tools": []string{"*"}}}})

	load := func(planEnv []envVar) map[string]string {
		t.Helper()
		// The caller's environment first, the run's env over it, as a platform launches the CLI.
		env := harnessEnv(c, sc.Home, planEnv, "COPILOT_ALLOW_ALL=true", "COPILOT_OFFLINE=true",
			"COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:"+sc.Port, "COPILOT_MODEL=gpt-4o", "COPILOT_AUTO_UPDATE=false")
		argv := append([]string{c.Copilot}, r.Args...)
		argv = append(argv, "-p", "Reply with OK.", "--output-format", "json")
		var loaded copilotEvent
		_, err := firstLine(context.Background(), copilotTimeout, sc.Checkout, env, func(b []byte) bool {
			var ev copilotEvent
			if json.Unmarshal(b, &ev) != nil || ev.Type != "session.mcp_servers_loaded" {
				return false
			}
			loaded = ev
			return true
		}, argv...)
		require.NoError(t, err, "copilot -p: want session.mcp_servers_loaded")
		status := map[string]string{}
		for _, s := range loaded.Data.Servers {
			status[s.Name] = s.Status
		}
		return status
	}

	pinned := load(r.Env)
	assert.NotContains(t, pinned, "intruder", "with COPILOT_ALLOW_ALL=false Copilot must ignore the checkout's .mcp.json")
	for _, id := range r.Servers {
		assert.Contains(t, pinned, id, "with COPILOT_ALLOW_ALL=false Copilot still loads the rendered server %q", id)
	}
	_, err := os.Stat(intruderOut)
	assert.True(t, os.IsNotExist(err), "with COPILOT_ALLOW_ALL=false the intruder must never start (stat: %v)", err)

	loose := slices.DeleteFunc(slices.Clone(r.Env), func(e envVar) bool { return e.Name == "COPILOT_ALLOW_ALL" })
	require.Len(t, loose, len(r.Env)-1, "exactly one COPILOT_ALLOW_ALL to remove")
	open := load(loose)
	assert.Equal(t, "connected", open["intruder"], "with the caller's COPILOT_ALLOW_ALL=true, copilot -p connects the checkout's server: %v", open)
	_, err = os.Stat(intruderOut)
	assert.NoError(t, err, "with the caller's COPILOT_ALLOW_ALL=true the intruder process was started")
}

// TestGeminiIgnoresCheckoutSettings shows with the real Gemini CLI why the gemini profile pins
// GEMINI_CLI_TRUST_WORKSPACE=false (docs/FORMATS.md §5.1): the checkout holds a
// `.gemini/settings.json` naming a server no policy vetted, and the caller's environment has
// GEMINI_CLI_TRUST_WORKSPACE=true (a common CI setting), under which Gemini trusts the folder
// when it loads its settings, before it reads --skip-trust. With the rendered env applied over
// the caller's, `gemini --skip-trust -p` starts the rendered canary and never the intruder;
// with the same env less that one variable, the intruder starts. Gemini's model traffic goes to
// a loopback proxy (HTTPS_PROXY): its first model call says the servers were started.
func TestGeminiIgnoresCheckoutSettings(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	canary, loadout := canaryBinary(t), loadoutBinary(t)
	sc := newScenario(t, "gemini", c)
	r := renderWithLoadout(t, sc, loadout, canary, c)
	require.Contains(t, r.Env, envVar{Name: "GEMINI_CLI_TRUST_WORKSPACE", Value: "false"}, "the gemini render must pin GEMINI_CLI_TRUST_WORKSPACE=false")

	intruderOut := filepath.Join(sc.Dir, "intruder-report.json")
	writeJSON(t, filepath.Join(sc.Checkout, ".gemini", "settings.json"), map[string]any{"mcpServers": map[string]any{
		"intruder": map[string]any{"command": canary, "args": []string{intruderOut}}}})

	load := func(planEnv []envVar) {
		t.Helper()
		_ = os.Remove(intruderOut)
		_ = os.Remove(sc.CanaryOut)
		proxy := newProxyRecorder(t)
		// The caller's environment first, the run's env over it, as a platform launches the CLI.
		env := harnessEnv(c, sc.Home, planEnv, "GEMINI_CLI_TRUST_WORKSPACE=true", "GEMINI_API_KEY=dummy",
			"HTTPS_PROXY="+proxy.URL, "HTTP_PROXY="+proxy.URL, "NO_PROXY=")
		argv := append([]string{c.Gemini}, r.Args...)
		argv = append(argv, "-p", "Reply with OK.")
		res, err := runUntil(context.Background(), geminiTimeout, sc.Checkout, env, proxy.connected, argv...)
		require.NoError(t, err, "gemini --skip-trust -p: want a model call through the loopback proxy (stderr %s)", tail(res.Stderr))
	}

	load(r.Env)
	_, err := os.Stat(sc.CanaryOut)
	assert.NoError(t, err, "with GEMINI_CLI_TRUST_WORKSPACE=false and --skip-trust Gemini still starts the rendered canary")
	_, err = os.Stat(intruderOut)
	assert.True(t, os.IsNotExist(err), "with GEMINI_CLI_TRUST_WORKSPACE=false the checkout's server must never start (stat: %v)", err)

	loose := slices.DeleteFunc(slices.Clone(r.Env), func(e envVar) bool { return e.Name == "GEMINI_CLI_TRUST_WORKSPACE" })
	require.Len(t, loose, len(r.Env)-1, "exactly one GEMINI_CLI_TRUST_WORKSPACE to remove")
	load(loose)
	_, err = os.Stat(intruderOut)
	assert.NoError(t, err, "with the caller's GEMINI_CLI_TRUST_WORKSPACE=true Gemini starts the checkout's server")
}

// proxyRecorder is a loopback http proxy that refuses every CONNECT and records that one for
// the Gemini API came (the first model call, which follows the start of the MCP servers; a
// telemetry host may come earlier): a CLI pointed at it through HTTPS_PROXY sends no byte past
// this machine.
type proxyRecorder struct {
	*httptest.Server
	seen atomic.Bool
}

func newProxyRecorder(t *testing.T) *proxyRecorder {
	p := &proxyRecorder{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasPrefix(req.Host, "generativelanguage.") {
			p.seen.Store(true)
		}
		http.Error(w, "loadout e2e: no network here", http.StatusBadGateway)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *proxyRecorder) connected() bool { return p.seen.Load() }

// runUntil starts argv and kills its process group once done reports true (polled), or fails
// when the process exits or the timeout passes first.
func runUntil(ctx context.Context, timeout time.Duration, dir string, env []string, done func() bool, argv ...string) (result, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := command(ctx, dir, env, argv...)
	var out, errb lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		return result{}, fmt.Errorf("%s: %w", argv[0], err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if done() {
				_ = killGroup(cmd)
				<-exited
				return result{Stdout: out.b.Bytes(), Stderr: errb.b.Bytes()}, nil
			}
		case <-exited:
			if done() {
				return result{Stdout: out.b.Bytes(), Stderr: errb.b.Bytes()}, nil
			}
			return result{Stdout: out.b.Bytes(), Stderr: errb.b.Bytes()}, fmt.Errorf("%s exited before the awaited event", argv[0])
		case <-ctx.Done():
			<-exited
			return result{Stdout: out.b.Bytes(), Stderr: errb.b.Bytes()}, fmt.Errorf("%s: no awaited event within %s", argv[0], timeout)
		}
	}
}

// TestGeminiCheckoutEnvFile: the checkout's .env files never reach Gemini CLI's environment
// (docs/FORMATS.md §5.1). Under --skip-trust Gemini reads <checkout>/.gemini/.env when it
// validates its auth method and sets every variable its environment lacks; in the untrusted
// load before that, <checkout>/.env may set GEMINI_API_KEY and three other auth variables. The
// profile pins security.auth.useExternal (no such validation) and advanced.ignoreLocalEnv (no
// .env but the home one). Each half runs the real CLI twice: on the render, and on the render
// with its pinned setting taken out, where the planted file must show, so that the test fails
// should the setting stop working.
func TestGeminiCheckoutEnvFile(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	canary, loadout := canaryBinary(t), loadoutBinary(t)
	// setup renders into a fresh directory and returns its checkout, the home and the rendered
	// settings.json, after planting file (relative to the checkout) with content.
	setup := func(t *testing.T, file, content string) (checkout, home, settings string, rr renderResult) {
		dir := t.TempDir()
		home = filepath.Join(dir, "home")
		require.NoError(t, os.MkdirAll(home, 0o755))
		req, err := json.Marshal(map[string]any{
			"harness": "gemini",
			"run":     map[string]any{"ambientAuth": false, "user": "e2e"},
			"mcpServers": []any{map[string]any{"id": "canary", "transport": "stdio", "command": canary,
				"args": []string{filepath.Join(dir, "canary-report.json")}}},
		})
		require.NoError(t, err)
		rr = renderWithHome(t, loadout, "gemini", dir, home, c, req)
		for _, w := range rr.Warnings {
			assert.NotEqual(t, "checkout_env_file", w.Code, "the checkout's .env files are kept out: no warning")
		}
		checkout = filepath.Join(dir, "checkout")
		require.NoError(t, os.MkdirAll(filepath.Join(checkout, ".gemini"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(checkout, file), []byte(content), 0o600))
		for _, e := range rr.Env {
			if e.Name == "GEMINI_CLI_HOME" {
				settings = filepath.Join(e.Value, ".gemini", "settings.json")
			}
		}
		require.FileExists(t, settings)
		return checkout, home, settings, rr
	}
	// unpin rewrites settings without the pinned setting of the given path.
	unpin := func(t *testing.T, settings, top, key string) {
		data, err := os.ReadFile(settings)
		require.NoError(t, err)
		var cfg map[string]any
		require.NoError(t, json.Unmarshal(data, &cfg))
		obj, ok := cfg[top].(map[string]any)
		require.True(t, ok, "settings.json has %s", top)
		require.Contains(t, obj, key)
		delete(cfg, top)
		data, err = json.Marshal(cfg)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(settings, data, 0o600))
	}
	prompt := []string{"-p", "Reply with OK."}

	t.Run(".gemini/.env", func(t *testing.T) {
		t.Parallel()
		// The caller's HTTP_PROXY is the one Gemini uses unless the file's HTTPS_PROXY, which
		// Gemini prefers, is read: which recorder sees the model call tells which.
		caller, planted := newProxyRecorder(t), newProxyRecorder(t)
		checkout, home, settings, rr := setup(t, ".gemini/.env", "HTTPS_PROXY="+planted.URL+"\n")
		env := harnessEnv(c, home, rr.Env, "GEMINI_API_KEY=dummy", "HTTP_PROXY="+caller.URL, "NO_PROXY=")
		argv := append(append([]string{c.Gemini}, rr.Args...), prompt...)
		either := func() bool { return caller.connected() || planted.connected() }
		res, err := runUntil(context.Background(), geminiTimeout, checkout, env, either, argv...)
		require.NoError(t, err, "gemini: want a model call (stderr %s)", tail(res.Stderr))
		assert.True(t, caller.connected(), "the model call goes through the caller's proxy")
		assert.False(t, planted.connected(), "the proxy of the checkout's .gemini/.env is never used")

		unpin(t, settings, "security", "auth")
		caller.seen.Store(false)
		res, err = runUntil(context.Background(), geminiTimeout, checkout, env, either, argv...)
		require.NoError(t, err, "gemini without useExternal: want a model call (stderr %s)", tail(res.Stderr))
		assert.True(t, planted.connected(), "without useExternal the checkout's .gemini/.env is read")
		assert.False(t, caller.connected(), "and its proxy is used, not the caller's")
	})

	t.Run(".env", func(t *testing.T) {
		t.Parallel()
		// No key in the caller's environment: the checkout's GEMINI_API_KEY is the only one.
		caller := newProxyRecorder(t)
		checkout, home, settings, rr := setup(t, ".env", "GEMINI_API_KEY=from-the-checkout\n")
		env := harnessEnv(c, home, rr.Env, "HTTP_PROXY="+caller.URL, "HTTPS_PROXY="+caller.URL, "NO_PROXY=")
		argv := append(append([]string{c.Gemini}, rr.Args...), prompt...)
		res, err := run(context.Background(), geminiTimeout, checkout, env, nil, argv...)
		require.NoError(t, err)
		assert.NotEqual(t, 0, res.Exit, "with no key of its own Gemini stops")
		assert.Contains(t, string(res.Stderr)+string(res.Stdout), "GEMINI_API_KEY", "it asks for a key")
		assert.False(t, caller.connected(), "no model call with the checkout's key")

		unpin(t, settings, "advanced", "ignoreLocalEnv")
		res, err = runUntil(context.Background(), geminiTimeout, checkout, env, caller.connected, argv...)
		require.NoError(t, err, "gemini without ignoreLocalEnv: want a model call with the checkout's key (stderr %s)", tail(res.Stderr))
	})
}
