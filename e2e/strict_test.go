package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
