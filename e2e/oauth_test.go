package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The OAuth values of the request of TestOAuthAccepted.
const (
	oauthClientID    = "loadout-e2e-client"
	oauthMetadataURL = "https://auth.example.com/.well-known/oauth-authorization-server"
)

// oauthRequest has two http servers with OAuth settings, one whose metadata URL is plain http
// to loopback (allowed by the URL rules, refused by Claude Code), and a stdio server with a
// lifecycle no harness has.
func oauthRequest(harness, port, everything string) []byte {
	url := "http://127.0.0.1:" + port + "/mcp"
	req := map[string]any{
		"harness": harness,
		"run":     map[string]any{"ambientAuth": false, "user": "e2e"},
		"mcpServers": []any{
			map[string]any{"id": "oauth-docs", "transport": "http", "url": url,
				"oauth": map[string]any{"clientId": oauthClientID, "callbackPort": 8765, "scopes": []string{"docs:read", "docs:search"},
					"authServerMetadataUrl": oauthMetadataURL}},
			map[string]any{"id": "oauth-local", "transport": "http", "url": url,
				"oauth": map[string]any{"clientId": oauthClientID, "authServerMetadataUrl": "http://127.0.0.1:" + port + "/metadata"}},
			map[string]any{"id": "lazy-everything", "transport": "stdio", "command": everything, "lifecycle": "lazy", "idleTimeout": 5},
		},
	}
	b, _ := json.Marshal(req)
	return b
}

// TestOAuthAccepted renders OAuth and lifecycle settings for each harness and loads the result
// with the real CLI (docs/FORMATS.md §7): every server is loaded, none is skipped or refused for
// its OAuth keys, and each harness warns for exactly what it has no key for.
func TestOAuthAccepted(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	loadout := loadoutBinary(t)
	wantWarnings := map[string][]string{
		// Claude Code reads only an https metadata URL.
		"claude": {"oauth_unsupported/oauth-local", "lifecycle_unsupported/lazy-everything"},
		// Codex has no metadata URL key.
		"codex": {"oauth_unsupported/oauth-docs", "oauth_unsupported/oauth-local", "lifecycle_unsupported/lazy-everything"},
		"pi":    {"lifecycle_unsupported/lazy-everything"},
		// Gemini has neither a callback port nor a metadata URL key.
		"gemini": {"oauth_unsupported/oauth-docs", "oauth_unsupported/oauth-local", "lifecycle_unsupported/lazy-everything"},
		// Nor has Copilot.
		"copilot": {"oauth_unsupported/oauth-docs", "oauth_unsupported/oauth-local", "lifecycle_unsupported/lazy-everything"},
	}
	ids := []string{"oauth-docs", "oauth-local", "lazy-everything"}
	for _, h := range []string{"claude", "codex", "pi", "gemini", "copilot"} {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			home := filepath.Join(dir, "home")
			require.NoError(t, os.MkdirAll(home, 0o755))
			port := closedPort(t)
			reqPath := filepath.Join(dir, "request.json")
			require.NoError(t, os.WriteFile(reqPath, oauthRequest(h, port, c.Everything), 0o600))
			// PATH reaches the stdio server (the spawn allowlist): it must find node.
			renderEnv := []string{"PATH=" + c.NodeBin + ":/usr/bin:/bin", "HOME=" + home}
			res, err := run(context.Background(), renderTimeout, dir, renderEnv, nil,
				loadout, "render", "--harness", h, "--out", dir, reqPath, "--format", "json")
			require.NoError(t, err, "loadout render --harness %s", h)
			require.Equal(t, 0, res.Exit, "loadout render --harness %s; stderr: %s", h, tail(res.Stderr))
			var rr renderResult
			require.NoError(t, json.Unmarshal(res.Stdout, &rr), "decode the render result: %s", res.Stdout)
			assert.Equal(t, ids, rr.Servers, "every server is kept")
			var warned []string
			for _, w := range rr.Warnings {
				warned = append(warned, w.Code+"/"+w.Server)
			}
			assert.Equal(t, wantWarnings[h], warned, "one warning per server for what %s has no key for", h)

			config, runRoot := filepath.Join(dir, "config"), filepath.Join(dir, "run")
			switch h {
			case "claude":
				checkClaudeOAuth(t, c, home, filepath.Join(runRoot, "mcp-servers.json"), rr.Env)
			case "codex":
				checkCodexOAuth(t, c, home, config, rr.Env)
			case "pi":
				checkPiOAuth(t, c, home, config, rr.Env, ids)
			case "gemini":
				checkGeminiOAuth(t, c, home, config, rr.Env, ids)
			case "copilot":
				checkCopilotOAuth(t, c, home, config, rr.Env, ids)
			}
		})
	}
}

