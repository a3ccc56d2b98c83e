//go:build cgo

package bench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/engine/internal/meter"
	"github.com/loadout-dev/loadout/host/engine/preinit"
	"github.com/loadout-dev/loadout/internal/testplugins"
	"github.com/loadout-dev/loadout/plugins/mcpjson-c/native"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// warmRenderCInput is the C plugin (plugins/mcpjson-c) pre-initialized as the engines prepare it,
// the claude plugin's rich request addressed to it, and the plan its native build renders.
func warmRenderCInput(b *testing.B) (snapshot, req, want []byte) {
	b.Helper()
	snap, err := preinit.Snapshot(context.Background(), testplugins.Read(b, "mcpjson-c"), preinit.Options{})
	require.NoError(b, err, "Snapshot(mcpjson-c)")
	rich, err := os.ReadFile(filepath.Join(testplugins.Root(b), "plugins", "claude", "testdata", "requests", "rich.json"))
	require.NoError(b, err, "read rich.json")
	var r abi.Request
	require.NoError(b, json.Unmarshal(rich, &r), "decode rich.json")
	r.Harness = "mcpjson"
	req, err = json.Marshal(r)
	require.NoError(b, err, "encode the request")
	want = native.Render(req)
	var plan abi.Plan
	require.NoError(b, json.Unmarshal(want, &plan), "native plan")
	require.Len(b, plan.Files, 1, "native render: %s", want)
	return snap, req, want
}

// BenchmarkWarmRenderC is BenchmarkWarmRender for a renderer written in C and compiled by
// clang -O2, natively (package native, cgo) and to WebAssembly: the same request, pre-initialized
// and metered as the engines run it. It prices the engines and the ABI's boundary on code that a
// mature optimizing compiler produced, beside the Go plugin's figures. BenchmarkWarmRenderCWasmtime
// is its Wasmtime row.
func BenchmarkWarmRenderC(b *testing.B) {
	snap, req, want := warmRenderCInput(b)
	metered, err := meter.Instrument(snap, meter.Options{})
	require.NoError(b, err, "Instrument(mcpjson-c)")
	b.Run("native", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			native.Render(req)
		}
	})
	b.Run("wazero-meter", func(b *testing.B) { benchWarmWazero(b, meteredWazero(b), metered, req, want) })
}
