package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// Bounds of every harness subprocess. Claude waits up to MCP_TIMEOUT (30 s) for its servers
// before the init line.
const (
	claudeTimeout = 90 * time.Second
	codexTimeout  = 60 * time.Second
	piTimeout     = 60 * time.Second
	geminiTimeout = 120 * time.Second
	// copilotTimeout bounds `copilot -p` up to its first (failing) model call, after its
	// servers connected.
	copilotTimeout = 120 * time.Second
	// qwenTimeout bounds `qwen -p` up to its result line, after its first (failing) model call.
	qwenTimeout = 90 * time.Second
)

// checkHarness loads a rendered run with the harness's real CLI and checks it.
func checkHarness(t *testing.T, sc *scenario, r rendered, c clis) {
	t.Helper()
	// The render must not have started the canary; every report below comes from the harness.
	_ = os.Remove(sc.CanaryOut)
	for _, a := range r.Args {
		for _, s := range sc.Secrets {
			require.NotContains(t, a, s, "rendered %s arg %q must not hold a secret", sc.Harness, a)
		}
	}
	switch sc.Harness {
	case "claude":
		checkClaude(t, sc, r, c)
	case "codex":
		checkCodex(t, sc, r, c)
	case "pi":
		checkPi(t, sc, r, c)
	case "gemini":
		checkGemini(t, sc, r, c)
	case "copilot":
		checkCopilot(t, sc, r, c)
	case "qwen":
		checkQwen(t, sc, r, c)
	default:
		t.Fatalf("unknown harness %q", sc.Harness)
	}
	checkCanary(t, sc)
}