// checkClaudeOAuth loads the rendered file with claude -p (no entry may be skipped) and adds
// each http entry to a user config with claude mcp add-json, which validates it with the same
// schema, then reads it back with claude mcp get.
func checkClaudeOAuth(t *testing.T, c clis, home, file string, planEnv []envVar) {
	debug := filepath.Join(filepath.Dir(file), "claude-debug.log")
	// The plan's CLAUDE_CONFIG_DIR (the config root) is where add-json writes its user config.
	env := harnessEnv(c, home, planEnv, "MCP_TIMEOUT=10000")
	line, err := firstLine(context.Background(), claudeTimeout, home, env, func(b []byte) bool {
		return strings.Contains(string(b), `"subtype":"init"`)
	}, c.Claude, "-p", "--mcp-config", file, "--strict-mcp-config", "--output-format", "stream-json", "--verbose", "--debug-file", debug, "--", "Reply with OK.")
	require.NoError(t, err, "claude -p: want the init line")
	var in claudeInit
	require.NoError(t, json.Unmarshal(line, &in))
	var names []string
	for _, s := range in.MCPServers {
		names = append(names, s.Name)
	}
	assert.ElementsMatch(t, []string{"oauth-docs", "oauth-local", "lazy-everything"}, names, "claude init mcp_servers: no entry skipped")
	log, err := os.ReadFile(debug)
	require.NoError(t, err)
	assert.NotContains(t, string(log), "Skipped —", "claude debug log: no entry skipped")

	raw, err := os.ReadFile(file)
	require.NoError(t, err)
	var doc struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	for _, id := range []string{"oauth-docs", "oauth-local"} {
		res, err := run(context.Background(), claudeTimeout, home, env, nil, c.Claude, "mcp", "add-json", "-s", "user", id, string(doc.MCPServers[id]))
		require.NoError(t, err)
		assert.Equal(t, 0, res.Exit, "claude mcp add-json %s %s: %s", id, doc.MCPServers[id], tail(res.Stderr))
	}
	res, err := run(context.Background(), claudeTimeout, home, env, nil, c.Claude, "mcp", "get", "oauth-docs")
	require.NoError(t, err)
	assert.Contains(t, string(res.Stdout), "OAuth: client_id configured, callback_port 8765", "claude mcp get oauth-docs: %s", res.Stdout)
}

// checkCodexOAuth loads config.toml with codex mcp list --json and codex doctor --json: the
// servers are listed and no key of theirs is reported as ignored.
func checkCodexOAuth(t *testing.T, c clis, home, config string, planEnv []envVar) {
	env := harnessEnv(c, home, planEnv, "CODEX_HOME="+config)
	raw, err := os.ReadFile(filepath.Join(config, "config.toml"))
	require.NoError(t, err)
	var doc struct {
		MCPServers map[string]map[string]any `toml:"mcp_servers"`
	}
	_, err = toml.Decode(string(raw), &doc)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"client_id": oauthClientID, "callback_port": int64(8765)}, doc.MCPServers["oauth-docs"]["oauth"], "codex oauth table")
	assert.Equal(t, []any{"docs:read", "docs:search"}, doc.MCPServers["oauth-docs"]["scopes"], "codex scopes")

	res, err := run(context.Background(), codexTimeout, home, env, nil, c.Codex, "mcp", "list", "--json")
	require.NoError(t, err)
	require.Equal(t, 0, res.Exit, "codex mcp list --json: %s", tail(res.Stderr))
	var list []struct {
		Name string `json:"name"`
	}
	require.NoError(t, json.Unmarshal(res.Stdout, &list), "decode codex mcp list: %s", res.Stdout)
	var names []string
	for _, s := range list {
		names = append(names, s.Name)
	}
	assert.ElementsMatch(t, []string{"oauth-docs", "oauth-local", "lazy-everything"}, names, "codex mcp list")

	res, err = run(context.Background(), codexTimeout, home, env, nil, c.Codex, "doctor", "--json")
	require.NoError(t, err)
	var dr struct {
		Checks map[string]struct {
			Status  string         `json:"status"`
			Details map[string]any `json:"details"`
		} `json:"checks"`
	}
	require.NoError(t, json.Unmarshal(res.Stdout, &dr), "decode codex doctor --json: %s", res.Stdout)
	load, ok := dr.Checks["config.load"]
	require.True(t, ok, "codex doctor --json has a config.load check: %s", res.Stdout)
	assert.Equal(t, "ok", load.Status, "codex doctor config.load (no key ignored): %v", load.Details)
	assert.NotContains(t, fmt.Sprint(load.Details), "is ignored", "codex doctor: an ignored key")
}

