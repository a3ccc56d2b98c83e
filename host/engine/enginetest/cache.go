package enginetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/codecache"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// TempCache opens a compile cache in a temporary directory, its key in another.
func TempCache(tb testing.TB) *codecache.Cache {
	tb.Helper()
	c, err := codecache.Open(tb.TempDir(), filepath.Join(tb.TempDir(), "key"), nil)
	require.NoError(tb, err, "codecache.Open")
	return c
}

// Cache checks that an engine runs compiled code from its cache only once the cache
// authenticated it. newEngine builds an engine keeping compiled code in c (each use is a new
// engine, as a new process would be); forge(a, b) is the entry someone editing the cache would
// write to make the engine run the code of entry b for the module of entry a.
//
// ok.wat's entry is planted with impostor.wat's code, which renders "99" where ok.wat renders
// "00". Tagged with the cache's key, the planted entry is what runs (so each attack below would
// run it too, were entries not authenticated); moved from another entry, tagged with another
// key, or left with the tag of the code it replaced, it never runs: the module is compiled
// again and the entry replaced.
func Cache(t *testing.T, newEngine func(t *testing.T, c *codecache.Cache) engine.Engine, forge func(a, b []byte) []byte) {
	ctx := context.Background()
	dir, keys := t.TempDir(), t.TempDir()
	open := func(key string) *codecache.Cache {
		c, err := codecache.Open(dir, filepath.Join(keys, key), nil)
		require.NoError(t, err, "codecache.Open(%s)", key)
		return c
	}
	c := open("key")
	render := func(c *codecache.Cache, wasm []byte, digest ...string) string {
		t.Helper()
		e := newEngine(t, c)
		defer e.Close(ctx)
		m, err := e.Compile(ctx, wasm, strings.Join(digest, ""), Limits)
		require.NoError(t, err, "Compile")
		defer m.Close(ctx)
		out, err := m.Call(ctx, abi.ExportRender, []byte("x"))
		require.NoError(t, err, "Call(render)")
		return string(out)
	}
	entries := func() []string {
		t.Helper()
		names, err := filepath.Glob(filepath.Join(dir, "*"+codecache.Ext))
		require.NoError(t, err, "Glob(cache)")
		return names
	}
	ok, impostor := WAT(t, "ok"), WAT(t, "impostor")

	require.Equal(t, "00x", render(c, ok), "ok.wat, compiled")
	require.Len(t, entries(), 1, "entries after compiling ok.wat")
	okEntry := entries()[0]
	require.Equal(t, "99x", render(c, impostor), "impostor.wat, compiled")
	require.Len(t, entries(), 2, "entries after compiling impostor.wat")
	impEntry := entries()[slices.IndexFunc(entries(), func(n string) bool { return n != okEntry })]
	okCode, err := c.Get(filepath.Base(okEntry))
	require.NoError(t, err, "Get(ok.wat's entry)")
	impCode, err := c.Get(filepath.Base(impEntry))
	require.NoError(t, err, "Get(impostor.wat's entry)")

	t.Run("an authentic entry is used", func(t *testing.T) {
		before, err := os.Stat(okEntry)
		require.NoError(t, err)
		require.Equal(t, "00x", render(c, ok), "ok.wat, from the cache")
		sum := sha256.Sum256(ok)
		require.Equal(t, "00x", render(c, ok, "sha256:"+hex.EncodeToString(sum[:])), "ok.wat with its verified pin, from the cache")
		after, err := os.Stat(okEntry)
		require.NoError(t, err)
		assert.True(t, os.SameFile(before, after), "the entry was read, not compiled again and replaced")
		assert.Len(t, entries(), 2, "the pin a loader verified keys the entry the engine's own hash does")
	})

	forged := forge(okCode, impCode)
	t.Run("what an authentic entry holds is what runs", func(t *testing.T) {
		require.NoError(t, c.Put(filepath.Base(okEntry), forged), "Put(forged)")
		assert.Equal(t, "99x", render(c, ok), "ok.wat with impostor.wat's code planted and tagged with the key")
		require.NoError(t, c.Put(filepath.Base(okEntry), okCode), "Put(ok.wat's code)")
	})

	tagged, err := os.ReadFile(okEntry)
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T)
	}{
		{"another module's entry moved over it", func(t *testing.T) {
			b, err := os.ReadFile(impEntry)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(okEntry, b, 0o600))
		}},
		{"code changed under the tag it had", func(t *testing.T) {
			require.NoError(t, os.WriteFile(okEntry, append(tagged[:len(tagged)-len(okCode):len(tagged)-len(okCode)], forged...), 0o600))
		}},
		{"code tagged with another key (a cache restored from elsewhere)", func(t *testing.T) {
			require.NoError(t, open("other-key").Put(filepath.Base(okEntry), forged))
		}},
		{"a symbolic link to an entry of another module", func(t *testing.T) {
			require.NoError(t, os.Remove(okEntry))
			require.NoError(t, os.Symlink(impEntry, okEntry))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.plant(t)
			assert.Equal(t, "00x", render(c, ok), "ok.wat over a planted entry")
			got, err := c.Get(filepath.Base(okEntry))
			require.NoError(t, err, "the planted entry is replaced by an authentic one")
			assert.False(t, bytes.Equal(forged, got) || bytes.Equal(impCode, got), "the planted code is gone")
		})
	}

	t.Run("a cache without its key is compiled again", func(t *testing.T) {
		fresh := open("new-key")
		assert.Equal(t, "00x", render(fresh, ok), "ok.wat with a new key")
		_, err := fresh.Get(filepath.Base(okEntry))
		assert.NoError(t, err, "the entry is replaced, authentic under the new key")
		_, err = fresh.Get(filepath.Base(impEntry))
		assert.ErrorIs(t, err, codecache.ErrNotAuthentic, "an entry made with the old key, under the new one")
	})
}