// claudeInit is the part of Claude's stream-json init message the checks read.
type claudeInit struct {
	Type       string `json:"type"`
	Subtype    string `json:"subtype"`
	MCPServers []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"mcp_servers"`
	Tools   []string `json:"tools"`
	Skills  []string `json:"skills"`
	Version string   `json:"claude_code_version"`
}

func checkClaude(t *testing.T, sc *scenario, r rendered, c clis) {
	debug := filepath.Join(sc.Dir, "claude-debug.log")
	env := harnessEnv(c, sc.Home, r.Env, "CLAUDE_CONFIG_DIR="+sc.Config)
	argv := append([]string{c.Claude, "-p"}, r.Args...)
	argv = append(argv, "--output-format", "stream-json", "--verbose", "--debug-file", debug, "--", "Reply with OK.")
	line, err := firstLine(context.Background(), claudeTimeout, sc.Checkout, env, func(b []byte) bool {
		return strings.Contains(string(b), `"subtype":"init"`)
	}, argv...)
	require.NoError(t, err, "claude %v: want the stream-json init line", r.Args)
	var in claudeInit
	require.NoError(t, json.Unmarshal(line, &in), "decode claude init line %s", line)
	assert.Equal(t, "2.1.328", in.Version, "claude version in the init line")

	status := map[string]string{}
	var names []string
	for _, s := range in.MCPServers {
		names = append(names, s.Name)
		status[s.Name] = s.Status
	}
	assert.ElementsMatch(t, r.Servers, names, "claude init mcp_servers: want exactly the rendered servers")
	for _, id := range stdioIDs {
		assert.Equal(t, "connected", status[id], "claude: stdio server %q status", id)
	}
	assert.Contains(t, in.Tools, "mcp__canary__canary_ping", "claude tools: the canary's tool")
	assert.Contains(t, in.Tools, "mcp__everything__echo", "claude tools: mcp-server-everything's echo")
	for _, s := range scenarioSkills {
		assert.Contains(t, in.Skills, s.Name, "claude init skills: want skill %q", s.Name)
		checkSkillDir(t, "claude", filepath.Join(sc.Config, "skills", s.Name), s)
	}

	var allow []string
	for i, a := range r.Args {
		if a == "--allowedTools" || a == "--allowed-tools" {
			for _, v := range r.Args[i+1:] {
				if strings.HasPrefix(v, "-") {
					break
				}
				if strings.HasPrefix(v, "mcp__") {
					allow = append(allow, v)
				}
			}
		}
	}
	assert.Equal(t, []string{"mcp__canary__canary_ping", "mcp__everything", "mcp__docs__search"}, allow,
		"claude --allowedTools mcp rules: per allowed tool for restricted servers, the server for an unrestricted one")

	log, err := os.ReadFile(debug)
	require.NoError(t, err, "read claude debug file")
	// docs/FORMATS.md §1.5: a bad --mcp-config entry is skipped silently, its reason only logged as
	// "[WARN] --mcp-config: N entry warning(s): mcpServers.x: Skipped — …".
	for _, bad := range []string{"Skipped —", "entry warning(s)", "Ignoring --allowedTools rule", "Missing environment variables", "mcp-config-invalid"} {
		for _, l := range strings.Split(string(log), "\n") {
			assert.NotContains(t, l, bad, "claude debug log must not report %q", bad)
		}
	}
}

func checkCodex(t *testing.T, sc *scenario, r rendered, c clis) {
	env := harnessEnv(c, sc.Home, r.Env, "CODEX_HOME="+sc.Config)
	res, err := run(context.Background(), codexTimeout, sc.Checkout, env, nil, c.Codex, "mcp", "list", "--json")
	require.NoError(t, err, "codex mcp list --json")
	require.Equal(t, 0, res.Exit, "codex mcp list --json exit status (stderr: %s)", tail(res.Stderr))
	var list []struct {
		Name    string `json:"name"`
		Enabled bool   `json:"enabled"`
	}
	require.NoError(t, json.Unmarshal(res.Stdout, &list), "decode codex mcp list --json: %s", res.Stdout)
	var names []string
	for _, s := range list {
		names = append(names, s.Name)
		assert.True(t, s.Enabled, "codex mcp list: server %q enabled", s.Name)
	}
	assert.ElementsMatch(t, r.Servers, names, "codex mcp list: want exactly the rendered servers")

	cl, err := startRPC(context.Background(), codexTimeout, sc.Checkout, env, c.Codex, "app-server")
	require.NoError(t, err, "start codex app-server")
	defer cl.Close()
	_, err = cl.call(1, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize",
		"params": map[string]any{"clientInfo": map[string]any{"name": "loadout-e2e", "version": "1"}}})
	require.NoError(t, err, "codex app-server initialize")
	require.NoError(t, cl.send(map[string]any{"jsonrpc": "2.0", "method": "initialized"}), "codex app-server initialized")

	raw, err := cl.call(2, map[string]any{"jsonrpc": "2.0", "id": 2, "method": "skills/list",
		"params": map[string]any{"cwds": []string{sc.Checkout}, "forceReload": true}})
	require.NoError(t, err, "codex app-server skills/list")
	var skills struct {
		Result struct {
			Data []struct {
				Skills []struct {
					Name    string `json:"name"`
					Path    string `json:"path"`
					Enabled bool   `json:"enabled"`
				} `json:"skills"`
				Errors []struct {
					Path    string `json:"path"`
					Message string `json:"message"`
				} `json:"errors"`
			} `json:"data"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(raw, &skills), "decode skills/list: %s", raw)
	require.Len(t, skills.Result.Data, 1, "skills/list: one entry for the one cwd: %s", raw)
	assert.Empty(t, skills.Result.Data[0].Errors, "codex skills/list errors")
	paths := map[string]string{}
	for _, s := range skills.Result.Data[0].Skills {
		paths[s.Name] = s.Path
		if strings.HasPrefix(s.Path, sc.Config) || strings.HasPrefix(s.Path, sc.Checkout) {
			assert.True(t, s.Enabled, "codex skill %q enabled", s.Name)
		}
	}
	for _, s := range scenarioSkills {
		p, ok := paths[s.Name]
		if assert.True(t, ok, "codex skills/list: want skill %q, got %v", s.Name, paths) {
			checkSkillDir(t, "codex", filepath.Dir(p), s)
		}
	}

	raw, err = cl.call(3, map[string]any{"jsonrpc": "2.0", "id": 3, "method": "mcpServerStatus/list",
		"params": map[string]any{"detail": "toolsAndAuthOnly"}})
	require.NoError(t, err, "codex app-server mcpServerStatus/list")
	var st struct {
		Result struct {
			Data []struct {
				Name       string                     `json:"name"`
				Tools      map[string]json.RawMessage `json:"tools"`
				ToolsError *string                    `json:"toolsError"`
			} `json:"data"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(raw, &st), "decode mcpServerStatus/list: %s", raw)
	byName := map[string]int{}
	names = names[:0]
	for i, s := range st.Result.Data {
		byName[s.Name] = i
		names = append(names, s.Name)
	}
	assert.ElementsMatch(t, r.Servers, names, "codex mcpServerStatus/list: want exactly the rendered servers")
	for _, id := range stdioIDs {
		i, ok := byName[id]
		if !assert.True(t, ok, "codex mcpServerStatus/list: want stdio server %q", id) {
			continue
		}
		s := st.Result.Data[i]
		assert.Nil(t, s.ToolsError, "codex: stdio server %q toolsError", id)
		assert.NotEmpty(t, s.Tools, "codex: stdio server %q must list tools", id)
	}
	if i, ok := byName["canary"]; ok {
		assert.Contains(t, st.Result.Data[i].Tools, "canary_ping", "codex: the canary's tool")
	}
}

func checkPi(t *testing.T, sc *scenario, r rendered, c clis) {
	env := harnessEnv(c, sc.Home, r.Env, "PI_CODING_AGENT_DIR="+sc.Config)
	res, err := run(context.Background(), piTimeout, sc.Checkout, env, nil, c.Pi, "mcp", "list", "--json")
	require.NoError(t, err, "pi mcp list --json")
	var list struct {
		Servers []struct {
			Name  string   `json:"name"`
			State string   `json:"state"`
			Tools []string `json:"tools"`
			Error string   `json:"error"`
		} `json:"servers"`
		Errors []string `json:"errors"`
	}
	require.NoError(t, json.Unmarshal(res.Stdout, &list), "decode pi mcp list --json (exit %d, stderr %s): %s", res.Exit, tail(res.Stderr), res.Stdout)
	assert.Empty(t, list.Errors, "pi mcp list: config errors")
	state := map[string]int{}
	var names []string
	for i, s := range list.Servers {
		names = append(names, s.Name)
		state[s.Name] = i
	}
	assert.ElementsMatch(t, r.Servers, names, "pi mcp list: want exactly the rendered servers")
	for _, id := range stdioIDs {
		i, ok := state[id]
		if assert.True(t, ok, "pi mcp list: want stdio server %q", id) {
			assert.Equal(t, "connected", list.Servers[i].State, "pi: stdio server %q state (error %q)", id, list.Servers[i].Error)
		}
	}
	if i, ok := state["canary"]; ok {
		assert.Contains(t, list.Servers[i].Tools, "canary_ping", "pi: the canary's tool")
	}

	cl, err := startRPC(context.Background(), piTimeout, sc.Checkout, env, c.Pi, "--mode", "rpc", "--offline", "--no-session")
	require.NoError(t, err, "start pi --mode rpc")
	defer cl.Close()
	raw, err := cl.call("cmds", map[string]any{"type": "get_commands", "id": "cmds"})
	require.NoError(t, err, "pi rpc get_commands")
	var cmds struct {
		Success bool `json:"success"`
		Data    struct {
			Commands []struct {
				Name       string `json:"name"`
				Source     string `json:"source"`
				SourceInfo struct {
					Path string `json:"path"`
				} `json:"sourceInfo"`
			} `json:"commands"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(raw, &cmds), "decode pi get_commands: %s", raw)
	require.True(t, cmds.Success, "pi get_commands success: %s", raw)
	paths := map[string]string{}
	for _, cmd := range cmds.Data.Commands {
		if name, ok := strings.CutPrefix(cmd.Name, "skill:"); ok {
			paths[name] = cmd.SourceInfo.Path
		}
	}
	for _, s := range scenarioSkills {
		p, ok := paths[s.Name]
		if assert.True(t, ok, "pi get_commands: want skill:%s, got %v", s.Name, paths) {
			checkSkillDir(t, "pi", filepath.Dir(p), s)
		}
	}
}

