package bench

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/enginetest"
	wz "github.com/loadout-dev/loadout/host/engine/wazero"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// requestBytes is the size of the render request: about what a real run sends.
const requestBytes = 15 << 10

// engines lists the engines to compare; bench_wasmtime_test.go adds wasmtime.
var engines = []struct {
	name string
	new  func(b *testing.B) engine.Engine
}{
	{"wazero", func(b *testing.B) engine.Engine {
		e, err := wz.New(context.Background(), wz.Config{})
		require.NoError(b, err, "wazero.New")
		return e
	}},
	{"wazero-pool", func(b *testing.B) engine.Engine {
		e, err := wz.New(context.Background(), wz.Config{Pool: 2})
		require.NoError(b, err, "wazero.New")
		return e
	}},
}

// BenchmarkCall is the cost of a whole engine.Module.Call: a fresh instance, _initialize, the
// ABI version check, the input copy, the export and the output copy, under the deadline.
func BenchmarkCall(b *testing.B) {
	ctx := context.Background()
	cases := []struct {
		name   string
		wasm   func(b *testing.B) []byte
		export string
		input  []byte
	}{
		{"trivial/manifest", func(b *testing.B) []byte { return enginetest.WAT(b, "ok") }, abi.ExportManifest, nil},
		{"go/manifest", func(b *testing.B) []byte { return enginetest.GoPlugin(b) }, abi.ExportManifest, nil},
		{"go/render-15KB", func(b *testing.B) []byte { return enginetest.GoPlugin(b) }, abi.ExportRender, enginetest.Request(requestBytes)},
	}
	for _, eng := range engines {
		b.Run(eng.name, func(b *testing.B) {
			e := eng.new(b)
			defer e.Close(ctx)
			for _, tc := range cases {
				b.Run(tc.name, func(b *testing.B) {
					m, err := e.Compile(ctx, tc.wasm(b), "", engine.Limits{})
					require.NoError(b, err, "Compile")
					defer m.Close(ctx)
					b.ReportAllocs()
					b.ResetTimer()
					for b.Loop() {
						if _, err := m.Call(ctx, tc.export, tc.input); err != nil {
							b.Fatalf("Call(%s): %v", tc.export, err)
						}
					}
				})
			}
		})
	}
}

// BenchmarkCallIdle is the latency of a Go render when requests arrive slower than the engine
// serves them (30ms apart, outside the timer): what a pool of initialized instances buys.
func BenchmarkCallIdle(b *testing.B) {
	ctx := context.Background()
	req := enginetest.Request(requestBytes)
	for _, eng := range engines {
		b.Run(eng.name+"/go/render-15KB", func(b *testing.B) {
			e := eng.new(b)
			defer e.Close(ctx)
			m, err := e.Compile(ctx, enginetest.GoPlugin(b), "", engine.Limits{})
			require.NoError(b, err, "Compile")
			defer m.Close(ctx)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				time.Sleep(30 * time.Millisecond)
				b.StartTimer()
				if _, err := m.Call(ctx, abi.ExportRender, req); err != nil {
					b.Fatalf("Call(render): %v", err)
				}
			}
		})
	}
}

// rawWazero is a wazero runtime configured like the engine's, with or without the termination
// checks of WithCloseOnContextDone, serving wazero's own WASI (sandboxed by default).
func rawWazero(b *testing.B, closeOnDone bool) wazero.Runtime {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(closeOnDone).WithMemoryLimitPages(engine.DefaultLimits.MemoryPages))
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	return r
}

func wazeroModes() []struct {
	name        string
	closeOnDone bool
} {
	return []struct {
		name        string
		closeOnDone bool
	}{{"wazero-deadline", true}, {"wazero-nodeadline", false}}
}

// instantiateWazero instantiates and initializes one instance.
func instantiateWazero(b *testing.B, ctx context.Context, r wazero.Runtime, cm wazero.CompiledModule) api.Module {
	mod, err := r.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName("").WithStartFunctions())
	if err != nil {
		b.Fatalf("InstantiateModule: %v", err)
	}
	if f := mod.ExportedFunction(abi.ExportInitialize); f != nil {
		if _, err := f.Call(ctx); err != nil {
			b.Fatalf("_initialize: %v", err)
		}
	}
	return mod
}

// deadline returns a context with the default per-call deadline, as the engine uses.
func deadline() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), engine.DefaultLimits.Deadline)
}