// checkPiOAuth loads mcp.json with pi mcp list --json: no config error (the http servers fail
// to connect, as nothing listens, which is not an error of the file).
func checkPiOAuth(t *testing.T, c clis, home, config string, planEnv []envVar, ids []string) {
	env := harnessEnv(c, home, planEnv, "PI_CODING_AGENT_DIR="+config)
	res, err := run(context.Background(), piTimeout, home, env, nil, c.Pi, "mcp", "list", "--json")
	require.NoError(t, err)
	var list struct {
		Servers []struct {
			Name  string `json:"name"`
			State string `json:"state"`
		} `json:"servers"`
		Errors []string `json:"errors"`
	}
	require.NoError(t, json.Unmarshal(res.Stdout, &list), "decode pi mcp list: %s", res.Stdout)
	assert.Empty(t, list.Errors, "pi mcp list: no config error")
	var names []string
	for _, s := range list.Servers {
		names = append(names, s.Name)
		if s.Name == "lazy-everything" {
			assert.Equal(t, "connected", s.State, "pi: the stdio server connects")
		}
	}
	assert.ElementsMatch(t, ids, names, "pi mcp list")
}

// checkGeminiOAuth loads settings.json with gemini mcp list: every server listed, no invalid
// configuration.
func checkGeminiOAuth(t *testing.T, c clis, home, config string, planEnv []envVar, ids []string) {
	env := trustFolder(harnessEnv(c, home, planEnv, "GEMINI_API_KEY=dummy"))
	raw, err := os.ReadFile(filepath.Join(config, ".gemini", "settings.json"))
	require.NoError(t, err)
	var doc struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	assert.Equal(t, map[string]any{"clientId": oauthClientID, "scopes": []any{"docs:read", "docs:search"}}, doc.MCPServers["oauth-docs"]["oauth"], "gemini oauth object")
	res, err := run(context.Background(), geminiTimeout, home, env, nil, c.Gemini, "mcp", "list")
	require.NoError(t, err)
	out := string(res.Stdout) + string(res.Stderr)
	assert.NotContains(t, out, "Invalid configuration", "gemini mcp list: %s", out)
	var names []string
	for _, m := range geminiServer.FindAllStringSubmatch(out, -1) {
		names = append(names, m[1])
	}
	slices.Sort(names)
	want := slices.Clone(ids)
	slices.Sort(want)
	assert.Equal(t, want, names, "gemini mcp list: %s", out)
}

// checkCopilotOAuth loads mcp-config.json with copilot mcp list --json, which drops an entry it
// cannot read without a word (docs/FORMATS.md §5.2): every server is listed, and the http
// servers with the OAuth keys as rendered.
func checkCopilotOAuth(t *testing.T, c clis, home, config string, planEnv []envVar, ids []string) {
	env := harnessEnv(c, home, planEnv, "COPILOT_OFFLINE=true", "COPILOT_AUTO_UPDATE=false")
	raw, err := os.ReadFile(filepath.Join(config, "mcp-config.json"))
	require.NoError(t, err)
	var doc struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	docs := doc.MCPServers["oauth-docs"]
	assert.Equal(t, oauthClientID, docs["oauthClientId"], "copilot oauthClientId")
	assert.Equal(t, []any{"docs:read", "docs:search"}, docs["oauthScopes"], "copilot oauthScopes")
	assert.Equal(t, oauthClientID, doc.MCPServers["oauth-local"]["oauthClientId"], "copilot oauthClientId of oauth-local")

	res, err := run(context.Background(), copilotTimeout, home, env, nil, c.Copilot, "--no-auto-update", "mcp", "list", "--json")
	require.NoError(t, err, "copilot mcp list --json")
	require.Equal(t, 0, res.Exit, "copilot mcp list --json exit status (stderr: %s)", tail(res.Stderr))
	var list struct {
		MCPServers map[string]struct {
			Source        string   `json:"source"`
			OAuthClientID string   `json:"oauthClientId"`
			OAuthScopes   []string `json:"oauthScopes"`
		} `json:"mcpServers"`
	}
	require.NoError(t, json.Unmarshal(res.Stdout, &list), "decode copilot mcp list --json: %s", res.Stdout)
	var names []string
	for name, s := range list.MCPServers {
		names = append(names, name)
		assert.Equal(t, "user", s.Source, "copilot mcp list: %s comes from $COPILOT_HOME/mcp-config.json", name)
	}
	assert.ElementsMatch(t, ids, names, "copilot mcp list: no entry dropped: %s", res.Stdout)
	assert.Equal(t, oauthClientID, list.MCPServers["oauth-docs"].OAuthClientID, "copilot mcp list: oauth-docs client id")
	assert.Equal(t, []string{"docs:read", "docs:search"}, list.MCPServers["oauth-docs"].OAuthScopes, "copilot mcp list: oauth-docs scopes")
	assert.Equal(t, oauthClientID, list.MCPServers["oauth-local"].OAuthClientID, "copilot mcp list: oauth-local client id")
}
