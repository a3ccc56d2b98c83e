//go:build cgo

package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/internal/testplugins"
	"github.com/loadout-dev/loadout/plugins/mcpjson-c/native"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// warmRenderCInput is the C plugin (plugins/mcpjson-c),
// the claude plugin's rich request addressed to it, and the plan its native build renders.
func warmRenderCInput(b *testing.B) (wasm, req, want []byte) {
	b.Helper()
	wasm = testplugins.Read(b, "mcpjson-c")
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
	require.NotEmpty(b, plan.Files, "native render: %s", want)
	require.Equal(b, "mcp.json", plan.Files[0].Path, "the native render's first file is its config: %s", want)
	return wasm, req, want
}

// BenchmarkWarmRenderC is BenchmarkWarmRender for a renderer written in C and compiled by
// clang -O2, natively (package native, cgo) and to WebAssembly: the same request, run as the
// engines run it. It prices the engines and the ABI's boundary on code that a
// mature optimizing compiler produced, beside the Go plugin's figures. BenchmarkWarmRenderCWasmtime
// is its Wasmtime row.
func BenchmarkWarmRenderC(b *testing.B) {
	wasm, req, want := warmRenderCInput(b)
	b.Run("native", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			native.Render(req)
		}
	})
	b.Run("wazero", func(b *testing.B) { benchWarmWazero(b, rawWazero(b, true), wasm, req, want) })
}
