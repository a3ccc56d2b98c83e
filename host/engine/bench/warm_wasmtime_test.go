//go:build wasmtime

package bench

import (
	"testing"

	"github.com/bytecodealliance/wasmtime-go/v39"
	"github.com/stretchr/testify/require"
)

// BenchmarkWarmRenderWasmtime is BenchmarkWarmRender on Wasmtime with epoch interruption. The
// memory image is copied at instantiation (copy-on-write off), so that, as in a slot of the
// engine's pooling allocator, the render does not fault the image's pages in.
func BenchmarkWarmRenderWasmtime(b *testing.B) {
	snap, req := warmRenderInput(b)
	cfg := wasmtime.NewConfig()
	cfg.SetEpochInterruption(true)
	cfg.SetCraneliftNanCanonicalization(true)
	cfg.SetMemoryInitCOWSet(false)
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
