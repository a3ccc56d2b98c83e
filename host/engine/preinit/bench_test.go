package preinit_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/preinit"
	wz "github.com/loadout-dev/loadout/host/engine/wazero"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// benchEngines lists the engines to compare; bench_wasmtime_test.go adds wasmtime.
var benchEngines = []struct {
	name string
	new  func(b *testing.B) engine.Engine
}{
	{"wazero", func(b *testing.B) engine.Engine {
		e, err := wz.New(context.Background(), wz.Config{})
		require.NoError(b, err, "wazero.New")
		return e
	}},
}

// BenchmarkCall is one engine.Module.Call of the claude plugin: a fresh instance (with
// _initialize for the original, none for the snapshot), the ABI version check, then the
// manifest, or the input copy, the render of a request and the output copy.
func BenchmarkCall(b *testing.B) {
	ctx := context.Background()
	orig, snap := claude(b)
	reqs := requests(b)
	calls := []struct {
		name   string
		export string
		input  []byte
	}{
		{"manifest", abi.ExportManifest, nil},
		{"render-empty", abi.ExportRender, reqs["empty.json"]},
		{"render-rich", abi.ExportRender, reqs["rich.json"]},
	}
	for _, eng := range benchEngines {
		b.Run(eng.name, func(b *testing.B) {
			e := eng.new(b)
			defer e.Close(ctx)
			for _, mod := range []struct {
				name string
				wasm []byte
			}{{"original", orig}, {"snapshot", snap}} {
				m, err := e.Compile(ctx, mod.wasm, engine.Limits{})
				require.NoError(b, err, "Compile(%s)", mod.name)
				defer m.Close(ctx)
				for _, c := range calls {
					b.Run(c.name+"/"+mod.name, func(b *testing.B) {
						b.ReportAllocs()
						for b.Loop() {
							if _, err := m.Call(ctx, c.export, c.input); err != nil {
								b.Fatalf("Call(%s) on the %s: %v", c.export, mod.name, err)
							}
						}
					})
				}
			}
		})
	}
}

// BenchmarkSnapshot is the one-off cost of pre-initializing the claude plugin (compile on a
// private wazero runtime, _initialize, read the state, emit the module).
func BenchmarkSnapshot(b *testing.B) {
	orig, _ := claude(b)
	for _, interp := range []bool{false, true} {
		b.Run(fmt.Sprintf("interpreter=%v", interp), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := preinit.Snapshot(context.Background(), orig, preinit.Options{Interpreter: interp}); err != nil {
					b.Fatalf("Snapshot: %v", err)
				}
			}
		})
	}
}
