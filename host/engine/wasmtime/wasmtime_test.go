//go:build wasmtime

package wasmtime_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/enginetest"
	"github.com/loadout-dev/loadout/host/engine/wasmtime"
	"github.com/loadout-dev/loadout/sdk/abi"
)

func TestEngine(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  wasmtime.Config
	}{
		{"no cache", wasmtime.Config{}},
		{"module cache on disk", wasmtime.Config{CacheDir: t.TempDir()}},
		{"pre-initialized modules", wasmtime.Config{Preinit: true, CacheDir: t.TempDir()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enginetest.Run(t, func(t *testing.T) engine.Engine {
				e, err := wasmtime.New(context.Background(), tc.cfg)
				require.NoError(t, err, "wasmtime.New(%+v)", tc.cfg)
				return e
			})
		})
	}
}

func TestModuleCacheOnDisk(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for i := 0; i < 2; i++ {
		e, err := wasmtime.New(ctx, wasmtime.Config{CacheDir: dir})
		require.NoError(t, err, "wasmtime.New(CacheDir) #%d", i)
		m, err := e.Compile(ctx, enginetest.WAT(t, "ok"), enginetest.Limits)
		require.NoError(t, err, "Compile(ok.wat) #%d", i)
		out, err := m.Call(ctx, abi.ExportRender, []byte("x"))
		require.NoError(t, err, "Call(render) #%d", i)
		require.Equal(t, "00x", string(out), "Call(render, x) #%d", i)
		require.NoError(t, m.Close(ctx), "Close(module) #%d", i)
		require.NoError(t, e.Close(ctx), "Close(engine) #%d", i)
		files, err := filepath.Glob(filepath.Join(dir, "*.cwasm"))
		require.NoError(t, err, "Glob(cache)")
		require.Len(t, files, 1, "serialized modules in the cache after compiling ok.wat (#%d)", i)
	}
	// A corrupt cache entry is recompiled, not trusted.
	files, _ := filepath.Glob(filepath.Join(dir, "*.cwasm"))
	require.NoError(t, os.WriteFile(files[0], []byte("not a module"), 0o600), "corrupt the cache entry")
	e, err := wasmtime.New(ctx, wasmtime.Config{CacheDir: dir})
	require.NoError(t, err, "wasmtime.New(CacheDir) after corruption")
	defer e.Close(ctx)
	m, err := e.Compile(ctx, enginetest.WAT(t, "ok"), enginetest.Limits)
	require.NoError(t, err, "Compile(ok.wat) over a corrupt cache entry")
	defer m.Close(ctx)
	out, err := m.Call(ctx, abi.ExportManifest, nil)
	require.NoError(t, err, "Call(manifest) after recompiling")
	require.NotEmpty(t, out, "Call(manifest) after recompiling")
}
