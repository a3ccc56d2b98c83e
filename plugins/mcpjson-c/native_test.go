//go:build cgo

package mcpjsonc_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/plugins/mcpjson-c/native"
)

// TestNativeMatchesWasm holds the native build of the renderer (package native, used by the
// engine benchmarks as the native baseline) to the WebAssembly build, byte for byte, on the full
// request and on every refused input.
func TestNativeMatchesWasm(t *testing.T) {
	p := instantiate(t, build(t))
	full, err := json.Marshal(fullRequest())
	require.NoError(t, err, "encode the request")
	inputs := [][]byte{full}
	for _, tc := range rejectCases {
		inputs = append(inputs, []byte(tc.input))
	}
	for _, in := range inputs {
		require.Equal(t, string(p.render(t, in)), string(native.Render(in)), "render(%q): native and wasm differ", in)
	}
}

// FuzzNativeMatchesWasm holds the two builds equal on arbitrary input.
func FuzzNativeMatchesWasm(f *testing.F) {
	full, err := json.Marshal(fullRequest())
	require.NoError(f, err, "encode the seed request")
	f.Add(full)
	for _, tc := range rejectCases {
		f.Add([]byte(tc.input))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		require.Equal(t, string(fuzzPlugin(t).render(t, in)), string(native.Render(in)), "render(%q): native and wasm differ", in)
	})
}
