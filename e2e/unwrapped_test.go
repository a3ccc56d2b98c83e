package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUnwrappedSpawnEnv pins what each harness passes to a stdio server configured WITHOUT the
// env wrapper (docs/SPAWN-ENV.md, "Measurements"): Claude and Pi pass their whole environment
// plus variables of their own, Codex a fixed default set, Gemini and Copilot all but what they take
// for their own secrets. It is why the renderers wrap every stdio server; if a harness release
// changes this, the document and the renderers need a look.
func TestUnwrappedSpawnEnv(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	canary := canaryBinary(t)
	const marker = "E2E_HARNESS_ONLY"
	cases := []struct {
		harness string
		// load starts the harness so that it spawns the canary.
		load func(t *testing.T, dir, out string, env []string)
		// present must be in the canary's environment with these values ("" = any value).
		present map[string]string
		// absent must not be.
		absent []string
	}{
		{
			harness: "claude",
			load: func(t *testing.T, dir, out string, env []string) {
				cfg := filepath.Join(dir, "mcp.json")
				writeJSON(t, cfg, map[string]any{"mcpServers": map[string]any{"canary": map[string]any{
					"type": "stdio", "command": canary, "args": []string{out}, "env": map[string]string{"CFG_A": "cfg-a"}}}})
				env = setEnv(env, "CLAUDE_CONFIG_DIR", filepath.Join(dir, "config"))
				_, err := firstLine(context.Background(), claudeTimeout, dir, env, func(b []byte) bool {
					return strings.Contains(string(b), `"subtype":"init"`)
				}, c.Claude, "-p", "--mcp-config", cfg, "--strict-mcp-config", "--output-format", "stream-json", "--verbose", "--", "Reply with OK.")
				require.NoError(t, err, "claude -p --mcp-config: want the init line")
			},
			present: map[string]string{"CFG_A": "cfg-a", marker: "", "ANTHROPIC_API_KEY": "dummy", "CLAUDECODE": "1", "AI_AGENT": ""},
		},
		{
			harness: "codex",
			load: func(t *testing.T, dir, out string, env []string) {
				home := filepath.Join(dir, "config")
				require.NoError(t, os.MkdirAll(home, 0o700), "mkdir CODEX_HOME")
				toml := "[mcp_servers.canary]\ncommand = " + quoteTOML(canary) + "\nargs = [" + quoteTOML(out) + "]\nenv = { CFG_A = \"cfg-a\" }\n"
				require.NoError(t, os.WriteFile(filepath.Join(home, "config.toml"), []byte(toml), 0o600), "write config.toml")
				env = setEnv(env, "CODEX_HOME", home)
				cl, err := startRPC(context.Background(), codexTimeout, dir, env, c.Codex, "app-server")
				require.NoError(t, err, "start codex app-server")
				defer cl.Close()
				_, err = cl.call(1, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize",
					"params": map[string]any{"clientInfo": map[string]any{"name": "loadout-e2e", "version": "1"}}})
				require.NoError(t, err, "codex app-server initialize")
				require.NoError(t, cl.send(map[string]any{"jsonrpc": "2.0", "method": "initialized"}), "codex initialized")
				_, err = cl.call(2, map[string]any{"jsonrpc": "2.0", "id": 2, "method": "mcpServerStatus/list",
					"params": map[string]any{"detail": "toolsAndAuthOnly"}})
				require.NoError(t, err, "codex app-server mcpServerStatus/list")
			},
			present: map[string]string{"CFG_A": "cfg-a", "HOME": "", "LANG": "C.UTF-8", "TERM": "dumb"},
			absent:  []string{marker, "ANTHROPIC_API_KEY", "PI_OFFLINE"},
		},
		{
			harness: "pi",
			load: func(t *testing.T, dir, out string, env []string) {
				agent := filepath.Join(dir, "config")
				require.NoError(t, os.MkdirAll(agent, 0o700), "mkdir the pi agent dir")
				writeJSON(t, filepath.Join(agent, "mcp.json"), map[string]any{"mcpServers": map[string]any{"canary": map[string]any{
					"type": "stdio", "command": canary, "args": []string{out}, "env": map[string]string{"CFG_A": "cfg-a"}}}})
				env = setEnv(env, "PI_CODING_AGENT_DIR", agent)
				res, err := run(context.Background(), piTimeout, dir, env, nil, c.Pi, "mcp", "list", "--json")
				require.NoError(t, err, "pi mcp list --json")
				require.Equal(t, 0, res.Exit, "pi mcp list --json exit status: %s %s", res.Stdout, tail(res.Stderr))
			},
			present: map[string]string{"CFG_A": "cfg-a", marker: "", "AI_AGENT": "pi", "PI_CODING_AGENT": "true"},
		},
		{
			harness: "gemini",
			load: func(t *testing.T, dir, out string, env []string) {
				home := filepath.Join(dir, "config")
				writeJSON(t, filepath.Join(home, ".gemini", "settings.json"), map[string]any{"mcpServers": map[string]any{"canary": map[string]any{
					"command": canary, "args": []string{out}, "env": map[string]string{"CFG_A": "cfg-a"}}}})
				env = setEnv(env, "GEMINI_CLI_HOME", home)
				env = setEnv(env, "GEMINI_API_KEY", "dummy")
				env = setEnv(env, "GEMINI_CLI_TRUST_WORKSPACE", "true")
				res, err := run(context.Background(), geminiTimeout, dir, env, nil, c.Gemini, "mcp", "list")
				require.NoError(t, err, "gemini mcp list")
				require.Equal(t, 0, res.Exit, "gemini mcp list exit status: %s %s", res.Stdout, tail(res.Stderr))
			},
			// Gemini drops names that look secret (its own API key, ANTHROPIC_API_KEY) and adds
			// GEMINI_CLI=1; the rest of its environment, the marker included, passes.
			present: map[string]string{"CFG_A": "cfg-a", marker: "", "GEMINI_CLI": "1", "PI_OFFLINE": "1"},
			absent:  []string{"GEMINI_API_KEY", "ANTHROPIC_API_KEY"},
		},
		{
			harness: "copilot",
			load: func(t *testing.T, dir, out string, env []string) {
				home := filepath.Join(dir, "config")
				writeJSON(t, filepath.Join(home, "mcp-config.json"), map[string]any{"mcpServers": map[string]any{"canary": map[string]any{
					"command": canary, "args": []string{out}, "env": map[string]string{"CFG_A": "cfg-a", "CFG_B": "$" + marker}}}})
				env = setEnv(env, "COPILOT_HOME", home)
				env = setEnv(env, "COPILOT_OFFLINE", "true")
				env = setEnv(env, "COPILOT_PROVIDER_BASE_URL", "http://127.0.0.1:9")
				env = setEnv(env, "COPILOT_MODEL", "gpt-4o")
				env = setEnv(env, "GITHUB_TOKEN", "e2e-github-token")
				env = setEnv(env, "E2E_API_TOKEN", "e2e-api-token")
				_, err := firstLine(context.Background(), copilotTimeout, dir, env, func(b []byte) bool {
					return strings.Contains(string(b), `"type":"session.mcp_servers_loaded"`)
				}, c.Copilot, "-p", "hi", "--output-format", "json")
				require.NoError(t, err, "copilot -p: want session.mcp_servers_loaded")
			},
			// Copilot keeps back a fixed list of credentials and its provider settings
			// (GITHUB_TOKEN, ANTHROPIC_API_KEY, COPILOT_PROVIDER_*); the rest of its environment
			// passes (a secret it does not know, the marker), with variables of its own added,
			// and "$NAME" in an env value is expanded from its environment.
			present: map[string]string{"CFG_A": "cfg-a", "CFG_B": "harness-only-marker", marker: "", "E2E_API_TOKEN": "e2e-api-token",
				"ANTHROPIC_BASE_URL": "", "PYTHONUNBUFFERED": "1", "COPILOT_AGENT_SESSION_ID": "", "COPILOT_HOME": ""},
			absent: []string{"GITHUB_TOKEN", "ANTHROPIC_API_KEY", "COPILOT_PROVIDER_BASE_URL", "COPILOT_OFFLINE"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.harness, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			out := filepath.Join(dir, "canary-report.json")
			env := harnessEnv(c, filepath.Join(dir, "home"), nil)
			tc.load(t, dir, out, env)
			raw, err := os.ReadFile(out)
			require.NoError(t, err, "%s: the canary must have written its report", tc.harness)
			var rep canaryReport
			require.NoError(t, json.Unmarshal(raw, &rep), "decode the canary report")
			got := map[string]string{}
			for _, kv := range rep.Env {
				k, v, _ := strings.Cut(kv, "=")
				got[k] = v
			}
			for k, v := range tc.present {
				gv, ok := got[k]
				if assert.True(t, ok, "%s: unwrapped server env must hold %s (got %v)", tc.harness, k, rep.Env) && v != "" {
					assert.Equal(t, v, gv, "%s: unwrapped server env %s", tc.harness, k)
				}
			}
			for _, k := range tc.absent {
				assert.NotContains(t, got, k, "%s: unwrapped server env must not hold %s", tc.harness, k)
			}
			if tc.harness == "codex" {
				harnessPath, _ := lookupEnv(env, "PATH")
				assert.True(t, strings.HasSuffix(got["PATH"], ":"+harnessPath) && strings.Contains(got["PATH"], "codex-path"),
					"codex prefixes PATH with its codex-path directory: got %q, harness PATH %q", got["PATH"], harnessPath)
			}
		})
	}
}

// writeJSON writes v as JSON to path (mode 0600).
func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err, "encode %s", path)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700), "mkdir for %s", path)
	require.NoError(t, os.WriteFile(path, b, 0o600), "write %s", path)
}

// quoteTOML quotes s as a TOML basic string (JSON string escapes are valid TOML for the paths
// used here).
func quoteTOML(s string) string { return `"` + jsonText(s) + `"` }
