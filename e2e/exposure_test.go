package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exposureRequest serves mcp-server-everything three times: "everything" unrestricted with
// echo hidden (and get-sum deferred, which only Pi has), "restricted" limited to echo and
// get-sum with get-* hidden, and "all-hidden", whose every tool is hidden.
func exposureRequest(harness, everything string) []byte {
	cmd, _ := json.Marshal(everything)
	return []byte(`{"harness": "` + harness + `", "run": {"ambientAuth": false, "user": "e2e"}, "mcpServers": [
  {"id": "everything", "command": ` + string(cmd) + `, "toolExposure": {"echo": "hidden", "get-sum": "deferred"}},
  {"id": "restricted", "command": ` + string(cmd) + `, "allowedTools": ["echo", "get-sum"], "toolExposure": {"get-*": "hidden"}},
  {"id": "all-hidden", "command": ` + string(cmd) + `, "exposure": "hidden"}
]}`)
}

// offered is what a harness offers the model of one server: a tool it must offer and one it
// must not.
type offered struct{ server, present, absent string }

// exposureWant are the checks of every harness: the hidden echo of "everything" and the get-sum
// that "restricted" hides by pattern are not offered; get-sum and echo, which stay exposed, are.
// Each tool is offered by one server and not by the other, so the listing is shown to list it.
var exposureWant = []offered{
	{"everything", "get-sum", "echo"},
	{"restricted", "echo", "get-sum"},
}

// exposureRender renders exposureRequest with the loadout binary and returns the plan's args
// and env, after checking the refusal of all-hidden and the deferred warning.
func exposureRender(t *testing.T, harness, dir string, c clis) rendered {
	t.Helper()
	reqPath := filepath.Join(dir, "request.json")
	require.NoError(t, os.WriteFile(reqPath, exposureRequest(harness, c.Everything), 0o600), "write the request")
	checkout := filepath.Join(dir, "checkout")
	out, err := exec.Command("git", "init", "-q", checkout).CombinedOutput()
	require.NoError(t, err, "git init %s: %s", checkout, out)
	env := []string{"PATH=" + c.NodeBin + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + dir, "LANG=C.UTF-8"}
	res, err := run(context.Background(), renderTimeout, dir, env, nil,
		loadoutBinary(t), "render", "--harness", harness, "--out", dir, reqPath, "--format", "json")
	require.NoError(t, err, "loadout render --harness %s", harness)
	require.Equal(t, 0, res.Exit, "loadout render --harness %s exit status; stderr: %s", harness, tail(res.Stderr))
	var rr struct {
		renderResult
		Dropped []struct {
			Name, Code, Field string
		} `json:"dropped"`
	}
	require.NoError(t, json.Unmarshal(res.Stdout, &rr), "decode the render result: %s", res.Stdout)
	assert.Equal(t, []string{"everything", "restricted"}, rr.Servers, "%s: all-hidden is not rendered", harness)
	assert.True(t, slices.ContainsFunc(rr.Dropped, func(d struct{ Name, Code, Field string }) bool {
		return d.Name == "all-hidden" && d.Code == "exposure_all_hidden" && d.Field == "mcpServers[2].exposure"
	}), "%s: all-hidden dropped with exposure_all_hidden: %+v", harness, rr.Dropped)
	var warned []string
	for _, w := range rr.Warnings {
		warned = append(warned, w.Server+": "+w.Code+": "+w.Message)
	}
	assert.Contains(t, warned, `everything: exposure_unsupported: exposure "deferred" is not supported by `+harness+`; tools are exposed directly`,
		"%s: the deferred exposure is warned about", harness)
	return rendered{Args: rr.Args, Env: rr.Env, Servers: rr.Servers}
}

// TestExposureHidesTools renders a request whose exposure hides tools, for each harness without
// exposure of its own, and asks the real CLI, offline, which tools it offers the model: the
// hidden ones are not there, the exposed ones are (docs/FORMATS.md §4.1).
func TestExposureHidesTools(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	cases := []struct {
		harness string
		// tools lists the tools the harness offers, as "<server>/<tool>".
		tools func(t *testing.T, dir string, r rendered) []string
	}{
		{"claude", claudeOffered},
		{"codex", codexOffered},
		{"gemini", geminiOffered},
		{"qwen", qwenOffered},
	}
	for _, tc := range cases {
		t.Run(tc.harness, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			r := exposureRender(t, tc.harness, dir, c)
			got := tc.tools(t, dir, r)
			t.Logf("%s offers the model: %v", tc.harness, got)
			for _, w := range exposureWant {
				assert.Contains(t, got, w.server+"/"+w.present, "%s offers %s's exposed %s: %v", tc.harness, w.server, w.present, got)
				assert.NotContains(t, got, w.server+"/"+w.absent, "%s must not offer %s's hidden %s: %v", tc.harness, w.server, w.absent, got)
			}
			for _, tool := range got {
				assert.False(t, strings.HasPrefix(tool, "all-hidden/"), "%s offers a tool of the refused all-hidden: %s", tc.harness, tool)
			}
		})
	}
}

