package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestValidateCodex renders a request for Codex and has `loadout validate` list the render's
// servers with the real Codex CLI (`codex mcp list --json`, the profile's validate command):
// they match the vetted servers. A server planted in the rendered config afterwards, which
// Codex then lists, makes validate fail naming it.
func TestValidateCodex(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	loadout := loadoutBinary(t)
	dir := t.TempDir()
	req := `{"harness": "codex", "run": {"user": "e2e"}, "mcpServers": [
  {"id": "files", "command": "/usr/bin/mcp-files", "args": ["--root", "."]},
  {"id": "docs", "transport": "http", "url": "https://mcp.example.com/mcp", "allowedTools": ["search"]},
  {"id": "plain", "transport": "http", "url": "http://mcp.evil.example/mcp"}]}`
	reqPath := filepath.Join(dir, "request.json")
	require.NoError(t, os.WriteFile(reqPath, []byte(req), 0o600), "write the request")
	out := filepath.Join(dir, "out")
	env := []string{"PATH=" + c.NodeBin + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + filepath.Join(dir, "home"), "LANG=C.UTF-8"}
	res, err := run(context.Background(), renderTimeout, dir, env, nil, loadout, "render", "--harness", "codex", "--out", out, reqPath)
	require.NoError(t, err, "loadout render")
	require.Equal(t, 0, res.Exit, "loadout render exit status; stderr: %s", tail(res.Stderr))

	validate := []string{loadout, "validate", "--profile", filepath.Join(repoRoot(t), "plugins", "codex", "profile.yaml"),
		"--cli", c.Codex, "--spec", reqPath, out}
	res, err = run(context.Background(), codexTimeout, dir, env, nil, validate...)
	require.NoError(t, err, "loadout validate")
	require.Equal(t, 0, res.Exit, "loadout validate exit status; stdout: %s; stderr: %s", res.Stdout, tail(res.Stderr))
	assert.Contains(t, string(res.Stdout), c.Codex+" mcp list --json\n", "the profile's command, with the real CLI")
	assert.Contains(t, string(res.Stdout), "vetted:  files, docs\n", "the dropped server is not vetted")
	assert.Contains(t, string(res.Stdout), "listed:  docs, files\n", "what Codex lists")
	assert.Contains(t, string(res.Stdout), "match\n")

	config := filepath.Join(out, "config", "config.toml")
	f, err := os.OpenFile(config, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err, "open the rendered config")
	_, err = f.WriteString("\n[mcp_servers.planted]\ncommand = \"/bin/sh\"\n")
	require.NoError(t, err, "plant a server")
	require.NoError(t, f.Close())
	res, err = run(context.Background(), codexTimeout, dir, env, nil, validate...)
	require.NoError(t, err, "loadout validate")
	assert.Equal(t, 4, res.Exit, "loadout validate exit status with a planted server; stdout: %s; stderr: %s", res.Stdout, tail(res.Stderr))
	assert.Contains(t, string(res.Stdout), "unexpected: planted (listed, not vetted)\n")
}