// geminiServer is one line of `gemini mcp list`: "✓ name: <command or url> (stdio) - Connected".
var geminiServer = regexp.MustCompile(`(?m)^[✓✗○…] ([^:\s]+): .* \((stdio|http|sse)\) - (\w+)$`)

// checkGemini loads the run with `gemini mcp list` (docs/FORMATS.md §5.1), which connects every
// server and exits 0 whether or not they connected, and `gemini skills list --all`. The folder is
// trusted through GEMINI_CLI_TRUST_WORKSPACE, since `mcp list` does not take the plan's
// --skip-trust.
func checkGemini(t *testing.T, sc *scenario, r rendered, c clis) {
	assert.Equal(t, []string{"--skip-trust"}, r.Args, "gemini args")
	env := trustFolder(harnessEnv(c, sc.Home, r.Env, "GEMINI_API_KEY=dummy"))
	home, _ := lookupEnv(env, "GEMINI_CLI_HOME")
	assert.Equal(t, sc.Config, home, "gemini: GEMINI_CLI_HOME is the config root")
	res, err := run(context.Background(), geminiTimeout, sc.Checkout, env, nil, c.Gemini, "mcp", "list")
	require.NoError(t, err, "gemini mcp list")
	require.Equal(t, 0, res.Exit, "gemini mcp list exit status (stderr: %s)", tail(res.Stderr))
	out := string(res.Stdout) + string(res.Stderr)
	status := map[string]string{}
	var names []string
	for _, m := range geminiServer.FindAllStringSubmatch(out, -1) {
		names = append(names, m[1])
		status[m[1]] = m[3]
	}
	assert.ElementsMatch(t, r.Servers, names, "gemini mcp list: want exactly the rendered servers: %s", out)
	for _, id := range stdioIDs {
		assert.Equal(t, "Connected", status[id], "gemini: stdio server %q status: %s", id, out)
	}
	assert.NotContains(t, out, "Invalid configuration", "gemini: settings.json must validate")

	res, err = run(context.Background(), geminiTimeout, sc.Checkout, env, nil, c.Gemini, "skills", "list", "--all")
	require.NoError(t, err, "gemini skills list --all")
	out = string(res.Stdout) + string(res.Stderr)
	for _, s := range scenarioSkills {
		dir := filepath.Join(sc.Config, ".gemini", "skills", s.Name)
		assert.Contains(t, out, filepath.Join(dir, "SKILL.md"), "gemini skills list: want skill %q: %s", s.Name, out)
		checkSkillDir(t, "gemini", dir, s)
	}
}

