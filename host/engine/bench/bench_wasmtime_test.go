//go:build wasmtime

package bench

import (
	"context"
	"testing"

	"github.com/bytecodealliance/wasmtime-go/v39"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/enginetest"
	wt "github.com/loadout-dev/loadout/host/engine/wasmtime"
	"github.com/loadout-dev/loadout/sdk/abi"
)

func init() {
	engines = append(engines, struct {
		name string
		new  func(b *testing.B) engine.Engine
	}{"wasmtime", func(b *testing.B) engine.Engine {
		e, err := wt.New(context.Background(), wt.Config{})
		require.NoError(b, err, "wasmtime.New")
		return e
	}})
}

// rawWasmtime is a Wasmtime engine configured like the engine's, with or without epoch
// interruption, and a linker serving Wasmtime's own WASI.
type rawWasmtime struct {
	engine *wasmtime.Engine
	linker *wasmtime.Linker
	epoch  bool
}

func newRawWasmtime(b *testing.B, epoch bool) *rawWasmtime {
	cfg := wasmtime.NewConfig()
	cfg.SetEpochInterruption(epoch)
	cfg.SetCraneliftNanCanonicalization(true)
	e := wasmtime.NewEngineWithConfig(cfg)
	l := wasmtime.NewLinker(e)
	require.NoError(b, l.DefineWasi(), "DefineWasi")
	return &rawWasmtime{engine: e, linker: l, epoch: epoch}
}

func (r *rawWasmtime) instantiate(b *testing.B, mod *wasmtime.Module) (*wasmtime.Store, *wasmtime.Instance) {
	store := wasmtime.NewStore(r.engine)
	store.SetWasi(wasmtime.NewWasiConfig())
	store.Limiter(int64(engine.DefaultLimits.MemoryPages)*65536, -1, -1, -1, 1)
	if r.epoch {
		store.SetEpochDeadline(1 << 20)
	}
	inst, err := r.linker.Instantiate(store, mod)
	if err != nil {
		b.Fatalf("Instantiate: %v", err)
	}
	if f := inst.GetFunc(store, abi.ExportInitialize); f != nil {
		if _, err := f.Call(store); err != nil {
			b.Fatalf("_initialize: %v", err)
		}
	}
	return store, inst
}

func wasmtimeModes() []struct {
	name  string
	epoch bool
} {
	return []struct {
		name  string
		epoch bool
	}{{"wasmtime-epoch", true}, {"wasmtime-noepoch", false}}
}

func BenchmarkRawInstantiateWasmtime(b *testing.B) {
	for _, mode := range wasmtimeModes() {
		b.Run(mode.name, func(b *testing.B) {
			r := newRawWasmtime(b, mode.epoch)
			for _, p := range []struct {
				name string
				wasm []byte
			}{{"trivial", enginetest.WAT(b, "ok")}, {"go", enginetest.GoPlugin(b)}} {
				b.Run(p.name, func(b *testing.B) {
					mod, err := wasmtime.NewModule(r.engine, p.wasm)
					require.NoError(b, err, "NewModule")
					b.ReportAllocs()
					for b.Loop() {
						store, _ := r.instantiate(b, mod)
						store.Close()
					}
				})
			}
		})
	}
}

func BenchmarkRawBoundaryCallWasmtime(b *testing.B) {
	for _, mode := range wasmtimeModes() {
		b.Run(mode.name, func(b *testing.B) {
			r := newRawWasmtime(b, mode.epoch)
			mod, err := wasmtime.NewModule(r.engine, enginetest.WAT(b, "ok"))
			require.NoError(b, err, "NewModule")
			store, inst := r.instantiate(b, mod)
			defer store.Close()
			f := inst.GetFunc(store, abi.ExportABIVersion)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.Call(store); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func renderWasmtime(b *testing.B, store *wasmtime.Store, inst *wasmtime.Instance, req []byte) {
	p, err := inst.GetFunc(store, abi.ExportAlloc).Call(store, int32(len(req)))
	if err != nil {
		b.Fatalf("alloc: %v", err)
	}
	mem := inst.GetExport(store, abi.ExportMemory).Memory().UnsafeData(store)
	copy(mem[uint32(p.(int32)):], req)
	res, err := inst.GetFunc(store, abi.ExportRender).Call(store, p, int32(len(req)))
	if err != nil {
		b.Fatalf("render: %v", err)
	}
	if uint32(res.(int64)) == 0 {
		b.Fatal("empty plan")
	}
}

func BenchmarkRawRenderWasmtime(b *testing.B) {
	req := enginetest.Request(requestBytes)
	for _, mode := range wasmtimeModes() {
		b.Run(mode.name, func(b *testing.B) {
			r := newRawWasmtime(b, mode.epoch)
			mod, err := wasmtime.NewModule(r.engine, enginetest.GoPlugin(b))
			require.NoError(b, err, "NewModule")
			b.Run("reused", func(b *testing.B) {
				store, inst := r.instantiate(b, mod)
				defer store.Close()
				b.ReportAllocs()
				for b.Loop() {
					renderWasmtime(b, store, inst, req)
				}
			})
			b.Run("pooled", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					store, inst := r.instantiate(b, mod)
					b.StartTimer()
					renderWasmtime(b, store, inst, req)
					b.StopTimer()
					store.Close()
					b.StartTimer()
				}
			})
		})
	}
}
