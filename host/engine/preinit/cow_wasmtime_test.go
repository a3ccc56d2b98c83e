//go:build wasmtime

package preinit_test

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/bytecodealliance/wasmtime-go/v39"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/engine/internal/sandbox"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// guestMemory adapts a wasmtime memory view to sandbox.Memory.
type guestMemory []byte

func (m guestMemory) Read(off, n uint32) ([]byte, bool) {
	if uint64(off)+uint64(n) > uint64(len(m)) {
		return nil, false
	}
	return m[off : off+n], true
}

func (m guestMemory) Write(off uint32, b []byte) bool {
	if uint64(off)+uint64(len(b)) > uint64(len(m)) {
		return false
	}
	copy(m[off:], b)
	return true
}

// rawWasmtime is a wasmtime engine with or without copy-on-write memory images and a linker
// serving the sandbox, as host/engine/wasmtime links it (without epochs or limits).
func rawWasmtime(b *testing.B, cow bool) (*wasmtime.Engine, *wasmtime.Linker) {
	cfg := wasmtime.NewConfig()
	cfg.SetMemoryInitCOWSet(cow)
	cfg.SetCraneliftNanCanonicalization(true)
	e := wasmtime.NewEngineWithConfig(cfg)
	l := wasmtime.NewLinker(e)
	for _, name := range sandbox.Names() {
		sig := sandbox.Signatures[name]
		var params, results []*wasmtime.ValType
		for _, p := range sig.Params {
			params = append(params, wasmtime.NewValType(map[sandbox.ValueType]wasmtime.ValKind{sandbox.I32: wasmtime.KindI32, sandbox.I64: wasmtime.KindI64}[p]))
		}
		for range sig.Results {
			results = append(results, wasmtime.NewValType(wasmtime.KindI32))
		}
		err := l.FuncNew(sandbox.Module, name, wasmtime.NewFuncType(params, results), func(c *wasmtime.Caller, args []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
			sys := c.Data().(*sandbox.Sys)
			raw := make([]uint64, len(args))
			for i, a := range args {
				if a.Kind() == wasmtime.KindI64 {
					raw[i] = uint64(a.I64())
				} else {
					raw[i] = uint64(uint32(a.I32()))
				}
			}
			errno, err := sys.Call(name, guestMemory(c.GetExport(abi.ExportMemory).Memory().UnsafeData(c)), raw)
			if err != nil {
				return nil, wasmtime.NewTrap(err.Error())
			}
			if len(sig.Results) == 0 {
				return nil, nil
			}
			return []wasmtime.Val{wasmtime.ValI32(int32(errno))}, nil
		})
		require.NoError(b, err, "define %s", name)
	}
	return e, l
}

// BenchmarkWasmtimeCOW is a fresh instance plus one render of the empty request on Wasmtime,
// with and without its copy-on-write memory images: with them, a snapshot's pages are mapped
// from the image at instantiation and copied on the guest's first write to each.
func BenchmarkWasmtimeCOW(b *testing.B) {
	orig, snap := claude(b)
	req := requests(b)["empty.json"]
	for _, cow := range []bool{true, false} {
		e, l := rawWasmtime(b, cow)
		for _, mod := range []struct {
			name string
			wasm []byte
		}{{"original", orig}, {"snapshot", snap}} {
			m, err := wasmtime.NewModule(e, mod.wasm)
			require.NoError(b, err, "compile the %s", mod.name)
			b.Run(fmt.Sprintf("cow=%v/%s", cow, mod.name), func(b *testing.B) {
				var before, after syscall.Rusage
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
				defer func() {
					_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
					b.ReportMetric(float64(after.Minflt-before.Minflt)/float64(b.N), "minflt/op")
					b.ReportMetric(float64(after.Majflt-before.Majflt)/float64(b.N), "majflt/op")
				}()
				for b.Loop() {
					store := wasmtime.NewStoreWithData(e, sandbox.New(1<<10))
					inst, err := l.Instantiate(store, m)
					if err != nil {
						b.Fatalf("instantiate: %v", err)
					}
					if f := inst.GetFunc(store, abi.ExportInitialize); f != nil {
						if _, err := f.Call(store); err != nil {
							b.Fatalf("%s: %v", abi.ExportInitialize, err)
						}
					}
					p, err := inst.GetFunc(store, abi.ExportAlloc).Call(store, int32(len(req)))
					if err != nil {
						b.Fatalf("%s: %v", abi.ExportAlloc, err)
					}
					copy(inst.GetExport(store, abi.ExportMemory).Memory().UnsafeData(store)[p.(int32):], req)
					if _, err := inst.GetFunc(store, abi.ExportRender).Call(store, p, int32(len(req))); err != nil {
						b.Fatalf("%s: %v", abi.ExportRender, err)
					}
					store.Close()
				}
			})
			m.Close()
		}
		l.Close()
		e.Close()
	}
}
