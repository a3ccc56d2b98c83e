package meter_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/internal/meter"
	"github.com/loadout-dev/loadout/host/engine/internal/wasmbin"
)

var header = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

// sec encodes one section (bodies under 128 bytes).
func sec(id byte, body ...byte) []byte { return append([]byte{id, byte(len(body))}, body...) }

func module(sections ...[]byte) []byte {
	return bytes.Join(append([][]byte{header}, sections...), nil)
}

// fn is a module with one function of type () -> () whose code is code (locals declaration
// included, final end included).
func fn(code ...byte) []byte {
	return module(
		sec(1, 1, 0x60, 0, 0),
		sec(3, 1, 0),
		sec(10, append([]byte{1, byte(len(code))}, code...)...),
	)
}

// TestRefuses lists inputs Instrument must refuse, with the error they must match and a
// fragment the message must contain.
func TestRefuses(t *testing.T) {
	reserved := module(sec(1, 1, 0x60, 0, 0), sec(2, append(append([]byte{1, 13}, meter.ImportModule...), 1, 'f', 0, 0)...))
	cases := []struct {
		name   string
		wasm   []byte
		target error
		msg    string
	}{
		{"empty", nil, engine.ErrABI, "not a WebAssembly"},
		{"bad magic", []byte("\x00asm\x02\x00\x00\x00"), engine.ErrABI, "not a WebAssembly"},
		{"truncated section", module(sec(1, 1, 0x60, 0, 0))[:11], engine.ErrABI, "bytes wanted"},
		{"section size bad LEB", append(append([]byte{}, header...), 1, 0xff, 0xff, 0xff, 0xff, 0x7f), engine.ErrABI, "LEB128"},
		{"unknown section", module(sec(14, 0)), engine.ErrABI, "unknown section"},
		{"sections out of order", module(sec(3, 0), sec(1, 0)), engine.ErrABI, "out of order"},
		{"tag section", module(sec(13, 0)), engine.ErrABI, "exception"},
		{"GC type", module(sec(1, 1, 0x5f, 0, 0)), engine.ErrABI, "GC"},
		{"reserved import", reserved, engine.ErrLink, "reserved"},
		{"truncated body", module(sec(1, 1, 0x60, 0, 0), sec(3, 1, 0), sec(10, 1, 5, 0, 0x41)), engine.ErrABI, "bytes wanted"},
		{"truncated immediate", fn(0, 0x41, 0x80), engine.ErrABI, "unexpected end"},
		{"bad LEB immediate", fn(0, 0x20, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x1a, 0x0b), engine.ErrABI, "LEB128"},
		{"bad local type", fn(1, 1, 0x63, 0x0b), engine.ErrABI, "local of type"},
		{"unknown opcode", fn(0, 0x27, 0x0b), engine.ErrABI, "unknown opcode 0x27"},
		{"threads", fn(0, 0xfe, 0x03, 0x00, 0x0b), engine.ErrABI, "opcode 0xfe, threads"},
		{"exceptions", fn(0, 0x08, 0x00, 0x0b), engine.ErrABI, "throw (exception handling)"},
		{"GC prefix", fn(0, 0xfb, 0x00, 0x0b), engine.ErrABI, "GC prefix"},
		{"typed function references", fn(0, 0x14, 0x00, 0x0b), engine.ErrABI, "call_ref"},
		{"function index in error", fn(0, 0xfe, 0x03, 0x00, 0x0b), engine.ErrABI, "function 0"},
		{"0xfc past table.fill", fn(0, 0xfc, 18, 0x0b), engine.ErrABI, "opcode 0xfc 18"},
		{"SIMD gap", fn(0, 0xfd, 0x9a, 0x01, 0x0b), engine.ErrABI, "opcode 0xfd 154"},
		{"relaxed SIMD", fn(0, 0xfd, 0x80, 0x02, 0x0b), engine.ErrABI, "opcode 0xfd 256"},
		{"multi-memory memarg", fn(0, 0x41, 0, 0x28, 0x42, 0, 0, 0x1a, 0x0b), engine.ErrABI, "multiple memories"},
		{"second memory", fn(0, 0x3f, 0x01, 0x1a, 0x0b), engine.ErrABI, "memory index 1"},
		{"shared memory", module(sec(5, 1, 3, 1, 1)), engine.ErrABI, "shared"},
		{"negative block type", fn(0, 0x02, 0x63, 0x0b, 0x0b), engine.ErrABI, "block type"},
		{"huge vector count", module(sec(1, 0xff, 0xff, 0xff, 0xff, 0x0f)), engine.ErrABI, "vector of"},
		{"constant expression opcode", module(sec(6, 1, 0x7f, 0, 0x10, 0, 0x0b)), engine.ErrABI, "constant expression"},
		{"trailing section bytes", module(sec(8, 0, 0)), engine.ErrABI, "trailing"},
		{"element flags", module(sec(9, 1, 8, 0, 0)), engine.ErrABI, "element segment flags"},
		{"name section", module(sec(0, 4, 'n', 'a', 'm', 'e', 1, 5, 0xff)), engine.ErrABI, "name section"},
		// A module without globals: index 0 is the budget once instrumented.
		{"global.set of the budget's index", fn(0, 0x41, 0, 0x24, 0, 0x0b), engine.ErrABI, "global 0 of a module with 0"},
		{"global.get of the budget's index", fn(0, 0x23, 0, 0x1a, 0x0b), engine.ErrABI, "global 0 of a module with 0"},
		{"constant global.get of the budget's index", module(sec(6, 1, 0x7f, 0, 0x23, 1, 0x0b)), engine.ErrABI, "global 1 of a module with 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := meter.Instrument(tc.wasm, meter.Options{})
			require.Error(t, err, "Instrument(%x) = %d bytes, want an error", tc.wasm, len(out))
			assert.ErrorIs(t, err, tc.target, "Instrument(%x)", tc.wasm)
			assert.Contains(t, err.Error(), tc.msg, "Instrument(%x) error message", tc.wasm)
			assert.Nil(t, out, "Instrument(%x) output on error", tc.wasm)
		})
	}
}