// copilotList is `copilot mcp list --json`: the servers Copilot parsed from its config files,
// with their tools include list, where it found them and whether they are enabled.
type copilotList struct {
	MCPServers map[string]struct {
		Tools   []string `json:"tools"`
		Type    string   `json:"type"`
		Source  string   `json:"source"`
		Enabled bool     `json:"enabled"`
	} `json:"mcpServers"`
}

// copilotEvent is one line of `copilot -p --output-format json`; session.mcp_servers_loaded
// carries each configured server's status once Copilot has tried to connect them all.
type copilotEvent struct {
	Type string `json:"type"`
	Data struct {
		Servers []struct {
			Name   string `json:"name"`
			Status string `json:"status"`
			Error  string `json:"error"`
		} `json:"servers"`
	} `json:"data"`
}

// copilotTool is a tool name in the tool list Copilot's debug log records for a model request:
// "<server>-<tool>:<digest>".
var copilotTool = regexp.MustCompile(`"([A-Za-z0-9_.-]+):[0-9a-f]{8}"`)

// checkCopilot loads the run with the real Copilot CLI (docs/FORMATS.md §5.2). `copilot mcp
// list --json` shows the parsed config and starts nothing; `copilot -p` with a local model
// provider on a closed port (COPILOT_OFFLINE=true, no GitHub login) starts a session, which
// connects every server and reports each one's status before the first model call fails; its
// debug log then lists the tools that call would have offered. `copilot skill list --json`
// lists the skills.
func checkCopilot(t *testing.T, sc *scenario, r rendered, c clis) {
	assert.Equal(t, []string{"--disable-builtin-mcps", "--no-auto-update"}, r.Args, "copilot args")
	env := harnessEnv(c, sc.Home, r.Env, "COPILOT_OFFLINE=true", "COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:"+sc.Port,
		"COPILOT_MODEL=gpt-4o", "COPILOT_AUTO_UPDATE=false")
	home, _ := lookupEnv(env, "COPILOT_HOME")
	assert.Equal(t, sc.Config, home, "copilot: COPILOT_HOME is the config root")

	res, err := run(context.Background(), copilotTimeout, sc.Checkout, env, nil, c.Copilot, "mcp", "list", "--json")
	require.NoError(t, err, "copilot mcp list --json")
	require.Equal(t, 0, res.Exit, "copilot mcp list --json exit status (stderr: %s)", tail(res.Stderr))
	var list copilotList
	require.NoError(t, json.Unmarshal(res.Stdout, &list), "decode copilot mcp list --json: %s", res.Stdout)
	var names []string
	for name, s := range list.MCPServers {
		names = append(names, name)
		assert.Equal(t, "user", s.Source, "copilot mcp list: server %q comes from $COPILOT_HOME/mcp-config.json", name)
		assert.True(t, s.Enabled, "copilot mcp list: server %q enabled", name)
	}
	// Copilot drops an entry it cannot read without a word: every rendered server must be there.
	assert.ElementsMatch(t, r.Servers, names, "copilot mcp list: want exactly the rendered servers: %s", res.Stdout)
	assert.Equal(t, []string{"canary_ping"}, list.MCPServers["canary"].Tools, "copilot mcp list: canary tools")
	assert.Equal(t, []string{"search"}, list.MCPServers["docs"].Tools, "copilot mcp list: docs tools")
	assert.Equal(t, []string{"*"}, list.MCPServers["everything"].Tools, "copilot mcp list: everything keeps every tool")

	logDir := filepath.Join(sc.Dir, "copilot-logs")
	argv := append([]string{c.Copilot}, r.Args...)
	argv = append(argv, "-p", "Reply with OK.", "--output-format", "json", "--log-dir", logDir, "--log-level", "all")
	var loaded copilotEvent
	_, err = firstLine(context.Background(), copilotTimeout, sc.Checkout, env, func(b []byte) bool {
		var ev copilotEvent
		if json.Unmarshal(b, &ev) != nil {
			return false
		}
		if ev.Type == "session.mcp_servers_loaded" {
			loaded = ev
		}
		// The first model call's failure comes after the log recorded its tool list.
		return ev.Type == "model.call_failure"
	}, argv...)
	require.NoError(t, err, "copilot -p: want session.mcp_servers_loaded, then a failed model call")
	status := map[string]string{}
	names = nil
	for _, s := range loaded.Data.Servers {
		status[s.Name] = s.Status + " " + s.Error
		// --disable-builtin-mcps lists Copilot's built-in servers as disabled.
		if s.Status != "disabled" {
			names = append(names, s.Name)
		}
	}
	assert.ElementsMatch(t, r.Servers, names, "copilot session: want exactly the rendered servers, every built-in one disabled: %v", status)
	for _, id := range stdioIDs {
		assert.Equal(t, "connected ", status[id], "copilot session: stdio server %q status", id)
	}

	logs, err := filepath.Glob(filepath.Join(logDir, "*.log"))
	require.NoError(t, err, "glob the copilot logs")
	require.NotEmpty(t, logs, "copilot -p --log-dir %s wrote no log", logDir)
	var text strings.Builder
	for _, l := range logs {
		b, err := os.ReadFile(l)
		require.NoError(t, err, "read %s", l)
		text.Write(b)
	}
	var mcpTools []string
	for _, m := range copilotTool.FindAllStringSubmatch(text.String(), -1) {
		if strings.HasPrefix(m[1], "canary-") || strings.HasPrefix(m[1], "everything-") {
			mcpTools = append(mcpTools, m[1])
		}
	}
	assert.Contains(t, mcpTools, "canary-canary_ping", "copilot: the model is offered the canary's allowed tool")
	assert.Contains(t, mcpTools, "everything-echo", "copilot: the model is offered the unrestricted server's tools")

	res, err = run(context.Background(), copilotTimeout, sc.Checkout, env, nil, c.Copilot, "skill", "list", "--json")
	require.NoError(t, err, "copilot skill list --json")
	require.Equal(t, 0, res.Exit, "copilot skill list --json exit status (stderr: %s)", tail(res.Stderr))
	var skills []struct {
		Name, Source, Path string
		Enabled            bool
	}
	require.NoError(t, json.Unmarshal(res.Stdout, &skills), "decode copilot skill list --json: %s", res.Stdout)
	found := map[string]string{}
	for _, s := range skills {
		if s.Enabled {
			found[s.Name] = s.Path
		}
	}
	for _, s := range scenarioSkills {
		dir := filepath.Join(sc.Config, "skills", s.Name)
		assert.Equal(t, dir, found[s.Name], "copilot skill list: want skill %q from $COPILOT_HOME/skills: %s", s.Name, res.Stdout)
		checkSkillDir(t, "copilot", dir, s)
	}
	assert.NotContains(t, string(res.Stderr), "failed to load", "copilot skill list: every skill loads")
}

