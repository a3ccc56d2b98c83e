package main

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTrimCompileCache: an entry unused for longer than cacheUnusedFor goes, a recent one
// stays, and the directory is walked at most once every cacheTrimEvery.
func TestTrimCompileCache(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	old := now.Add(-cacheUnusedFor - time.Hour)
	entry := func(rel string, atime, mtime time.Time) string {
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte("code"), 0o600))
		require.NoError(t, os.Chtimes(p, atime, mtime))
		return p
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	stale := entry("stale.cwasm", old, old)
	nested := entry("wazero-v1/stale", old, old)
	fresh := entry("fresh.cwasm", now.Add(-time.Hour), now.Add(-time.Hour))
	read := entry("read.cwasm", now.Add(-time.Hour), old) // written long ago, read an hour ago

	trimCompileCache(dir, now)
	assert.False(t, exists(stale), "an entry unused for over %v is removed", cacheUnusedFor)
	assert.False(t, exists(nested), "an entry in a subdirectory is removed too")
	assert.True(t, exists(fresh), "a recent entry stays")
	if runtime.GOOS == "linux" {
		assert.True(t, exists(read), "an entry read recently stays, whenever it was written")
	}

	later := entry("later.cwasm", old, old)
	trimCompileCache(dir, now.Add(cacheTrimEvery/2))
	assert.True(t, exists(later), "within %v of the last trim the directory is not walked", cacheTrimEvery)
	trimCompileCache(dir, now.Add(cacheTrimEvery+time.Minute))
	assert.False(t, exists(later), "after %v it is", cacheTrimEvery)
	assert.True(t, exists(filepath.Join(dir, cacheTrimMarker)), "the marker stays")
}