// TestOptions checks the interval bounds.
func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		interval int32
		ok       bool
	}{{0, true}, {1, true}, {meter.MaxInterval, true}, {-1, false}, {meter.MaxInterval + 1, false}} {
		_, err := meter.Instrument(wat(t, "spin"), meter.Options{Interval: tc.interval})
		if tc.ok {
			assert.NoError(t, err, "Instrument with Interval %d", tc.interval)
		} else {
			assert.Error(t, err, "Instrument with Interval %d", tc.interval)
		}
	}
	assert.Equal(t, int32(1), meter.BulkCost(1), "BulkCost(1)")
	assert.Equal(t, int32(1250), meter.BulkCost(meter.DefaultInterval), "BulkCost(DefaultInterval)")
}

// TestShape checks what Instrument adds, through wazero's view of the compiled module: the
// yield import after the other function imports, every defined function one index up with its
// name kept (traps print it), the budget global, determinism, and the sections a module that
// lacked them gets.
func TestShape(t *testing.T) {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCoreFeatures(api.CoreFeaturesV2))
	defer r.Close(ctx)
	for _, name := range watNames {
		t.Run(name, func(t *testing.T) {
			in := wat(t, name)
			out := instrument(t, in, meter.Options{})
			assert.Equal(t, out, instrument(t, in, meter.Options{}), "Instrument(%s) twice: same bytes", name)
			assert.LessOrEqual(t, len(out), meter.MaxGrowth*len(in)+256, "Instrument(%s) size", name)

			before, err := r.CompileModule(ctx, in)
			require.NoError(t, err, "compile %s", name)
			after, err := r.CompileModule(ctx, out)
			require.NoError(t, err, "compile instrumented %s", name)
			imports := after.ImportedFunctions()
			require.Len(t, imports, len(before.ImportedFunctions())+1, "%s: imported functions", name)
			yield := imports[len(imports)-1]
			mod, fname, _ := yield.Import()
			assert.Equal(t, [2]string{meter.ImportModule, meter.ImportName}, [2]string{mod, fname}, "%s: last function import", name)
			assert.Empty(t, yield.ParamTypes(), "%s: yield parameters", name)
			assert.Empty(t, yield.ResultTypes(), "%s: yield results", name)
			for i, def := range before.ImportedFunctions() {
				assert.Equal(t, def.Index(), imports[i].Index(), "%s: index of import %d", name, i)
			}
			for export, def := range before.ExportedFunctions() {
				got := after.ExportedFunctions()[export]
				require.NotNil(t, got, "%s: export %q kept", name, export)
				assert.Equal(t, def.Index()+1, got.Index(), "%s: index of export %q", name, export)
				assert.Equal(t, def.Name(), got.Name(), "%s: name of export %q", name, export)
			}
			assert.Equal(t, len(before.ExportedMemories()), len(after.ExportedMemories()), "%s: exported memories", name)
		})
	}
}

// TestTrapNames checks that a trap in an instrumented module names the function that trapped,
// as in the original: the name section follows the index shift.
func TestTrapNames(t *testing.T) {
	ctx := context.Background()
	for _, wasm := range [][]byte{wat(t, "features"), instrument(t, wat(t, "features"), meter.Options{})} {
		mod := instantiate(t, newRuntime(t, &yielder{}), wasm)
		_, err := mod.ExportedFunction("boom").Call(ctx)
		require.Error(t, err, "boom traps")
		assert.Contains(t, err.Error(), ".boom()", "trap of boom names it")
		assert.False(t, strings.Contains(err.Error(), "run_start"), "trap of boom names a neighbour: %v", err)
	}
	out := instrument(t, wat(t, "features"), meter.Options{})
	assert.True(t, bytes.Contains(out, []byte("loadout:meter.yield")), "the yield import has a name in the name section")
}