// qwenInit is the part of Qwen Code's stream-json init message the checks read: it is printed
// once every configured server has connected or failed, before the first model call.
type qwenInit struct {
	Type       string `json:"type"`
	Subtype    string `json:"subtype"`
	MCPServers []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"mcp_servers"`
	Tools   []string `json:"tools"`
	Version string   `json:"qwen_code_version"`
}

// qwenEnv is the environment of a Qwen Code run: harnessEnv with an OpenAI-compatible model
// endpoint at baseURL (a loopback one), then the plan's env.
func qwenEnv(c clis, home string, plan []envVar, baseURL string, extra ...string) []string {
	return harnessEnv(c, home, plan, append([]string{"OPENAI_API_KEY=dummy", "OPENAI_BASE_URL=" + baseURL, "OPENAI_MODEL=gpt-4o"}, extra...)...)
}

// qwenSession runs `qwen <args> --auth-type openai --output-format stream-json -p <prompt>` in
// dir until its result line and returns the init message. The model endpoint must answer (a
// modelRecorder refuses every request): on a closed port Qwen Code retries for minutes.
func qwenSession(t *testing.T, c clis, dir string, env, args []string, prompt string) qwenInit {
	t.Helper()
	argv := append([]string{c.Qwen}, args...)
	argv = append(argv, "--auth-type", "openai", "--output-format", "stream-json", "-p", prompt)
	var in qwenInit
	last, err := firstLine(context.Background(), qwenTimeout, dir, env, func(b []byte) bool {
		var ev qwenInit
		if json.Unmarshal(b, &ev) != nil {
			return false
		}
		if ev.Type == "system" && ev.Subtype == "init" {
			in = ev
		}
		return ev.Type == "result"
	}, argv...)
	require.NoError(t, err, "qwen %v: want the stream-json init and result lines", args)
	require.Equal(t, "init", in.Subtype, "qwen: the stream-json init line before the result %s", last)
	return in
}

// qwenStatus maps each server of an init message to its status.
func qwenStatus(in qwenInit) map[string]string {
	m := map[string]string{}
	for _, s := range in.MCPServers {
		m[s.Name] = s.Status
	}
	return m
}

// modelRecorder is a loopback OpenAI-compatible endpoint that records the body of every request
// and refuses it (400): a CLI pointed at it sends no byte past this machine, and the first
// request shows what the model would have been given.
type modelRecorder struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
}

func newModelRecorder(t *testing.T) *modelRecorder {
	m := &modelRecorder{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		m.mu.Lock()
		m.bodies = append(m.bodies, body)
		m.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":{"message":"loadout e2e: no model here","type":"invalid_request_error"}}`)
	}))
	t.Cleanup(m.Close)
	return m
}

