package preinit_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/loadout-dev/loadout/host/engine/internal/sandbox"
	"github.com/loadout-dev/loadout/host/engine/preinit"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// observed is what a test reads from an instance of testdata/globals.wat.
type observed struct {
	values map[string]uint64
	memory []byte
}

// observe instantiates wasm on a fresh wazero runtime whose random_get is the sandbox's, runs
// _initialize when init is set, and reads every getter and the whole memory.
func observe(t *testing.T, wasm []byte, init bool) observed {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCoreFeatures(api.CoreFeaturesV2))
	defer rt.Close(ctx)
	sys := sandbox.New(1024)
	_, err := rt.NewHostModuleBuilder(sandbox.Module).NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, mod api.Module, stack []uint64) {
			errno, err := sys.Call("random_get", mod.Memory(), stack[:2])
			if err != nil {
				panic(err)
			}
			stack[0] = uint64(errno)
		}), []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}).
		Export("random_get").Instantiate(ctx)
	require.NoError(t, err, "instantiate the random_get host module")
	mod, err := rt.InstantiateWithConfig(ctx, wasm, wazero.NewModuleConfig().WithName("").WithStartFunctions())
	require.NoError(t, err, "instantiate the module")
	if init {
		_, err := mod.ExportedFunction(abi.ExportInitialize).Call(ctx)
		require.NoError(t, err, "call %s", abi.ExportInitialize)
	}
	o := observed{values: map[string]uint64{}}
	for _, name := range []string{"get_mi32", "get_mi64", "get_mf32", "get_mf64", "get_ci32", "get_ci64", "get_cf32", "get_cf64", "get_ext", "mem_size", "ref_is_null"} {
		res, err := mod.ExportedFunction(name).Call(ctx)
		require.NoError(t, err, "call %s", name)
		o.values[name] = res[0]
	}
	view, ok := mod.Memory().Read(0, mod.Memory().Size())
	require.True(t, ok, "read the whole memory")
	o.memory = bytes.Clone(view)
	return o
}

func TestSnapshotGlobalsAndDataRoundTrip(t *testing.T) {
	orig := wat(t, "globals")
	for _, gap := range []int{0, 1, -1, 1 << 20} {
		snap, err := preinit.Snapshot(context.Background(), orig, preinit.Options{MergeGap: gap})
		require.NoError(t, err, "Snapshot(globals.wat, MergeGap %d)", gap)
		assert.NotContains(t, exportNames(t, snap), abi.ExportInitialize, "Snapshot(globals.wat) exports")

		want := observe(t, orig, true)
		got := observe(t, snap, false)
		assert.Equal(t, want.values, got.values, "globals and memory size after _initialize (original) and at instantiation (snapshot), MergeGap %d", gap)
		assert.True(t, bytes.Equal(want.memory, got.memory), "memory after _initialize (original, %d bytes) and at instantiation (snapshot, %d bytes), MergeGap %d", len(want.memory), len(got.memory), gap)
		assert.Equal(t, uint64(2), got.values["mem_size"], "memory pages of the snapshot")
		assert.Equal(t, uint64(0xffffffff80000000)&0xffffffff, got.values["get_ci32"]&0xffffffff, "immutable i32 global")
	}
	// The values themselves, so a broken reader on both sides cannot agree by accident.
	want := observe(t, orig, true)
	assert.Equal(t, uint64(uint32(0xfffe1dc0)), want.values["get_mi32"]&0xffffffff, "mi32 after _initialize")
	assert.Equal(t, uint64(0x123456789abcdef0), want.values["get_mi64"], "mi64 after _initialize")
	assert.Equal(t, uint64(0x80000000), want.values["get_mf32"], "mf32 after _initialize (-0.0)")
	assert.Equal(t, uint64(9), want.values["get_ext"], "ext after _initialize")
	assert.Equal(t, uint64(0), want.values["ref_is_null"], "funcref global keeps its function")
	assert.Equal(t, "Hello, data", string(want.memory[16:27]), "data segment changed by _initialize")
}

func TestSnapshotDataCount(t *testing.T) {
	ctx := context.Background()
	snap, err := preinit.Snapshot(ctx, wat(t, "datacount"), preinit.Options{})
	require.NoError(t, err, "Snapshot(datacount.wat)")
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCoreFeatures(api.CoreFeaturesV2))
	defer rt.Close(ctx)
	mod, err := rt.Instantiate(ctx, snap)
	require.NoError(t, err, "instantiate the snapshot of datacount.wat: its code names data segment 3")
	_, err = mod.ExportedFunction("drop3").Call(ctx)
	require.NoError(t, err, "call drop3 on the snapshot")
	res, err := mod.ExportedFunction("byte100").Call(ctx)
	require.NoError(t, err, "call byte100 on the snapshot")
	assert.Equal(t, uint64(0), res[0], "byte 100 after _initialize cleared it")
}

func TestSnapshotWithoutInitialize(t *testing.T) {
	orig := wat(t, "noinit")
	got, err := preinit.Snapshot(context.Background(), orig, preinit.Options{})
	require.NoError(t, err, "Snapshot(noinit.wat)")
	assert.Equal(t, orig, got, "Snapshot of a module without %s returns it unchanged", abi.ExportInitialize)
}
