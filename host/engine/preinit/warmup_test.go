package preinit_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"

	"github.com/loadout-dev/loadout/host/engine/preinit"
)

// byteAt instantiates wasm (a module without imports) and reads one byte of its memory.
func byteAt(t *testing.T, wasm []byte, addr uint32) byte {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	mod, err := rt.Instantiate(ctx, wasm)
	require.NoError(t, err, "instantiate the snapshot")
	b, ok := mod.Memory().ReadByte(addr)
	require.True(t, ok, "read memory[%d]", addr)
	return b
}

// memoryPages is the minimum of the module's exported memory.
func memoryPages(t *testing.T, wasm []byte) uint32 {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	cm, err := rt.CompileModule(ctx, wasm)
	require.NoError(t, err, "compile")
	mem, ok := cm.ExportedMemories()["memory"]
	require.True(t, ok, "the module exports its memory")
	return mem.Min()
}

func TestSnapshotWarmUp(t *testing.T) {
	ctx := context.Background()
	for _, interp := range []bool{false, true} {
		warm, err := preinit.Snapshot(ctx, wat(t, "warmup"), preinit.Options{Interpreter: interp})
		require.NoError(t, err, "Snapshot(warmup)")
		cold, err := preinit.Snapshot(ctx, wat(t, "warmup"), preinit.Options{Interpreter: interp, Warmups: -1})
		require.NoError(t, err, "Snapshot(warmup, Warmups: -1)")
		assert.Equal(t, byte(99), byteAt(t, warm, 8192), "the warm-up render's write is in the snapshot (interpreter=%v)", interp)
		assert.Equal(t, byte(0), byteAt(t, cold, 8192), "without warm-up the render never ran (interpreter=%v)", interp)
	}
}

func TestSnapshotWarmUpFailureFallsBack(t *testing.T) {
	ctx := context.Background()
	got, err := preinit.Snapshot(ctx, wat(t, "warmuptrap"), preinit.Options{})
	require.NoError(t, err, "Snapshot of a module whose render traps still succeeds")
	cold, err := preinit.Snapshot(ctx, wat(t, "warmuptrap"), preinit.Options{Warmups: -1})
	require.NoError(t, err, "Snapshot(warmuptrap, Warmups: -1)")
	assert.True(t, bytes.Equal(got, cold), "a failed warm-up leaves the snapshot taken right after _initialize")
	assert.Equal(t, byte(0), byteAt(t, got, 8192), "nothing the trapped render wrote reaches the snapshot")
}

func TestSnapshotWarmUpGrowsTheGoHeap(t *testing.T) {
	orig, warm := claude(t)
	cold, err := preinit.Snapshot(context.Background(), orig, preinit.Options{Warmups: -1})
	require.NoError(t, err, "Snapshot(claude plugin, Warmups: -1)")
	assert.Greater(t, memoryPages(t, warm), memoryPages(t, cold), "after warm-up renders the snapshot's memory holds the grown heap")
}
