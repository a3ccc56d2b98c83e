package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bashMarker is the file the stand-in model's Bash call creates in the checkout: it exists only
// if Claude Code ran the command.
const bashMarker = "bash-ran.marker"

// TestClaudeBuiltinToolsPreApproval runs claude -p with the args loadout renders against a
// loopback stand-in for the Messages API that asks to run Bash, and reads whether Claude ran it
// (the marker file) or denied it (permission_denials): an unrestricted and a restricted request
// both get Bash denied, since restricting a server pre-approves no built-in tool; only
// run.builtinTools grants it (docs/SECURITY.md R15).
func TestClaudeBuiltinToolsPreApproval(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	cases := []struct {
		name       string
		restricted bool
		builtin    []string
		ran        bool
	}{
		{"unrestricted", false, nil, false},
		{"restricted", true, nil, false},
		{"restricted, Bash granted", true, []string{"Bash"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			r, builtin := builtinRender(t, dir, c, tc.restricted, tc.builtin)
			assert.Equal(t, orEmpty(tc.builtin), builtin, "the result's builtinTools")
			denied, ran := claudeRunsBash(t, dir, c, r)
			assert.Equal(t, tc.ran, ran, "claude ran Bash (args %q)", r.Args)
			if tc.ran {
				assert.NotContains(t, denied, "Bash", "claude must not deny a granted Bash")
			} else {
				assert.Contains(t, denied, "Bash", "claude must deny Bash (permission_denials), args %q", r.Args)
			}
		})
	}
}

func orEmpty(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

// builtinRender renders one mcp-server-everything server, restricted to echo or not, with the
// given run.builtinTools, and returns the plan's args and env and the result's builtinTools.
func builtinRender(t *testing.T, dir string, c clis, restricted bool, builtin []string) (rendered, []string) {
	t.Helper()
	cmd, _ := json.Marshal(c.Everything)
	tools := ""
	if restricted {
		tools = `, "allowedTools": ["echo"]`
	}
	bt, _ := json.Marshal(orEmpty(builtin))
	req := `{"harness": "claude", "run": {"user": "e2e", "builtinTools": ` + string(bt) + `}, "mcpServers": [
  {"id": "everything", "command": ` + string(cmd) + tools + `}]}`
	reqPath := filepath.Join(dir, "request.json")
	require.NoError(t, os.WriteFile(reqPath, []byte(req), 0o600), "write the request")
	checkout := filepath.Join(dir, "checkout")
	out, err := exec.Command("git", "init", "-q", checkout).CombinedOutput()
	require.NoError(t, err, "git init %s: %s", checkout, out)
	env := []string{"PATH=" + c.NodeBin + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + dir, "LANG=C.UTF-8"}
	res, err := run(context.Background(), renderTimeout, dir, env, nil,
		loadoutBinary(t), "render", "--harness", "claude", "--out", dir, reqPath, "--format", "json")
	require.NoError(t, err, "loadout render")
	require.Equal(t, 0, res.Exit, "loadout render exit status; stderr: %s", tail(res.Stderr))
	var rr struct {
		renderResult
		BuiltinTools []string `json:"builtinTools"`
	}
	require.NoError(t, json.Unmarshal(res.Stdout, &rr), "decode the render result: %s", res.Stdout)
	return rendered{Args: rr.Args, Env: rr.Env, Servers: rr.Servers}, rr.BuiltinTools
}

// claudeRunsBash runs claude -p with r's args against anthropicStandIn and returns the tools of
// the result's permission_denials and whether the Bash command ran.
func claudeRunsBash(t *testing.T, dir string, c clis, r rendered) ([]string, bool) {
	t.Helper()
	srv := anthropicStandIn(t, "touch "+bashMarker)
	checkout := filepath.Join(dir, "checkout")
	env := harnessEnv(c, filepath.Join(dir, "home"), r.Env, "CLAUDE_CONFIG_DIR="+filepath.Join(dir, "config"))
	env = setEnv(env, "ANTHROPIC_BASE_URL", srv.URL)
	argv := append([]string{c.Claude, "-p"}, r.Args...)
	argv = append(argv, "--output-format", "json", "--", "Create the marker file.")
	res, err := run(context.Background(), claudeTimeout, checkout, env, nil, argv...)
	require.NoError(t, err, "claude -p")
	var out struct {
		Type              string `json:"type"`
		PermissionDenials []struct {
			ToolName string `json:"tool_name"`
		} `json:"permission_denials"`
	}
	require.NoError(t, json.Unmarshal(res.Stdout, &out), "decode claude's result (exit %d): %s; stderr: %s", res.Exit, res.Stdout, tail(res.Stderr))
	require.Equal(t, "result", out.Type, "claude's output is its result: %s", res.Stdout)
	require.True(t, srvAskedBash(srv), "the stand-in model asked for Bash: claude offered it the tool")
	var denied []string
	for _, d := range out.PermissionDenials {
		denied = append(denied, d.ToolName)
	}
	_, statErr := os.Stat(filepath.Join(checkout, bashMarker))
	return denied, statErr == nil
}

// standIn is a loopback stand-in for the Anthropic Messages API.
type standIn struct {
	*httptest.Server
	mu    sync.Mutex
	asked bool // it answered with a Bash tool_use
}

func srvAskedBash(s *standIn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked
}

// anthropicStandIn answers POST /v1/messages as a model would: while the conversation offers
// Bash and holds no tool result yet, with a tool_use running command through Bash; otherwise
// with the text "done" and end_turn. It streams (server-sent events) when asked to.
func anthropicStandIn(t *testing.T, command string) *standIn {
	t.Helper()
	s := &standIn{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if !strings.HasPrefix(req.URL.Path, "/v1/messages") || strings.Contains(req.URL.Path, "count_tokens") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"input_tokens": 1}`))
			return
		}
		var msg struct {
			Model    string `json:"model"`
			Stream   bool   `json:"stream"`
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		_ = json.Unmarshal(body, &msg)
		offered, answered := false, false
		for _, tl := range msg.Tools {
			offered = offered || tl.Name == "Bash"
		}
		for _, m := range msg.Messages {
			answered = answered || strings.Contains(string(m.Content), `"tool_result"`)
		}
		input, _ := json.Marshal(map[string]string{"command": command, "description": "Create the marker file"})
		block := map[string]any{"type": "text", "text": "done"}
		stop := "end_turn"
		if offered && !answered {
			block = map[string]any{"type": "tool_use", "id": "toolu_loadout_e2e", "name": "Bash", "input": json.RawMessage(input)}
			stop = "tool_use"
			s.mu.Lock()
			s.asked = true
			s.mu.Unlock()
		}
		usage := map[string]int{"input_tokens": 1, "output_tokens": 1}
		if !msg.Stream {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"id": "msg_loadout_e2e", "type": "message", "role": "assistant", "model": msg.Model,
				"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		event := func(name string, v any) {
			b, _ := json.Marshal(v)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		}
		event("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_loadout_e2e", "type": "message",
			"role": "assistant", "model": msg.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})
		if block["type"] == "tool_use" {
			event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
				"content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": "Bash", "input": map[string]any{}}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		} else {
			event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": "done"}})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
		event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 1}})
		event("message_stop", map[string]any{"type": "message_stop"})
	}))
	t.Cleanup(s.Close)
	return s
}
