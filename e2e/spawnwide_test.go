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
	c := findCLIs(t)
	canary, loadout := canaryBinary(t), loadoutBinary(t)
	for _, h := range []string{"claude", "codex", "pi", "gemini", "copilot"} {
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