// claudeOffered reads the tools array of the stream-json init message, which Claude Code prints
// before it calls the model: the tools the model is offered, denied ones left out.
func claudeOffered(t *testing.T, dir string, r rendered) []string {
	return claudeOfferedBy(t, dir, r, map[string]string{"everything": "connected", "restricted": "connected"})
}

// claudeOfferedBy is claudeOffered for servers whose init status must be status.
func claudeOfferedBy(t *testing.T, dir string, r rendered, status map[string]string) []string {
	c := findCLIs(t)
	env := harnessEnv(c, filepath.Join(dir, "home"), r.Env, "CLAUDE_CONFIG_DIR="+filepath.Join(dir, "config"))
	argv := append([]string{c.Claude, "-p"}, r.Args...)
	argv = append(argv, "--output-format", "stream-json", "--verbose", "--", "Reply with OK.")
	line, err := firstLine(context.Background(), claudeTimeout, filepath.Join(dir, "checkout"), env, func(b []byte) bool {
		return strings.Contains(string(b), `"subtype":"init"`)
	}, argv...)
	require.NoError(t, err, "claude %v: want the stream-json init line", r.Args)
	var in claudeInit
	require.NoError(t, json.Unmarshal(line, &in), "decode claude init line %s", line)
	got := map[string]string{}
	for _, s := range in.MCPServers {
		got[s.Name] = s.Status
	}
	assert.Equal(t, status, got, "claude: the rendered servers connect")
	var out []string
	for _, tool := range in.Tools {
		if rest, ok := strings.CutPrefix(tool, "mcp__"); ok {
			out = append(out, strings.Replace(rest, "__", "/", 1))
		}
	}
	return out
}

// TestExposureHidesDottedTool hides a tool whose name holds a "." (admin.delete, offered by the
// canary beside canary_ping) and asks each real CLI, offline, which tools of the server it offers
// the model: only canary_ping, while a second canary that hides nothing shows the dotted tool is
// listed at all. Claude Code names the tool mcp__dot__admin_delete, so its deny
// rule is spelled so (profile tools.names); Codex and Gemini CLI match the server's own name.
func TestExposureHidesDottedTool(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	canary := canaryBinary(t)
	cases := []struct {
		harness string
		tools   func(t *testing.T, dir string, r rendered) []string
	}{
		{"claude", func(t *testing.T, dir string, r rendered) []string {
			return claudeOfferedBy(t, dir, r, map[string]string{"dot": "connected", "shown": "connected"})
		}},
		{"codex", codexOffered},
		{"gemini", geminiOffered},
		{"copilot", copilotOffered},
		{"pi", piOffered},
		{"qwen", qwenOffered},
	}
	for _, tc := range cases {
		t.Run(tc.harness, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cmd, _ := json.Marshal(canary)
			report := func(name string) string { b, _ := json.Marshal(filepath.Join(dir, name)); return string(b) }
			req := `{"harness": "` + tc.harness + `", "run": {"user": "e2e"}, "mcpServers": [
  {"id": "dot", "command": ` + string(cmd) + `, "args": [` + report("dot.json") + `, "tool=admin.delete"], "toolExposure": {"admin.delete": "hidden"}},
  {"id": "shown", "command": ` + string(cmd) + `, "args": [` + report("shown.json") + `, "tool=admin.delete"]}]}`
			r := renderRequest(t, tc.harness, dir, c, req)
			got := tc.tools(t, dir, r)
			t.Logf("%s offers the model: %v", tc.harness, got)
			var dot, shown []string
			for _, tool := range got {
				if rest, ok := strings.CutPrefix(tool, "dot/"); ok {
					dot = append(dot, rest)
				}
				if rest, ok := strings.CutPrefix(tool, "shown/"); ok {
					shown = append(shown, rest)
				}
			}
			assert.Equal(t, []string{"canary_ping"}, dot, "%s offers dot's exposed canary_ping and not its hidden admin.delete, however spelled", tc.harness)
			assert.Len(t, shown, 2, "%s offers both tools of shown, which hides nothing: the listing shows a dotted tool (%v)", tc.harness, shown)
			assert.Contains(t, shown, "canary_ping", "%s offers shown's canary_ping", tc.harness)
		})
	}
}

