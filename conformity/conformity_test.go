package conformity_test

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/conformity"
	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/wazero"
	"github.com/loadout-dev/loadout/internal/testplugins"
)

var casesDir = flag.String("cases", "testdata/cases", "directory of conformity cases to run")

const exceptionsFile = "testdata/exceptions.txt"

// builtins are the project's plugins every engine runs.
var builtins = []string{"claude", "codex", "copilot", "gemini", "mcpjson-c", "pi", "qwen"}

// engines are the engines this test binary runs on (wasmtime joins with -tags wasmtime).
var engines = []func(ctx context.Context) (engine.Engine, error){
	func(ctx context.Context) (engine.Engine, error) { return wazero.New(ctx, wazero.Config{}) },
}

// wasmTargets builds every built-in plugin once, reads its bytes once (so every engine runs the
// very same module, even while its sources change) and compiles it once per engine.
func wasmTargets(t *testing.T) []conformity.Target {
	t.Helper()
	ctx := context.Background()
	wasm := map[string][]byte{}
	for _, name := range builtins {
		wasm[name] = testplugins.Read(t, name)
	}
	var targets []conformity.Target
	for _, newEngine := range engines {
		eng, err := newEngine(ctx)
		require.NoError(t, err, "new engine")
		t.Cleanup(func() { _ = eng.Close(ctx) })
		for _, name := range builtins {
			tg, p, err := conformity.Wasm(ctx, eng, name+".wasm", wasm[name])
			require.NoError(t, err, "conformity.Wasm(%s, %s)", eng.Name(), name)
			t.Cleanup(func() { _ = p.Close(ctx) })
			targets = append(targets, tg)
		}
	}
	return targets
}

// report prints one subtest per result so that a failure names its case, harness and engine.
func report(t *testing.T, rep *conformity.Report) {
	t.Helper()
	for _, res := range rep.Results {
		t.Run(fmt.Sprintf("%s/%s/%s", res.Harness, res.Engine, res.File), func(t *testing.T) {
			assert.True(t, res.OK, "case %s on %s (%s): %s", res.File, res.Harness, res.Engine, strings.Join(res.Failures, "\n"))
		})
	}
}

// TestCorpus runs the whole corpus on every built-in plugin and every engine, and diffs the
// engines' outputs.
func TestCorpus(t *testing.T) {
	ex, err := conformity.LoadExceptions(exceptionsFile)
	require.NoError(t, err, "LoadExceptions(%s)", exceptionsFile)
	targets := wasmTargets(t)
	start := time.Now()
	rep, err := conformity.Run(context.Background(), conformity.Config{CaseDirs: []string{*casesDir}, Targets: targets, Exceptions: ex, TempDir: t.TempDir()})
	require.NoError(t, err, "conformity.Run")
	t.Logf("%d results (%d targets) in %s", len(rep.Results), len(targets), time.Since(start).Round(time.Millisecond))
	report(t, rep)
	assert.True(t, rep.OK(), "conformity.Run: want every case to pass")
}
