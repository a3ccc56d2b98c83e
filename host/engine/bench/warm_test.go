package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/internal/capmem"
	"github.com/loadout-dev/loadout/internal/testplugins"
	"github.com/loadout-dev/loadout/plugins/claude/render"
	"github.com/loadout-dev/loadout/sdk"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// warmRenderInput is the claude plugin as the engines run it, its rich example request, and the
// plan the same code renders natively.
func warmRenderInput(b *testing.B) (wasm, req, want []byte) {
	b.Helper()
	wasm = testplugins.Read(b, "claude")
	req, err := os.ReadFile(filepath.Join(testplugins.Root(b), "plugins", "claude", "testdata", "requests", "rich.json"))
	require.NoError(b, err, "read rich.json")
	native, err := sdk.New(render.Manifest, render.Render)
	require.NoError(b, err, "sdk.New(claude)")
	want = native.Render(req)
	require.False(b, bytes.Contains(want, []byte(`"error"`)), "native render failed: %s", want)
	return wasm, req, want
}

// warmCallWazero is what an engine's call does on a ready instance of a module whose ABI
// version it has checked once: hand the request over, render, and copy the plan out.
func warmCallWazero(b *testing.B, ctx context.Context, mod api.Module, req []byte) []byte {
	p, err := mod.ExportedFunction(abi.ExportAlloc).Call(ctx, uint64(len(req)))
	if err != nil || !mod.Memory().Write(uint32(p[0]), req) {
		b.Fatalf("%s: %v", abi.ExportAlloc, err)
	}
	res, err := mod.ExportedFunction(abi.ExportRender).Call(ctx, p[0], uint64(len(req)))
	if err != nil {
		b.Fatalf("%s: %v", abi.ExportRender, err)
	}
	view, ok := mod.Memory().Read(uint32(res[0]>>32), uint32(res[0]))
	if !ok || len(view) == 0 {
		b.Fatalf("%s returned %#x: no plan in memory", abi.ExportRender, res[0])
	}
	return bytes.Clone(view)
}

// BenchmarkWarmRender is the render of the claude plugin's rich request natively (the same
// code, plugins/claude/render, through the sdk's wire path) and on a ready instance,
// with the deadline enforced: the instance is instantiated and initialized outside the timer, then the call runs inside it as an engine runs it on
// a ready instance (request in, render, plan out; the engine checks the ABI version once per
// module), and the instance is
// closed outside the timer. It is the request-path cost when instantiation happens ahead (a
// pool). The native render runs first, in the same process, so the ratios come from one run:
//
//	go test -tags wasmtime ./host/engine/bench -run '^$' -bench WarmRender -count 3
//
// wazero runs with its WithCloseOnContextDone checks, as the engine does; wasmtime
// (bench_wasmtime_test.go) with epoch interruption.
func BenchmarkWarmRender(b *testing.B) {
	wasm, req, want := warmRenderInput(b)
	native, err := sdk.New(render.Manifest, render.Render)
	require.NoError(b, err, "sdk.New(claude)")
	b.Run("native", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			native.Render(req)
		}
	})
	b.Run("wazero", func(b *testing.B) { benchWarmWazero(b, rawWazero(b, true), wasm, req, want) })
}

// benchWarmWazero times warm renders of req on r: each on a fresh instance of wasm, instantiated
// (with memory from a recycler, as the engine's instances get it) and closed outside the timer.
// want is the plan the first render must return. It closes r.
func benchWarmWazero(b *testing.B, r wazero.Runtime, wasm, req, want []byte) {
	ctx := context.Background()
	defer r.Close(ctx)
	cm, err := r.CompileModule(ctx, wasm)
	require.NoError(b, err, "CompileModule")
	first := instantiateWazero(b, ctx, r, cm)
	require.Equal(b, string(want), string(warmCallWazero(b, ctx, first, req)), "wasm and native plans differ")
	_ = first.Close(ctx)
	// The recycler leaves the collector no garbage from the instantiations between renders.
	recycler := &capmem.Recycler{Max: 2}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		alloc := &capmem.Allocator{Limit: uint64(engine.DefaultLimits.MemoryPages) * 65536, Recycler: recycler}
		mod := instantiateWazero(b, experimental.WithMemoryAllocator(ctx, alloc), r, cm)
		b.StartTimer()
		call, cancel := deadline()
		warmCallWazero(b, call, mod, req)
		cancel()
		b.StopTimer()
		_ = mod.Close(ctx)
		alloc.Release()
		b.StartTimer()
	}
}
