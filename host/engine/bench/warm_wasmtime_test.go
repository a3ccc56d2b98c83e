//go:build wasmtime

package bench

import (
	"testing"

	"github.com/bytecodealliance/wasmtime-go/v39"
	"github.com/stretchr/testify/require"

	wt "github.com/loadout-dev/loadout/host/engine/wasmtime"
)

// BenchmarkWarmRenderWasmtime is BenchmarkWarmRender on Wasmtime configured as the engine's:
// epoch interruption and the pooling allocator with host/engine/wasmtime's slot settings, so a
// store reuses a slot whose memory pages stayed resident.
func BenchmarkWarmRenderWasmtime(b *testing.B) {
	snap, req := warmRenderInput(b)
	cfg := wasmtime.NewConfig()
	cfg.SetEpochInterruption(true)
	cfg.SetCraneliftNanCanonicalization(true)
	require.True(b, wt.Pooling(cfg, wt.DefaultSlots, wt.KeepResident), "configure the pooling allocator")
	e := wasmtime.NewEngineWithConfig(cfg)
	l := wasmtime.NewLinker(e)
	require.NoError(b, l.DefineWasi(), "DefineWasi")
	r := &rawWasmtime{engine: e, linker: l, epoch: true}
	mod, err := wasmtime.NewModule(e, snap)
	require.NoError(b, err, "NewModule")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		store, inst := r.instantiate(b, mod)
		b.StartTimer()
		renderWasmtime(b, store, inst, req)
		b.StopTimer()
		store.Close()
		b.StartTimer()
	}
}
