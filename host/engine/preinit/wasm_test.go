package preinit

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/internal/wasmbin"
)

func TestSegments(t *testing.T) {
	mem := make([]byte, 300)
	mem[0] = 1
	mem[10] = 2            // 9 zeros after mem[0]
	copy(mem[100:], "abc") // 89 zeros after mem[10]
	mem[299] = 9           // 196 zeros after "abc"
	cases := []struct {
		name string
		gap  int
		want []segment
	}{
		{"default gap of 64", 0, []segment{{0, mem[0:11]}, {100, mem[100:103]}, {299, mem[299:300]}}},
		{"never merge", -1, []segment{{0, mem[0:1]}, {10, mem[10:11]}, {100, mem[100:103]}, {299, mem[299:300]}}},
		{"gap of 9 keeps a 9-byte gap", 9, []segment{{0, mem[0:1]}, {10, mem[10:11]}, {100, mem[100:103]}, {299, mem[299:300]}}},
		{"gap of 10 merges a 9-byte gap", 10, []segment{{0, mem[0:11]}, {100, mem[100:103]}, {299, mem[299:300]}}},
		{"huge gap merges all", 1000, []segment{{0, mem}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, segments(mem, tc.gap), "segments(mem, %d)", tc.gap)
		})
	}
	assert.Empty(t, segments(make([]byte, 1<<16), 0), "segments of an all-zero memory")
	assert.Empty(t, segments(nil, 0), "segments of an empty memory")
	assert.Equal(t, []segment{{65535, []byte{7}}}, segments(append(make([]byte, 65535), 7), 0), "a last non-zero byte")
}

// TestEncodeInsertsMissingSections checks that a replacement for a section the module lacks
// lands at its rank, before trailing custom sections, and that the result is a valid module.
func TestEncodeInsertsMissingSections(t *testing.T) {
	// (module (memory 1) (func) (export "f" (func 0))) with a trailing custom section "c".
	mod := []byte{0, 'a', 's', 'm', 1, 0, 0, 0,
		1, 4, 1, 0x60, 0, 0, // type: () -> ()
		3, 2, 1, 0, // function: type 0
		5, 3, 1, 0, 1, // memory: min 1
		7, 5, 1, 1, 'f', 0, 0, // export "f" func 0
		10, 4, 1, 2, 0, 0x0b, // code
		0, 3, 1, 'c', 'x', // custom "c"
	}
	m, err := parse(mod)
	require.NoError(t, err, "parse the hand-written module")
	out := encode(m.sections, map[byte][]byte{
		wasmbin.SecData:   encodeData([]segment{{8, []byte("data")}}),
		wasmbin.SecGlobal: encodeGlobals([]global{{typ: wasmbin.TypeI32, mut: true, init: constFor(wasmbin.TypeI32, 5)}}),
		wasmbin.SecExport: nil,
	})
	got, err := parse(out)
	require.NoError(t, err, "parse the encoded module")
	var ids []byte
	for _, s := range got.sections {
		ids = append(ids, s.id)
	}
	assert.Equal(t, []byte{wasmbin.SecType, wasmbin.SecFunction, wasmbin.SecMemory, wasmbin.SecGlobal, wasmbin.SecCode, wasmbin.SecData, wasmbin.SecCustom}, ids, "section order after encode")
	assert.Empty(t, got.exports, "the export section was dropped")
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCoreFeatures(api.CoreFeaturesV2))
	defer rt.Close(ctx)
	inst, err := rt.Instantiate(ctx, out)
	require.NoError(t, err, "instantiate the encoded module")
	view, _ := inst.Memory().Read(8, 4)
	assert.Equal(t, "data", string(view), "data segment of the encoded module")
}