// qwenOffered runs qwen -p against a loopback model endpoint that refuses every request (on a
// closed port Qwen Code retries for minutes) and reads the tools of its
// stream-json init message, printed before the model call: MCP tools as mcp__<server>__<tool>
// (a tool name with a character outside [A-Za-z0-9_-] gets "_" for it and a hash suffix).
func qwenOffered(t *testing.T, dir string, r rendered) []string {
	c := findCLIs(t)
	home := filepath.Join(dir, "home")
	require.NoError(t, os.MkdirAll(home, 0o755), "mkdir the home (Qwen Code resolves it)")
	env := qwenEnv(c, home, r.Env, newModelRecorder(t).URL+"/v1")
	in := qwenSession(t, c, filepath.Join(dir, "checkout"), env, r.Args, "Reply with OK.")
	status := qwenStatus(in)
	for _, id := range r.Servers {
		assert.Equal(t, "connected", status[id], "qwen: server %q connects", id)
	}
	var out []string
	for _, tool := range in.Tools {
		if rest, ok := strings.CutPrefix(tool, "mcp__"); ok {
			out = append(out, strings.Replace(rest, "__", "/", 1))
		}
	}
	return out
}

// copilotOffered runs copilot -p against a closed loopback model endpoint and reads, from its
// debug log, the tools the failed first model call would have offered (named <server>-<tool>).
func copilotOffered(t *testing.T, dir string, r rendered) []string {
	c := findCLIs(t)
	env := harnessEnv(c, filepath.Join(dir, "home"), r.Env, "COPILOT_OFFLINE=true", "COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:"+closedPort(t),
		"COPILOT_MODEL=gpt-4o", "COPILOT_AUTO_UPDATE=false")
	logDir := filepath.Join(dir, "copilot-logs")
	argv := append([]string{c.Copilot}, r.Args...)
	argv = append(argv, "-p", "Reply with OK.", "--output-format", "json", "--log-dir", logDir, "--log-level", "all")
	_, err := firstLine(context.Background(), copilotTimeout, filepath.Join(dir, "checkout"), env, func(b []byte) bool {
		return strings.Contains(string(b), `"model.call_failure"`)
	}, argv...)
	require.NoError(t, err, "copilot -p: want a failed model call")
	logs, err := filepath.Glob(filepath.Join(logDir, "*.log"))
	require.NoError(t, err, "glob the copilot logs")
	require.NotEmpty(t, logs, "copilot -p --log-dir %s wrote no log", logDir)
	var out []string
	for _, l := range logs {
		b, err := os.ReadFile(l)
		require.NoError(t, err, "read %s", l)
		for _, m := range copilotTool.FindAllStringSubmatch(string(b), -1) {
			if server, tool, ok := strings.Cut(m[1], "-"); ok && (server == "dot" || server == "shown") && !slices.Contains(out, server+"/"+tool) {
				out = append(out, server+"/"+tool)
			}
		}
	}
	return out
}

// piOffered reads `pi mcp list --json`, which connects each server and resolves every tool's
// exposure with the function Pi registers the tool by (toolExposure keyed by the server's own
// tool name, docs/FORMATS.md §4.1): the tools whose exposure is not hidden.
func piOffered(t *testing.T, dir string, r rendered) []string {
	c := findCLIs(t)
	env := harnessEnv(c, filepath.Join(dir, "home"), r.Env)
	res, err := run(context.Background(), piTimeout, filepath.Join(dir, "checkout"), env, nil, c.Pi, "mcp", "list", "--json")
	require.NoError(t, err, "pi mcp list --json")
	var list struct {
		Servers []struct {
			Name         string            `json:"name"`
			State        string            `json:"state"`
			Exposure     string            `json:"exposure"`
			Tools        []string          `json:"tools"`
			ToolExposure map[string]string `json:"toolExposure"`
		} `json:"servers"`
	}
	require.NoError(t, json.Unmarshal(res.Stdout, &list), "decode pi mcp list --json (exit %d, stderr %s): %s", res.Exit, tail(res.Stderr), res.Stdout)
	var out []string
	for _, s := range list.Servers {
		assert.Equal(t, "connected", s.State, "pi: server %q state", s.Name)
		for _, tool := range s.Tools {
			e, ok := s.ToolExposure[tool]
			if !ok {
				e = s.Exposure
			}
			if e != "hidden" {
				out = append(out, s.Name+"/"+tool)
			}
		}
	}
	return out
}

