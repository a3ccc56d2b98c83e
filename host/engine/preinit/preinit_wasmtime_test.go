//go:build wasmtime

package preinit_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/engine"
	wt "github.com/loadout-dev/loadout/host/engine/wasmtime"
	wz "github.com/loadout-dev/loadout/host/engine/wazero"
)

// TestSnapshotClaudeEquivalentOnWasmtime runs the snapshot made on wazero on wasmtime: every
// output equals the original's on wasmtime and on wazero.
func TestSnapshotClaudeEquivalentOnWasmtime(t *testing.T) {
	ctx := context.Background()
	orig, snap := claude(t)
	reqs := requests(t)

	e, err := wt.New(ctx, wt.Config{})
	require.NoError(t, err, "wasmtime.New")
	defer e.Close(ctx)
	mo, err := e.Compile(ctx, orig, engine.Limits{})
	require.NoError(t, err, "wasmtime Compile(original)")
	ms, err := e.Compile(ctx, snap, engine.Limits{})
	require.NoError(t, err, "wasmtime Compile(snapshot)")
	want := callAll(t, mo, reqs)
	got := callAll(t, ms, reqs)

	z, err := wz.New(ctx, wz.Config{})
	require.NoError(t, err, "wazero.New")
	defer z.Close(ctx)
	mz, err := z.Compile(ctx, orig, engine.Limits{})
	require.NoError(t, err, "wazero Compile(original)")
	onWazero := callAll(t, mz, reqs)

	require.Len(t, got, len(want), "outputs of the snapshot on wasmtime")
	for name, w := range want {
		assert.True(t, bytes.Equal(w, got[name]), "output for %s differs between the original and the snapshot on wasmtime:\noriginal: %s\nsnapshot: %s", name, w, got[name])
		assert.True(t, bytes.Equal(onWazero[name], got[name]), "output for %s differs between the original on wazero and the snapshot on wasmtime", name)
	}
}
