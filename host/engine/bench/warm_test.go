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
	"github.com/tetratelabs/wazero/sys"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/enginetest"
	"github.com/loadout-dev/loadout/host/engine/internal/capmem"
	"github.com/loadout-dev/loadout/host/engine/internal/meter"
	"github.com/loadout-dev/loadout/host/engine/preinit"
	"github.com/loadout-dev/loadout/internal/testplugins"
	"github.com/loadout-dev/loadout/plugins/claude/render"
	"github.com/loadout-dev/loadout/sdk"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// warmRenderInput is the claude plugin pre-initialized as the engines prepare it (warm-up
// renders included), its rich example request, and the plan the same code renders natively.
func warmRenderInput(b *testing.B) (snapshot, req, want []byte) {
	b.Helper()
	snap, err := preinit.Snapshot(context.Background(), testplugins.Read(b, "claude"), preinit.Options{})
	require.NoError(b, err, "Snapshot(claude)")
	req, err = os.ReadFile(filepath.Join(testplugins.Root(b), "plugins", "claude", "testdata", "requests", "rich.json"))
	require.NoError(b, err, "read rich.json")
	native, err := sdk.New(render.Manifest, render.Render)
	require.NoError(b, err, "sdk.New(claude)")
	want = native.Render(req)
	require.False(b, bytes.Contains(want, []byte(`"error"`)), "native render failed: %s", want)
	return snap, req, want
}

// goPreinit is the Go test plugin pre-initialized as the engines' Preinit prepares it: the
// instantiation left on a call's path is then copying the snapshot in.
func goPreinit(b *testing.B) []byte {
	b.Helper()
	snap, err := preinit.Snapshot(context.Background(), enginetest.GoPlugin(b), preinit.Options{})
	require.NoError(b, err, "Snapshot(Go test plugin)")
	return snap
}

// meteredWazero is a wazero runtime configured as host/engine/wazero's: no termination checks
// of its own, the meter's yield host function stopping a guest whose context has ended.
func meteredWazero(b *testing.B) wazero.Runtime {
	ctx := context.Background()
	r := rawWazero(b, false)
	yield := api.GoFunc(func(ctx context.Context, _ []uint64) {
		if ctx.Err() != nil {
			panic(sys.NewExitError(sys.ExitCodeDeadlineExceeded))
		}
	})
	_, err := r.NewHostModuleBuilder(meter.ImportModule).
		NewFunctionBuilder().WithGoFunction(yield, nil, nil).Export(meter.ImportName).
		Instantiate(ctx)
	require.NoError(b, err, "instantiate the meter host module")
	return r
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
// with the deadline enforced: the instance is pre-initialized (as the engines' Preinit makes
// it) and instantiated outside the timer, then the call runs inside it as an engine runs it on
// a ready instance (request in, render, plan out; the engine checks the ABI version once per
// module), and the instance is
// closed outside the timer. It is the request-path cost when instantiation happens ahead (a
// pool). The native render runs first, in the same process, so the ratios come from one run:
//
//	go test -tags wasmtime ./host/engine/bench -run '^$' -bench WarmRender -count 3
//
// wazero runs metered (host/engine/internal/meter, what the engine does) and, for comparison,
// with its own WithCloseOnContextDone checks; wasmtime (bench_wasmtime_test.go) with epoch
// interruption.
func BenchmarkWarmRender(b *testing.B) {
	snap, req, want := warmRenderInput(b)
	metered, err := meter.Instrument(snap, meter.Options{})
	require.NoError(b, err, "Instrument(claude)")
	native, err := sdk.New(render.Manifest, render.Render)
	require.NoError(b, err, "sdk.New(claude)")
	b.Run("native", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			native.Render(req)
		}
	})
	for _, mode := range []struct {
		name string
		rt   func(b *testing.B) wazero.Runtime
		wasm []byte
	}{
		{"wazero-meter", meteredWazero, metered},
		{"wazero-closeondone", func(b *testing.B) wazero.Runtime { return rawWazero(b, true) }, snap},
	} {
		b.Run(mode.name, func(b *testing.B) { benchWarmWazero(b, mode.rt(b), mode.wasm, req, want) })
	}
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