// TestDropsDebugSections checks that sections describing code offsets are dropped and other
// custom sections kept.
func TestDropsDebugSections(t *testing.T) {
	in := module(
		sec(0, append([]byte{11}, ".debug_info"...)...),
		sec(0, append([]byte{16}, "sourceMappingURL"...)...),
		sec(0, append([]byte{4}, "keep"...)...),
	)
	out := instrument(t, in, meter.Options{})
	assert.False(t, bytes.Contains(out, []byte(".debug_info")), "a .debug_ section survives")
	assert.False(t, bytes.Contains(out, []byte("sourceMappingURL")), "sourceMappingURL survives")
	assert.True(t, bytes.Contains(out, []byte("keep")), "another custom section is dropped")
}

// TestGrowthBound instruments bodies made only of the instructions that grow most (loop
// headers, memory.fill), with 5-byte indices where the input allows them, and checks the
// output against MaxGrowth. The bodies need not validate: Instrument must stay bounded on any
// input it accepts.
func TestGrowthBound(t *testing.T) {
	body := func(locals []byte, instr []byte, n int) []byte {
		code := append([]byte{}, locals...)
		code = append(code, bytes.Repeat(instr, n)...)
		code = append(code, 0x0b)
		size := wasmbin.AppendULEB(nil, uint64(len(code)))
		sect := append([]byte{1}, size...)
		sect = append(sect, code...)
		return module(
			sec(1, 1, 0x60, 0, 0),
			sec(3, 1, 0),
			append(append([]byte{10}, wasmbin.AppendULEB(nil, uint64(len(sect)))...), sect...),
		)
	}
	manyLocals := []byte{1, 0xff, 0xff, 0xff, 0xff, 0x07, 0x7f} // 2^31-1 locals: a 5-byte scratch index
	cases := []struct {
		name string
		wasm []byte
	}{
		{"loops", body([]byte{0}, []byte{0x03, 0x40}, 5000)},
		{"fills", body([]byte{0}, []byte{0xfc, 0x0b, 0x00}, 5000)},
		{"fills with many locals", body(manyLocals, []byte{0xfc, 0x0b, 0x00}, 5000)},
		{"grows", body([]byte{0}, []byte{0x40, 0x00}, 5000)},
		{"empty bodies", module(sec(1, 1, 0x60, 0, 0), sec(3, 1, 0), sec(10, 1, 2, 0, 0x0b))},
	}
	for _, tc := range cases {
		for _, interval := range []int32{1, meter.MaxInterval} {
			out := instrument(t, tc.wasm, meter.Options{Interval: interval})
			assert.LessOrEqual(t, len(out), meter.MaxGrowth*len(tc.wasm)+256,
				"%s at Interval %d: %d bytes from %d", tc.name, interval, len(out), len(tc.wasm))
			t.Logf("%s at Interval %d: %.1fx", tc.name, interval, float64(len(out))/float64(len(tc.wasm)))
		}
	}
}

// TestNameSubsectionsKeepInput instruments a module whose name section has a module name
// (subsection 0, kept as it is) before its function names (subsection 1, rewritten), as OPA's
// and other toolchains' modules do. The kept subsection once aliased the input, and the next
// rewrite wrote over the caller's bytes and failed.
func TestNameSubsectionsKeepInput(t *testing.T) {
	in := bytes.Clone(nameSubsections)
	orig := bytes.Clone(in)
	out, err := meter.Instrument(in, meter.Options{})
	require.NoError(t, err, "Instrument(module with names 0, 1, 2)")
	assert.Equal(t, orig, in, "Instrument changed its input")
	assert.True(t, bytes.Contains(out, []byte("module")), "the module name is kept")
	assert.True(t, bytes.Contains(out, []byte(yieldNameInSection)), "the yield import is named")
	_, err = wazero.NewRuntime(context.Background()).CompileModule(context.Background(), out)
	require.NoError(t, err, "the instrumented module compiles")
}

const yieldNameInSection = "loadout:meter.yield"

// nameSubsections is a one-function module whose name section holds a module name, function
// names and local names, in that order.
var nameSubsections = func() []byte {
	names := append([]byte{4}, "name"...)
	names = append(names, sec(0, append([]byte{6}, "module"...)...)...)            // module name
	names = append(names, sec(1, append([]byte{1, 0, 4}, "func"...)...)...)        // function 0 is "func"
	names = append(names, sec(2, append([]byte{1, 0, 1, 0, 5}, "local"...)...)...) // local 0 of function 0
	return append(fn(1, 1, 0x7f, 0x0b), sec(0, names...)...)
}()
