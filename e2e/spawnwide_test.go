package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestManySpawnVariables starts the canary with 50 variables of its own through every
// harness's real CLI: each harness expands the wrapper's references in its own way and some
// stop expanding a long string (Copilot past about 1 KiB), so the spawn form must hold for any
// number of variables. The canary must see exactly the 50 and the allowlisted host variables
// loadout rendered with (PATH, HOME), each value as written.
func TestManySpawnVariables(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	canary, loadout := canaryBinary(t), loadoutBinary(t)
	for _, h := range []string{"claude", "codex", "pi", "gemini", "copilot", "qwen"} {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			home := filepath.Join(dir, "home")
			out := filepath.Join(dir, "canary-report.json")
			require.NoError(t, os.MkdirAll(home, 0o755))
			env := map[string]string{}
			for i := range 50 {
				env[fmt.Sprintf("WIDE_SPAWN_VARIABLE_%02d", i)] = fmt.Sprintf("value-%02d-${HOME}-$x", i)
			}
			req, err := json.Marshal(map[string]any{
				"harness": h,
				"run":     map[string]any{"ambientAuth": false, "user": "e2e"},
				"mcpServers": []any{
					map[string]any{"id": "canary", "transport": "stdio", "command": canary, "args": []string{out}, "env": env},
				},
			})
			require.NoError(t, err)
			rr := renderWithHome(t, loadout, h, dir, home, c, req)
			loadServers(t, h, c, dir, home, rr)

			raw, err := os.ReadFile(out)
			require.NoError(t, err, "%s: the canary must have started", h)
			var rep canaryReport
			require.NoError(t, json.Unmarshal(raw, &rep))
			got := map[string]string{}
			for _, kv := range rep.Env {
				k, v, _ := strings.Cut(kv, "=")
				got[k] = v
			}
			want := map[string]string{"PATH": c.NodeBin + ":/usr/bin:/bin", "HOME": home}
			for k, v := range env {
				want[k] = v
			}
			assert.Equal(t, want, got, "%s: the canary's environment", h)
		})
	}
}

// tildeArgs are args Pi replaces by its own HOME when they are "~" or start with "~/", beside
// forms it leaves alone; each must reach the server as written.
var tildeArgs = []string{"~", "~/x", "a~/x", "--opt=~/x", "~user", "~/"}

// TestTildeArgsArriveVerbatim starts the canary through every harness's real CLI with args
// that are "~" or start with "~/" (Pi expands them to its HOME, docs/SPAWN-ENV.md): the
// canary's argv must be exactly the vetted args.
func TestTildeArgsArriveVerbatim(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	canary, loadout := canaryBinary(t), loadoutBinary(t)
	for _, h := range []string{"claude", "codex", "pi", "gemini", "copilot", "qwen"} {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			home := filepath.Join(dir, "home")
			out := filepath.Join(dir, "canary-report.json")
			require.NoError(t, os.MkdirAll(home, 0o755))
			args := append([]string{out}, tildeArgs...)
			req, err := json.Marshal(map[string]any{
				"harness": h,
				"run":     map[string]any{"ambientAuth": false, "user": "e2e"},
				"mcpServers": []any{
					map[string]any{"id": "canary", "transport": "stdio", "command": canary, "args": args,
						"env": map[string]string{"TILDE": "~/v"}},
				},
			})
			require.NoError(t, err)
			rr := renderWithHome(t, loadout, h, dir, home, c, req)
			loadServers(t, h, c, dir, home, rr)

			raw, err := os.ReadFile(out)
			require.NoError(t, err, "%s: the canary must have started", h)
			var rep canaryReport
			require.NoError(t, json.Unmarshal(raw, &rep))
			require.NotEmpty(t, rep.Cmdlines, "%s: the canary reports its argv", h)
			assert.Equal(t, append([]string{canary}, args...), rep.Cmdlines[0].Argv, "%s: the canary's argv", h)
			assert.Contains(t, rep.Env, "TILDE=~/v", "%s: an env value with a leading ~/", h)
		})
	}
}