// texts returns every string of every recorded request body, decoded from its JSON.
func (m *modelRecorder) texts() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	for _, b := range m.bodies {
		var v any
		if json.Unmarshal(b, &v) == nil {
			walk(v)
		}
	}
	return out
}

// checkQwen loads the run with the real Qwen Code (docs/FORMATS.md §5.3): `qwen -p` with the
// plan's args (--bare, the --mcp-config file, exactly the rendered servers allowed) and the
// host's prompt, against a loopback model endpoint. Its stream-json init message lists the
// servers it loaded and the tools it offers; Qwen Code has no offline list command for an
// --mcp-config file. Under --bare it reads no skills: the host folds them into the prompt, which
// must reach the model, with their files under the checkout's context directory.
func checkQwen(t *testing.T, sc *scenario, r rendered, c clis) {
	want := append(append([]string{"--allowed-mcp-server-names"}, r.Servers...), "--mcp-config", filepath.Join(sc.Run, "mcp-servers.json"), "--bare")
	assert.Equal(t, want, r.Args, "qwen args")
	model := newModelRecorder(t)
	env := qwenEnv(c, sc.Home, r.Env, model.URL+"/v1")
	home, _ := lookupEnv(env, "QWEN_HOME")
	assert.Equal(t, sc.Config, home, "qwen: QWEN_HOME is the config root")
	in := qwenSession(t, c, sc.Checkout, env, r.Args, r.Prompt)
	assert.Equal(t, "0.24.4", in.Version, "qwen version in the init line")
	status := qwenStatus(in)
	var names []string
	for _, s := range in.MCPServers {
		names = append(names, s.Name)
	}
	assert.ElementsMatch(t, r.Servers, names, "qwen init mcp_servers: want exactly the rendered servers")
	for _, id := range stdioIDs {
		assert.Equal(t, "connected", status[id], "qwen: stdio server %q status", id)
	}
	assert.Contains(t, in.Tools, "mcp__canary__canary_ping", "qwen tools: the canary's allowed tool")
	assert.Contains(t, in.Tools, "mcp__everything__echo", "qwen tools: mcp-server-everything's echo")

	texts := strings.Join(model.texts(), "\n")
	require.NotEmpty(t, texts, "qwen sent no model request")
	for _, s := range scenarioSkills {
		assert.Contains(t, r.Prompt, "### Skill: "+s.Name+"\n", "qwen: the prompt folds skill %q", s.Name)
		assert.Contains(t, texts, s.Instructions, "qwen: the model is given the instructions of skill %q", s.Name)
		dir := filepath.Join(sc.Checkout, ".cat-context", "skill", s.Name)
		for _, res := range s.Resources {
			got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(res.RelPath)))
			if assert.NoError(t, err, "qwen: resource %s of skill %q", res.RelPath, s.Name) {
				assert.Equal(t, res.Content, string(got), "qwen: content of resource %s of skill %q", res.RelPath, s.Name)
			}
		}
	}
}

