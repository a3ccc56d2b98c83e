package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQwenIgnoresCheckout shows with the real Qwen Code why the qwen profile starts it with
// --bare and its servers in an --mcp-config file (docs/FORMATS.md §5.3). The checkout holds a
// .qwen/settings.json naming a server no policy vetted, with hooks that run a command and an env
// entry, and .env files; the user's home holds a ~/.qwen/settings.json with another server and a
// ~/.env; the caller's environment points QWEN_HOME at that home and sets QWEN_CODE_SIMPLE=0.
// With the rendered args and env, Qwen Code loads exactly the rendered servers, starts neither
// intruder, runs no hook, and the canary's environment is exactly the spawn env. With the same
// args less --bare, Qwen Code, which trusts every folder unless its settings enable folder
// trust, reads the checkout's settings and runs its hooks (the checkout's server waits for an
// approval -p mode cannot give; --yolo would start it).
func TestQwenIgnoresCheckout(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	canary, loadout := canaryBinary(t), loadoutBinary(t)
	sc := newScenario(t, "qwen", c)
	r := renderWithLoadout(t, sc, loadout, canary, c)
	require.Contains(t, r.Args, "--bare", "the qwen render must carry --bare")

	intruder := filepath.Join(sc.Dir, "intruder-report.json")
	homeIntruder := filepath.Join(sc.Dir, "home-intruder-report.json")
	hookRan := filepath.Join(sc.Dir, "hook-ran")
	writeJSON(t, filepath.Join(sc.Checkout, ".qwen", "settings.json"), map[string]any{
		"$version":   4,
		"mcpServers": map[string]any{"intruder": map[string]any{"command": canary, "args": []string{intruder}}},
		"hooks": map[string]any{
			"SessionStart":     []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "touch " + hookRan}}}},
			"UserPromptSubmit": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "touch " + hookRan}}}},
		},
		"env": map[string]string{"E2E_FROM_CHECKOUT_SETTINGS": "1"},
	})
	require.NoError(t, os.WriteFile(filepath.Join(sc.Checkout, ".env"), []byte("E2E_FROM_CHECKOUT_ENV=1\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(sc.Checkout, ".qwen", ".env"), []byte("E2E_FROM_CHECKOUT_QWEN_ENV=1\n"), 0o600))
	userHome := filepath.Join(sc.Home, ".qwen")
	writeJSON(t, filepath.Join(userHome, "settings.json"), map[string]any{
		"$version":   4,
		"mcpServers": map[string]any{"home-intruder": map[string]any{"command": canary, "args": []string{homeIntruder}}},
	})
	require.NoError(t, os.WriteFile(filepath.Join(sc.Home, ".env"), []byte("E2E_FROM_HOME_ENV=1\n"), 0o600))

	load := func(args []string) map[string]string {
		t.Helper()
		for _, f := range []string{intruder, homeIntruder, hookRan, sc.CanaryOut} {
			_ = os.Remove(f)
		}
		// The caller's environment first, the run's env over it, as a platform launches the CLI.
		env := qwenEnv(c, sc.Home, r.Env, newModelRecorder(t).URL+"/v1", "QWEN_HOME="+userHome, "QWEN_CODE_SIMPLE=0")
		return qwenStatus(qwenSession(t, c, sc.Checkout, env, args, r.Prompt))
	}

	status := load(r.Args)
	got := make([]string, 0, len(status))
	for name := range status {
		got = append(got, name)
	}
	assert.ElementsMatch(t, r.Servers, got, "with --bare Qwen Code loads exactly the rendered servers")
	for _, f := range []string{intruder, homeIntruder, hookRan} {
		_, err := os.Stat(f)
		assert.True(t, os.IsNotExist(err), "with --bare, %s must never be written (stat: %v)", filepath.Base(f), err)
	}
	checkCanary(t, sc)

	loose := slices.DeleteFunc(slices.Clone(r.Args), func(a string) bool { return a == "--bare" })
	require.Len(t, loose, len(r.Args)-1, "exactly one --bare to remove")
	load(loose)
	_, err := os.Stat(hookRan)
	assert.NoError(t, err, "without --bare, Qwen Code runs the checkout's hooks")
}
