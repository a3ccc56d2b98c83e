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

// TestCheckRefusesDecoderBombs shows Check refusing, in microseconds, modules that make
// wazero's decoder allocate gigabytes (found by FuzzSnapshot), and accepting real plugins.
func TestCheckRefusesDecoderBombs(t *testing.T) {
	head := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	bombs := map[string][]byte{
		"2^31 parameters": append(bytes.Clone(head), 1, 8, 1, 0x60, 0x80, 0x80, 0x80, 0x80, 0x08, 0),
		"2^32-1 locals":   append(bytes.Clone(head), 10, 10, 1, 8, 1, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x7f, 0x0b),
		"2^32-1 globals":  append(bytes.Clone(head), 6, 5, 0xff, 0xff, 0xff, 0xff, 0x0f),
	}
	for name, b := range bombs {
		require.Error(t, preinit.Check(b), "Check(module with %s)", name)
	}
	orig, snap := claude(t)
	require.NoError(t, preinit.Check(orig), "Check(claude plugin)")
	require.NoError(t, preinit.Check(snap), "Check(snapshot of the claude plugin)")
	for _, name := range []string{"globals", "datacount", "noinit"} {
		require.NoError(t, preinit.Check(wat(t, name)), "Check(%s.wat)", name)
	}
}