// checkSkillDir checks that a skill the harness found has its SKILL.md, with front matter that
// names and describes it as the request did, and every resource.
func checkSkillDir(t *testing.T, harness, dir string, s skillDef) {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(dir, "SKILL.md"))
	if !assert.NoError(t, err, "%s: read SKILL.md of %q", harness, s.Name) {
		return
	}
	rest, ok := strings.CutPrefix(string(body), "---\n")
	if assert.True(t, ok, "%s: SKILL.md of %q must open with front matter: %q", harness, s.Name, body) {
		fm, instructions, ok := strings.Cut(rest, "\n---\n")
		if assert.True(t, ok, "%s: SKILL.md of %q must close its front matter: %q", harness, s.Name, body) {
			var meta struct {
				Name        string `yaml:"name"`
				Description string `yaml:"description"`
			}
			if assert.NoError(t, yaml.Unmarshal([]byte(fm), &meta), "%s: SKILL.md front matter of %q: %q", harness, s.Name, fm) {
				assert.Equal(t, s.Name, meta.Name, "%s: SKILL.md front matter name of %q", harness, s.Name)
				assert.Equal(t, s.Description, meta.Description, "%s: SKILL.md front matter description of %q", harness, s.Name)
			}
			assert.Contains(t, instructions, s.Instructions, "%s: SKILL.md of %q must hold its instructions", harness, s.Name)
		}
	}
	for _, r := range s.Resources {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(r.RelPath)))
		if assert.NoError(t, err, "%s: resource %s of skill %q", harness, r.RelPath, s.Name) {
			assert.Equal(t, r.Content, string(got), "%s: content of resource %s of skill %q", harness, r.RelPath, s.Name)
		}
	}
}

