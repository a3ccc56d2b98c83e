package preinit_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/preinit"
)

// FuzzSnapshot feeds hostile modules to Snapshot (on the interpreter, with a short deadline and a
// small page cap): it must return a module or an error, never panic, and a module it returns
// must snapshot to itself (it no longer exports _initialize).
func FuzzSnapshot(f *testing.F) {
	for _, name := range []string{"globals", "datacount", "noinit", "trap", "grow", "passive", "start"} {
		f.Add(wat(f, name))
	}
	opts := preinit.Options{Interpreter: true, Limits: engine.Limits{Deadline: 100 * time.Millisecond, MemoryPages: 16, ModuleBytes: 1 << 20}}
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := preinit.Snapshot(context.Background(), b, opts)
		if err != nil {
			return
		}
		again, err := preinit.Snapshot(context.Background(), out, opts)
		require.NoError(t, err, "Snapshot of a Snapshot result")
		require.True(t, bytes.Equal(out, again), "Snapshot of a Snapshot result should return it unchanged")
	})
}
