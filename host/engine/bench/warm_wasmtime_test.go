//go:build wasmtime

package bench

import (
	"bytes"
	"testing"

	"github.com/bytecodealliance/wasmtime-go/v39"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/sdk/abi"
)

// BenchmarkWarmRenderWasmtime is BenchmarkWarmRender on Wasmtime configured as the engine's:
// epoch interruption and NaN canonicalisation.
func BenchmarkWarmRenderWasmtime(b *testing.B) {
	wasm, req, want := warmRenderInput(b)
	benchWarmWasmtime(b, wasm, req, want)
}

// benchWarmWasmtime times warm renders of req on Wasmtime configured as the engine's: each on a
// fresh instance of wasm, instantiated, initialized and closed outside the timer.
// want is the plan the first render must return.
func benchWarmWasmtime(b *testing.B, wasm, req, want []byte) {
	cfg := wasmtime.NewConfig()
	cfg.SetEpochInterruption(true)
	cfg.SetCraneliftNanCanonicalization(true)
	e := wasmtime.NewEngineWithConfig(cfg)
	l := wasmtime.NewLinker(e)
	require.NoError(b, l.DefineWasi(), "DefineWasi")
	r := &rawWasmtime{engine: e, linker: l, epoch: true}
	mod, err := wasmtime.NewModule(e, wasm)
	require.NoError(b, err, "NewModule")
	store, inst := r.instantiate(b, mod)
	require.Equal(b, string(want), string(warmCallWasmtime(b, store, inst, req)), "wasm and native plans differ")
	store.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		store, inst := r.instantiate(b, mod)
		b.StartTimer()
		warmCallWasmtime(b, store, inst, req)
		b.StopTimer()
		store.Close()
		b.StartTimer()
	}
}

// warmCallWasmtime is warmCallWazero on Wasmtime.
func warmCallWasmtime(b *testing.B, store *wasmtime.Store, inst *wasmtime.Instance, req []byte) []byte {
	p, err := inst.GetFunc(store, abi.ExportAlloc).Call(store, int32(len(req)))
	if err != nil {
		b.Fatalf("%s: %v", abi.ExportAlloc, err)
	}
	mem := inst.GetExport(store, abi.ExportMemory).Memory().UnsafeData(store)
	copy(mem[uint32(p.(int32)):], req)
	res, err := inst.GetFunc(store, abi.ExportRender).Call(store, p, int32(len(req)))
	if err != nil {
		b.Fatalf("%s: %v", abi.ExportRender, err)
	}
	packed := uint64(res.(int64))
	ptr, n := uint32(packed>>32), uint32(packed)
	mem = inst.GetExport(store, abi.ExportMemory).Memory().UnsafeData(store)
	if n == 0 || uint64(ptr)+uint64(n) > uint64(len(mem)) {
		b.Fatalf("%s returned %#x: no plan in memory", abi.ExportRender, packed)
	}
	return bytes.Clone(mem[ptr : ptr+n])
}

// BenchmarkWarmRenderCWasmtime is BenchmarkWarmRenderC on Wasmtime, configured as the engine's.
func BenchmarkWarmRenderCWasmtime(b *testing.B) {
	wasm, req, want := warmRenderCInput(b)
	benchWarmWasmtime(b, wasm, req, want)
}