func TestParseRefuses(t *testing.T) {
	head := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	cases := []struct {
		name string
		body []byte
		is   error
	}{
		{"no magic", []byte("not wasm"), wasmbin.ErrMalformed},
		{"version 2", []byte{0, 'a', 's', 'm', 2, 0, 0, 0}, wasmbin.ErrMalformed},
		{"section past the end", append(bytes.Clone(head), 1, 10, 0), wasmbin.ErrMalformed},
		{"unknown section", append(bytes.Clone(head), 14, 0), wasmbin.ErrMalformed},
		{"sections out of order", append(bytes.Clone(head), 3, 1, 0, 1, 1, 0), wasmbin.ErrMalformed},
		{"repeated section", append(bytes.Clone(head), 1, 1, 0, 1, 1, 0), wasmbin.ErrMalformed},
		{"trailing bytes in a section", append(bytes.Clone(head), 5, 2, 0, 0), wasmbin.ErrMalformed},
		{"huge vector count", append(bytes.Clone(head), 6, 5, 0xff, 0xff, 0xff, 0xff, 0x0f), wasmbin.ErrMalformed},
		{"two memories", append(bytes.Clone(head), 5, 5, 2, 0, 1, 0, 1), engine.ErrABI},
		{"shared memory", append(bytes.Clone(head), 5, 4, 1, 3, 1, 1), engine.ErrABI},
		{"max below min", append(bytes.Clone(head), 5, 4, 1, 1, 2, 1), wasmbin.ErrMalformed},
		{"imported memory", append(bytes.Clone(head), 2, 8, 1, 1, 'e', 1, 'm', 2, 0, 1), engine.ErrLink},
		{"imported table", append(bytes.Clone(head), 2, 8, 1, 1, 'e', 1, 't', 1, 0x70, 0), engine.ErrLink},
		{"global of unknown type", append(bytes.Clone(head), 6, 5, 1, 0x40, 0, 0x41, 0), wasmbin.ErrMalformed},
		{"non-constant initializer", append(bytes.Clone(head), 6, 6, 1, 0x7f, 0, 0x20, 0, 0x0b), wasmbin.ErrMalformed},
		{"unterminated initializer", append(bytes.Clone(head), 6, 5, 1, 0x7f, 0, 0x41, 1), wasmbin.ErrMalformed},
		{"duplicate export", append(bytes.Clone(head), 7, 9, 2, 1, 'a', 0, 0, 1, 'a', 0, 0), wasmbin.ErrMalformed},
		{"export name not UTF-8", append(bytes.Clone(head), 7, 5, 1, 1, 0xff, 0, 0), wasmbin.ErrMalformed},
		{"data segment flags 3", append(bytes.Clone(head), 11, 3, 1, 3, 0), wasmbin.ErrMalformed},
		{"function type with 2^31 parameters", append(bytes.Clone(head), 1, 8, 1, 0x60, 0x80, 0x80, 0x80, 0x80, 0x08, 0), wasmbin.ErrMalformed},
		{"non-function type", append(bytes.Clone(head), 1, 4, 1, 0x5f, 0, 0), wasmbin.ErrMalformed},
		{"function with 2^32-1 locals", append(bytes.Clone(head), 10, 10, 1, 8, 1, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x7f, 0x0b), wasmbin.ErrMalformed},
		{"locals summing past the cap", append(bytes.Clone(head), 10, 12, 1, 10, 2, 0xb0, 0xea, 0x01, 0x7f, 0xb0, 0xea, 0x01, 0x7f, 0x0b), wasmbin.ErrMalformed},
		{"element vector of 2^32-1 functions", append(bytes.Clone(head), 9, 10, 1, 0, 0x41, 0, 0x0b, 0xff, 0xff, 0xff, 0xff, 0x0f), wasmbin.ErrMalformed},
		{"table of a non-reference type", append(bytes.Clone(head), 4, 4, 1, 0x7f, 0, 1), wasmbin.ErrMalformed},
		{"name map of 2^32-1 entries", append(bytes.Clone(head), 0, 11, 4, 'n', 'a', 'm', 'e', 1, 5, 0xff, 0xff, 0xff, 0xff, 0x0f), wasmbin.ErrMalformed},
		{"local names of 2^32-1 functions", append(bytes.Clone(head), 0, 11, 4, 'n', 'a', 'm', 'e', 2, 5, 0xff, 0xff, 0xff, 0xff, 0x0f), wasmbin.ErrMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(tc.body)
			require.Error(t, err, "parse(% x)", tc.body)
			assert.True(t, errors.Is(err, tc.is), "parse(% x) error %v, want %v", tc.body, err, tc.is)
		})
	}
}

// FuzzParse feeds hostile bytes to the reader: it must never panic, and whatever it accepts
// must encode back to the same bytes when nothing is replaced.
func FuzzParse(f *testing.F) {
	f.Add([]byte{0, 'a', 's', 'm', 1, 0, 0, 0})
	f.Add([]byte{0, 'a', 's', 'm', 1, 0, 0, 0, 1, 4, 1, 0x60, 0, 0, 3, 2, 1, 0, 5, 3, 1, 0, 1, 6, 6, 1, 0x7f, 1, 0x41, 5, 0x0b,
		7, 5, 1, 1, 'f', 0, 0, 10, 4, 1, 2, 0, 0x0b, 11, 7, 1, 0, 0x41, 8, 0x0b, 1, 'x', 0, 3, 1, 'c', 'x'})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parse(b)
		if err != nil {
			return
		}
		out := encode(m.sections, nil)
		m2, err := parse(out)
		require.NoError(t, err, "parse(encode(parse(% x)))", b)
		require.Equal(t, len(m.sections), len(m2.sections), "sections after a round trip")
		require.Equal(t, m.exports, m2.exports, "exports after a round trip")
		require.Equal(t, m.globals, m2.globals, "globals after a round trip")
		require.Equal(t, encodeExports(m.exports), encodeExports(m2.exports), "re-encoded exports")
	})
}
