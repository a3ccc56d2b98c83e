//go:build !wasip1

package main

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/wazero"
	"github.com/loadout-dev/loadout/internal/testplugins"
	"github.com/loadout-dev/loadout/plugins/claude/render"
	"github.com/loadout-dev/loadout/sdk"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// benchEngines are the engines BenchmarkRender compares with the native render; the wasmtime
// build tag adds wasmtime (bench_wasmtime_test.go).
var benchEngines = []struct {
	name string
	new  func(ctx context.Context) (engine.Engine, error)
}{
	{"wazero", func(ctx context.Context) (engine.Engine, error) {
		return wazero.New(ctx, wazero.Config{})
	}},
	{"wazero-pool", func(ctx context.Context) (engine.Engine, error) {
		return wazero.New(ctx, wazero.Config{Pool: 2})
	}},
}

// BenchmarkRender renders the same request natively (the sdk wire path, no wasm) and in the
// built plugin on each engine with its deadline on, side by side:
//
//	go test ./plugins/claude -run '^$' -bench Render -benchmem [-tags wasmtime]
func BenchmarkRender(b *testing.B) {
	ctx := context.Background()
	req, err := os.ReadFile("testdata/requests/rich.json")
	require.NoError(b, err)
	p, err := sdk.New(render.Manifest, render.Render)
	require.NoError(b, err)
	want := p.Render(req)
	require.False(b, bytes.Contains(want, []byte(`"error"`)), "native render failed: %s", want)

	b.Run("native", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p.Render(req)
		}
	})
	wasm := testplugins.Read(b, "claude")
	for _, eng := range benchEngines {
		b.Run(eng.name, func(b *testing.B) {
			e, err := eng.new(ctx)
			require.NoError(b, err)
			defer e.Close(ctx)
			m, err := e.Compile(ctx, wasm, "", engine.Limits{})
			require.NoError(b, err)
			defer m.Close(ctx)
			got, err := m.Call(ctx, abi.ExportRender, req)
			require.NoError(b, err)
			require.Equal(b, string(want), string(got), "the wasm render equals the native one")
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := m.Call(ctx, abi.ExportRender, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
