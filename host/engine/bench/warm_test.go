package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/loadout-dev/loadout/host/engine/internal/meter"
	"github.com/loadout-dev/loadout/host/engine/preinit"
	"github.com/loadout-dev/loadout/internal/testplugins"
)

// warmRenderInput is the claude plugin pre-initialized as the engines prepare it (warm-up
// renders included) and its rich example request.
func warmRenderInput(b *testing.B) (snapshot, req []byte) {
	b.Helper()
	snap, err := preinit.Snapshot(context.Background(), testplugins.Read(b, "claude"), preinit.Options{})
	require.NoError(b, err, "Snapshot(claude)")
	req, err = os.ReadFile(filepath.Join(testplugins.Root(b), "plugins", "claude", "testdata", "requests", "rich.json"))
	require.NoError(b, err, "read rich.json")
	return snap, req
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

// BenchmarkWarmRender is the render of the claude plugin's rich request on a ready instance,
// with the deadline enforced: the instance is pre-initialized (as the engines' Preinit makes
// it) and instantiated outside the timer, then one render runs inside it, and the instance is
// closed outside the timer. It is the request-path cost when instantiation happens ahead (a
// pool); BenchmarkRender in plugins/claude gives the native render of the same request:
//
//	go test -tags wasmtime ./plugins/claude ./host/engine/bench -run '^$' -bench '^BenchmarkRender$|WarmRender'
//
// wazero runs metered (host/engine/internal/meter, what the engine does) and, for comparison,
// with its own WithCloseOnContextDone checks; wasmtime (bench_wasmtime_test.go) with epoch
// interruption.
func BenchmarkWarmRender(b *testing.B) {
	snap, req := warmRenderInput(b)
	metered, err := meter.Instrument(snap, meter.Options{})
	require.NoError(b, err, "Instrument(claude)")
	for _, mode := range []struct {
		name string
		rt   func(b *testing.B) wazero.Runtime
		wasm []byte
	}{
		{"wazero-meter", meteredWazero, metered},
		{"wazero-closeondone", func(b *testing.B) wazero.Runtime { return rawWazero(b, true) }, snap},
	} {
		b.Run(mode.name, func(b *testing.B) {
			ctx := context.Background()
			r := mode.rt(b)
			defer r.Close(ctx)
			cm, err := r.CompileModule(ctx, mode.wasm)
			require.NoError(b, err, "CompileModule")
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				mod := instantiateWazero(b, ctx, r, cm)
				b.StartTimer()
				call, cancel := deadline()
				renderWazero(b, call, mod, req)
				cancel()
				b.StopTimer()
				_ = mod.Close(ctx)
				b.StartTimer()
			}
		})
	}
}
