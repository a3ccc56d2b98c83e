package wazero_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/enginetest"
	"github.com/loadout-dev/loadout/host/engine/wazero"
	"github.com/loadout-dev/loadout/sdk/abi"
)

func TestEngine(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  wazero.Config
	}{
		{"fresh instance per call", wazero.Config{}},
		{"pool of initialized instances", wazero.Config{Pool: 2}},
		{"compilation cache on disk", wazero.Config{CacheDir: t.TempDir()}},
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

func TestCompilationCacheOnDisk(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for i := 0; i < 2; i++ {
		e, err := wazero.New(ctx, wazero.Config{CacheDir: dir})
		require.NoError(t, err, "wazero.New(CacheDir) #%d", i)
		m, err := e.Compile(ctx, enginetest.WAT(t, "ok"), "", enginetest.Limits)
		require.NoError(t, err, "Compile(ok.wat) #%d", i)
		out, err := m.Call(ctx, abi.ExportRender, []byte("x"))
		require.NoError(t, err, "Call(render) #%d", i)
		require.Equal(t, "00x", string(out), "Call(render, x) #%d", i)
		require.NoError(t, e.Close(ctx), "Close #%d", i)
		entries, err := os.ReadDir(dir)
		require.NoError(t, err, "ReadDir(cache)")
		require.NotEmpty(t, entries, "the cache directory is empty after compiling (#%d)", i)
	}
}
