package preinit_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/preinit"
	wz "github.com/loadout-dev/loadout/host/engine/wazero"
	"github.com/loadout-dev/loadout/internal/testplugins"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// requests returns the claude plugin's example requests, in name order.
func requests(t testing.TB) map[string][]byte {
	t.Helper()
	dir := filepath.Join(testplugins.Root(t), "plugins", "claude", "testdata", "requests")
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(t, err, "glob %s", dir)
	require.NotEmpty(t, names, "no requests in %s", dir)
	out := map[string][]byte{}
	for _, n := range names {
		b, err := os.ReadFile(n)
		require.NoError(t, err, "read %s", n)
		out[filepath.Base(n)] = b
	}
	return out
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// claudeSnapshot returns the claude plugin and its snapshot, computed once per test binary.
var claudeCache struct {
	orig, snap []byte
}

func claude(t testing.TB) (orig, snap []byte) {
	t.Helper()
	if claudeCache.snap == nil {
		orig := testplugins.Read(t, "claude")
		snap, err := preinit.Snapshot(context.Background(), orig, preinit.Options{})
		require.NoError(t, err, "Snapshot(claude plugin)")
		claudeCache.orig, claudeCache.snap = orig, snap
	}
	return claudeCache.orig, claudeCache.snap
}

// wat compiles testdata/NAME.wat with wat2wasm.
func wat(t testing.TB, name string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), name+".wasm")
	cmd := exec.Command("wat2wasm", "-o", out, filepath.Join("testdata", name+".wat"))
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "wat2wasm %s: %s", name, b)
	wasm, err := os.ReadFile(out)
	require.NoError(t, err, "read %s", out)
	return wasm
}

// callAll runs the manifest and every request, each in a fresh instance of an engine module.
func callAll(t *testing.T, m engine.Module, reqs map[string][]byte) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	out := map[string][]byte{}
	b, err := m.Call(ctx, abi.ExportManifest, nil)
	require.NoError(t, err, "Call(%s)", abi.ExportManifest)
	out["manifest"] = b
	for _, name := range sortedKeys(reqs) {
		b, err := m.Call(ctx, abi.ExportRender, reqs[name])
		require.NoError(t, err, "Call(%s, %s)", abi.ExportRender, name)
		out[name] = b
	}
	return out
}

func TestSnapshotClaudeEquivalentOnWazero(t *testing.T) {
	ctx := context.Background()
	orig, snap := claude(t)
	assert.NotContains(t, exportNames(t, snap), abi.ExportInitialize, "Snapshot result still exports %s", abi.ExportInitialize)
	assert.Contains(t, exportNames(t, orig), abi.ExportInitialize, "the claude plugin should export %s", abi.ExportInitialize)

	e, err := wz.New(ctx, wz.Config{})
	require.NoError(t, err, "wazero.New")
	defer e.Close(ctx)
	mo, err := e.Compile(ctx, orig, engine.Limits{})
	require.NoError(t, err, "Compile(original)")
	ms, err := e.Compile(ctx, snap, engine.Limits{})
	require.NoError(t, err, "Compile(snapshot)")

	reqs := requests(t)
	want := callAll(t, mo, reqs)
	got := callAll(t, ms, reqs)
	require.Len(t, got, len(want), "outputs of the snapshot")
	for name, w := range want {
		assert.True(t, bytes.Equal(w, got[name]), "output for %s differs between the original and the snapshot:\noriginal: %s\nsnapshot: %s", name, w, got[name])
		assert.NotContains(t, string(w), `"error"`, "output for %s should be a plan", name)
	}
	// Render twice more in fresh instances: no state leaks from one call into the next.
	for _, name := range sortedKeys(reqs) {
		b, err := ms.Call(ctx, abi.ExportRender, reqs[name])
		require.NoError(t, err, "second Call(%s, %s) on the snapshot", abi.ExportRender, name)
		assert.Equal(t, string(want[name]), string(b), "second render of %s on the snapshot", name)
	}
}

func TestSnapshotDeterministic(t *testing.T) {
	orig, snap := claude(t)
	again, err := preinit.Snapshot(context.Background(), orig, preinit.Options{})
	require.NoError(t, err, "second Snapshot(claude plugin)")
	assert.True(t, bytes.Equal(snap, again), "two Snapshot calls on the same module gave different bytes (%d and %d bytes)", len(snap), len(again))
	interp, err := preinit.Snapshot(context.Background(), orig, preinit.Options{Interpreter: true})
	require.NoError(t, err, "Snapshot(claude plugin, Interpreter)")
	assert.True(t, bytes.Equal(snap, interp), "Snapshot on the interpreter and on the compiler gave different bytes (%d and %d bytes)", len(interp), len(snap))
	twice, err := preinit.Snapshot(context.Background(), snap, preinit.Options{})
	require.NoError(t, err, "Snapshot(snapshot)")
	assert.True(t, bytes.Equal(snap, twice), "Snapshot of a module without %s should return it unchanged", abi.ExportInitialize)
}

func TestSnapshotFailures(t *testing.T) {
	cases := []struct {
		name    string
		fixture string
		limits  engine.Limits
		is      error
		trap    bool
		msg     string
	}{
		{"init loops", "loop", engine.Limits{Deadline: 200 * time.Millisecond}, engine.ErrTimeout, false, "deadline"},
		{"init traps", "trap", engine.Limits{}, nil, true, "unreachable"},
		{"init grows memory past the cap", "grow", engine.Limits{MemoryPages: 4}, engine.ErrMemoryLimit, true, "memory limit"},
		{"init exits", "exit", engine.Limits{}, nil, true, "proc_exit(3)"},
		{"declared memory over the cap", "bigmem", engine.Limits{MemoryPages: 4}, engine.ErrMemoryLimit, false, "over the cap"},
		{"start section", "start", engine.Limits{}, preinit.ErrUnsupported, false, "start function"},
		{"imported global", "importglobal", engine.Limits{}, engine.ErrLink, false, "only functions may be imported"},
		{"unknown import", "badimport", engine.Limits{}, engine.ErrLink, false, "env.host"},
		{"passive data", "passive", engine.Limits{}, preinit.ErrUnsupported, false, "passive data"},
		{"reserved export", "reserved", engine.Limits{}, preinit.ErrUnsupported, false, "reserved prefix"},
	}
	for _, tc := range cases {
		for _, interp := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/interpreter=%v", tc.name, interp), func(t *testing.T) {
				start := time.Now()
				_, err := preinit.Snapshot(context.Background(), wat(t, tc.fixture), preinit.Options{Limits: tc.limits, Interpreter: interp})
				require.Error(t, err, "Snapshot(%s) should fail", tc.fixture)
				assert.Less(t, time.Since(start), 10*time.Second, "Snapshot(%s) should stop promptly", tc.fixture)
				assert.Contains(t, err.Error(), tc.msg, "Snapshot(%s) error", tc.fixture)
				if tc.is != nil {
					assert.ErrorIs(t, err, tc.is, "Snapshot(%s) error", tc.fixture)
				}
				var te *engine.TrapError
				assert.Equal(t, tc.trap, errorsAs(err, &te), "Snapshot(%s) error %v: is a *engine.TrapError", tc.fixture, err)
			})
		}
	}
}

func TestSnapshotModuleSize(t *testing.T) {
	orig, _ := claude(t)
	_, err := preinit.Snapshot(context.Background(), orig, preinit.Options{Limits: engine.Limits{ModuleBytes: 1 << 20}})
	require.ErrorIs(t, err, engine.ErrModuleSize, "Snapshot of a %d-byte module with a 1 MiB cap", len(orig))
}