// renderRequest renders req for harness with the loadout binary into dir (a git checkout under
// it) and returns the plan's args and env.
func renderRequest(t *testing.T, harness, dir string, c clis, req string) rendered {
	t.Helper()
	reqPath := filepath.Join(dir, "request.json")
	require.NoError(t, os.WriteFile(reqPath, []byte(req), 0o600), "write the request")
	checkout := filepath.Join(dir, "checkout")
	out, err := exec.Command("git", "init", "-q", checkout).CombinedOutput()
	require.NoError(t, err, "git init %s: %s", checkout, out)
	env := []string{"PATH=" + c.NodeBin + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + dir, "LANG=C.UTF-8"}
	res, err := run(context.Background(), renderTimeout, dir, env, nil,
		loadoutBinary(t), "render", "--harness", harness, "--out", dir, reqPath, "--format", "json")
	require.NoError(t, err, "loadout render --harness %s", harness)
	require.Equal(t, 0, res.Exit, "loadout render --harness %s exit status; stderr: %s", harness, tail(res.Stderr))
	var rr renderResult
	require.NoError(t, json.Unmarshal(res.Stdout, &rr), "decode the render result: %s", res.Stdout)
	return rendered{Args: rr.Args, Env: rr.Env, Servers: rr.Servers}
}

// codexOffered asks the app-server for each server's tools (mcpServerStatus/list), which starts
// the servers and applies enabled_tools, then disabled_tools.
func codexOffered(t *testing.T, dir string, r rendered) []string {
	c := findCLIs(t)
	env := harnessEnv(c, filepath.Join(dir, "home"), r.Env)
	cl, err := startRPC(context.Background(), codexTimeout, filepath.Join(dir, "checkout"), env, c.Codex, "app-server")
	require.NoError(t, err, "start codex app-server")
	defer cl.Close()
	_, err = cl.call(1, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize",
		"params": map[string]any{"clientInfo": map[string]any{"name": "loadout-e2e", "version": "1"}}})
	require.NoError(t, err, "codex app-server initialize")
	require.NoError(t, cl.send(map[string]any{"jsonrpc": "2.0", "method": "initialized"}), "codex app-server initialized")
	raw, err := cl.call(2, map[string]any{"jsonrpc": "2.0", "id": 2, "method": "mcpServerStatus/list",
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
	var out []string
	for _, s := range st.Result.Data {
		assert.Nil(t, s.ToolsError, "codex: server %q toolsError", s.Name)
		for tool := range s.Tools {
			out = append(out, s.Name+"/"+tool)
		}
	}
	slices.Sort(out)
	return out
}

// geminiOffered points Gemini CLI at a loopback endpoint in place of the Gemini API and reads
// the function declarations of the request it sends: the tools offered to the model. The
// endpoint answers every call with an error, so no model runs. --approval-mode yolo is the most
// permissive mode (every registered tool is declared); the checkout's own settings (a trusted
// folder's) select API key auth, so that GOOGLE_GEMINI_BASE_URL is honoured without a change to
// the rendered settings.
func geminiOffered(t *testing.T, dir string, r rendered) []string {
	c := findCLIs(t)
	var mu sync.Mutex
	var declared [][]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var gen struct {
			Tools []struct {
				FunctionDeclarations []struct {
					Name string `json:"name"`
				} `json:"functionDeclarations"`
			} `json:"tools"`
		}
		if json.Unmarshal(body, &gen) == nil && len(gen.Tools) > 0 {
			var names []string
			for _, tl := range gen.Tools {
				for _, f := range tl.FunctionDeclarations {
					names = append(names, f.Name)
				}
			}
			mu.Lock()
			declared = append(declared, names)
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"code":400,"message":"loadout e2e: no model here","status":"INVALID_ARGUMENT"}}`))
	}))
	defer srv.Close()
	checkout := filepath.Join(dir, "checkout")
	require.NoError(t, os.MkdirAll(filepath.Join(checkout, ".gemini"), 0o755), "mkdir the checkout's .gemini")
	writeJSON(t, filepath.Join(checkout, ".gemini", "settings.json"),
		map[string]any{"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}}})
	// Gemini reads the checkout's settings only in a folder trusted before its flags are read.
	env := trustFolder(harnessEnv(c, filepath.Join(dir, "home"), r.Env, "GEMINI_API_KEY=dummy", "GOOGLE_GEMINI_BASE_URL="+srv.URL))
	argv := append([]string{c.Gemini}, r.Args...)
	argv = append(argv, "--approval-mode", "yolo", "-p", "Reply with OK.")
	res, err := run(context.Background(), geminiTimeout, checkout, env, nil, argv...)
	require.NoError(t, err, "gemini -p")
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, declared, "gemini sent no request with tools (exit %d): %s", res.Exit, tail(res.Stderr))
	var out []string
	for _, name := range declared[0] {
		// Gemini names an MCP tool mcp_<server>_<tool>; the servers here hold no "_".
		if rest, ok := strings.CutPrefix(name, "mcp_"); ok {
			out = append(out, strings.Replace(rest, "_", "/", 1))
		}
	}
	return out
}