// canaryReport is the JSON the canary writes on start (e2e/internal/canary).
type canaryReport struct {
	Pid      int      `json:"pid"`
	Cwd      string   `json:"cwd"`
	Env      []string `json:"env"`
	Cmdlines []struct {
		Pid  int      `json:"pid"`
		Argv []string `json:"argv"`
	} `json:"cmdlines"`
}

// checkCanary checks the canary's environment against the spawn environment the policy allowed,
// and that no secret was on its command line or on any ancestor's.
func checkCanary(t *testing.T, sc *scenario) {
	t.Helper()
	raw, err := os.ReadFile(sc.CanaryOut)
	require.NoError(t, err, "%s: the canary must have been started and written its report", sc.Harness)
	var rep canaryReport
	require.NoError(t, json.Unmarshal(raw, &rep), "decode canary report %s", raw)

	want := map[string]string{}
	for _, e := range sc.SpawnEnv {
		want[e.Name] = e.Value
	}
	got := map[string]string{}
	for _, kv := range rep.Env {
		name, value, _ := strings.Cut(kv, "=")
		_, dup := got[name]
		assert.False(t, dup, "%s: canary env holds %q twice", sc.Harness, name)
		got[name] = value
	}
	assert.Equal(t, want, got, "%s: the canary's environment must be exactly the spawn env (host allowlist, then the server's env, then MCP_ACCESS_TOKEN)", sc.Harness)

	assert.Equal(t, sc.ServerCwd, rep.Cwd, "%s: the canary's working directory must be the request's cwd", sc.Harness)

	require.NotEmpty(t, rep.Cmdlines, "%s: canary report must hold its own command line", sc.Harness)
	for _, cl := range rep.Cmdlines {
		for _, a := range cl.Argv {
			for _, s := range sc.Secrets {
				assert.NotContains(t, a, s, "%s: /proc/%d/cmdline (an ancestor of the canary, or itself) must hold no secret", sc.Harness, cl.Pid)
			}
		}
	}
}
