package wazero_test

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/codecache"
	"github.com/loadout-dev/loadout/host/engine/enginetest"
	"github.com/loadout-dev/loadout/host/engine/wazero"
)

func TestEngine(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  wazero.Config
	}{
		{"fresh instance per call", wazero.Config{}},
		{"pool of initialized instances", wazero.Config{Pool: 2}},
		{"compilation cache on disk", wazero.Config{Cache: enginetest.TempCache(t)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enginetest.Run(t, func(t *testing.T) engine.Engine {
				e, err := wazero.New(context.Background(), tc.cfg)
				require.NoError(t, err, "wazero.New(%+v)", tc.cfg)
				return e
			})
		})
	}
}

func TestNewRejectsNegativePool(t *testing.T) {
	_, err := wazero.New(context.Background(), wazero.Config{Pool: -1})
	require.Error(t, err, "wazero.New(Pool: -1)")
}

// TestCompileCacheAuthenticated: compiled code from the cache runs only once authenticated
// (enginetest.Cache). An entry holds the name of wazero's file, a newline and the file, so
// the planted entry keeps ok.wat's file name over impostor.wat's code, whose CRC is its own.
func TestCompileCacheAuthenticated(t *testing.T) {
	enginetest.Cache(t, func(t *testing.T, c *codecache.Cache) engine.Engine {
		e, err := wazero.New(context.Background(), wazero.Config{Cache: c})
		require.NoError(t, err, "wazero.New(Cache)")
		return e
	}, func(a, b []byte) []byte {
		name, _, _ := bytes.Cut(a, []byte{'\n'})
		_, code, _ := bytes.Cut(b, []byte{'\n'})
		return slices.Concat(name, []byte{'\n'}, code)
	})
}