// BenchmarkRawInstantiate is instantiation plus _initialize (and close), the part of a call a
// pool of initialized instances would take off the request path.
func BenchmarkRawInstantiate(b *testing.B) {
	for _, mode := range wazeroModes() {
		b.Run(mode.name, func(b *testing.B) {
			r := rawWazero(b, mode.closeOnDone)
			defer r.Close(context.Background())
			for _, p := range []struct {
				name string
				wasm []byte
			}{{"trivial", enginetest.WAT(b, "ok")}, {"go", enginetest.GoPlugin(b)}} {
				b.Run(p.name, func(b *testing.B) {
					cm, err := r.CompileModule(context.Background(), p.wasm)
					require.NoError(b, err, "CompileModule")
					b.ReportAllocs()
					b.ResetTimer()
					for b.Loop() {
						ctx, cancel := deadline()
						mod := instantiateWazero(b, ctx, r, cm)
						_ = mod.Close(ctx)
						cancel()
					}
				})
			}
		})
	}
}

// BenchmarkRawBoundaryCall is one call of a trivial export (loadout_abi_version) on a live
// instance: the fixed cost of crossing into the guest and back.
func BenchmarkRawBoundaryCall(b *testing.B) {
	for _, mode := range wazeroModes() {
		b.Run(mode.name, func(b *testing.B) {
			r := rawWazero(b, mode.closeOnDone)
			defer r.Close(context.Background())
			cm, err := r.CompileModule(context.Background(), enginetest.WAT(b, "ok"))
			require.NoError(b, err, "CompileModule")
			mod := instantiateWazero(b, context.Background(), r, cm)
			f := mod.ExportedFunction(abi.ExportABIVersion)
			b.Run("background-ctx", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := f.Call(context.Background()); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("deadline-ctx", func(b *testing.B) {
				ctx, cancel := deadline()
				defer cancel()
				b.ReportAllocs()
				for b.Loop() {
					if _, err := f.Call(ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("call-with-stack", func(b *testing.B) {
				ctx, cancel := deadline()
				defer cancel()
				stack := make([]uint64, 1)
				b.ReportAllocs()
				for b.Loop() {
					if err := f.CallWithStack(ctx, stack); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// renderWazero hands req to a live instance and renders it.
func renderWazero(b *testing.B, ctx context.Context, mod api.Module, req []byte) {
	p, err := mod.ExportedFunction(abi.ExportAlloc).Call(ctx, uint64(len(req)))
	if err != nil {
		b.Fatalf("alloc: %v", err)
	}
	if !mod.Memory().Write(uint32(p[0]), req) {
		b.Fatal("write request out of range")
	}
	res, err := mod.ExportedFunction(abi.ExportRender).Call(ctx, p[0], uint64(len(req)))
	if err != nil {
		b.Fatalf("render: %v", err)
	}
	if uint32(res[0]) == 0 {
		b.Fatal("empty plan")
	}
}

// BenchmarkRawRender renders a 15 KB request through the Go test plugin. "reused" renders again
// and again on one live instance (the guest's compute and the termination checks' share of
// it); "pooled" renders once on an instance initialized outside the timer, which is the
// request-path latency of a pool of initialized single-use instances.
func BenchmarkRawRender(b *testing.B) {
	req := enginetest.Request(requestBytes)
	for _, mode := range wazeroModes() {
		b.Run(mode.name, func(b *testing.B) {
			r := rawWazero(b, mode.closeOnDone)
			defer r.Close(context.Background())
			cm, err := r.CompileModule(context.Background(), enginetest.GoPlugin(b))
			require.NoError(b, err, "CompileModule")
			b.Run("reused", func(b *testing.B) {
				mod := instantiateWazero(b, context.Background(), r, cm)
				defer mod.Close(context.Background())
				b.ReportAllocs()
				for b.Loop() {
					ctx, cancel := deadline()
					renderWazero(b, ctx, mod, req)
					cancel()
				}
			})
			b.Run("pooled", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					mod := instantiateWazero(b, context.Background(), r, cm)
					b.StartTimer()
					ctx, cancel := deadline()
					renderWazero(b, ctx, mod, req)
					cancel()
					b.StopTimer()
					_ = mod.Close(context.Background())
					b.StartTimer()
				}
			})
		})
	}
}
