package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/engine/codecache"
	"github.com/loadout-dev/loadout/host/registry"
	"github.com/loadout-dev/loadout/internal/testplugins"
)

// TestCompileCacheRunsOnlyAuthenticCode: the compiled code of one plugin planted under another's
// cache entry (the codex entry copied over the claude one) is never run: `render` compiles the
// claude plugin again and renders what it rendered before, and `plugins verify` reports and
// removes the planted entry. A cache directory others may write is not used (render warns
// and compiles in memory; verify fails), and --no-compile-cache keeps nothing on disk. The cache
// and the key live in temporary XDG directories, the key outside the cache.
func TestCompileCacheRunsOnlyAuthenticCode(t *testing.T) {
	base := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(base, "cache"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(base, "config"))
	cacheDir := filepath.Join(base, "cache", "loadout", "compiled", defaultEngine())
	keyFile := filepath.Join(base, "config", "loadout", "compile-cache.key")

	plugins := t.TempDir()
	pins := map[string]string{}
	for _, name := range []string{"claude", "codex"} {
		wasm := testplugins.Read(t, name)
		require.NoError(t, os.WriteFile(filepath.Join(plugins, name+".wasm"), wasm, 0o644))
		pins[name+".wasm"] = registry.Digest(wasm)
	}
	b, _ := json.Marshal(pins)
	pinsPath := filepath.Join(plugins, "pins.json")
	require.NoError(t, os.WriteFile(pinsPath, b, 0o644))
	plugin := func(name string) []string {
		return []string{"--plugin", filepath.Join(plugins, name+".wasm"), "--pins", pinsPath}
	}
	renderFor := func(harness string, extra ...string) (string, string) {
		t.Helper()
		args := append([]string{"render", "--harness", harness, "--dry-run", "--format", "json", examplePath(t)}, plugin(harness)...)
		code, stdout, stderr := runCLI(t, "", append(args, extra...)...)
		require.Equal(t, exitOK, code, "render: %s", stderr)
		return stdout, stderr
	}
	render := func(extra ...string) (string, string) {
		t.Helper()
		return renderFor("claude", extra...)
	}
	verify := func(name string) (int, string) {
		t.Helper()
		code, stdout, _ := runCLI(t, "", append([]string{"plugins", "verify"}, plugin(name)...)...)
		return code, stdout
	}
	entries := func() []string {
		t.Helper()
		names, err := filepath.Glob(filepath.Join(cacheDir, "*"+codecache.Ext))
		require.NoError(t, err)
		return names
	}

	// A --plugin file replaces the built-in plugin of its harness, which is not compiled: a
	// render compiles the one module it renders with.
	want, _ := render()
	require.Len(t, entries(), 1, "entries after rendering with the claude plugin")
	claudeEntry := entries()[0]
	for path, mode := range map[string]fs.FileMode{cacheDir: 0o700, keyFile: 0o600} {
		fi, err := os.Stat(path)
		require.NoError(t, err, "the cache directory and its key exist")
		assert.Equal(t, mode, fi.Mode().Perm(), "mode of %s", path)
	}
	renderFor("codex")
	require.Len(t, entries(), 2, "entries after rendering with the codex plugin")
	codexEntry := entries()[0]
	if codexEntry == claudeEntry {
		codexEntry = entries()[1]
	}
	code, out := verify("claude")
	require.Equal(t, exitOK, code, "plugins verify: %s", out)
	assert.Contains(t, out, " entries authenticated in "+cacheDir)
	plant := func() {
		t.Helper()
		b, err := os.ReadFile(codexEntry)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(claudeEntry, b, 0o600))
	}

	plant()
	code, out = verify("claude")
	assert.Equal(t, exitPlugin, code, "plugins verify over a planted entry: %s", out)
	assert.Contains(t, out, "FAIL compiled "+claudeEntry+": ")
	assert.Contains(t, out, "failed authentication (removed)")
	code, out = verify("claude")
	assert.Equal(t, exitOK, code, "plugins verify once the planted entry is gone: %s", out)

	plant()
	got, stderr := render()
	assert.Equal(t, want, got, "render over the codex code planted as claude's renders claude's config")
	assert.Contains(t, stderr, "failed authentication", "the planted entry is reported")
	code, out = verify("claude")
	assert.Equal(t, exitOK, code, "the entry render replaced authenticates: %s", out)

	for _, e := range entries() {
		require.NoError(t, os.Remove(e))
	}
	require.NoError(t, os.Chmod(cacheDir, 0o777))
	got, stderr = render()
	assert.Equal(t, want, got, "render with a cache directory others may write")
	assert.Contains(t, stderr, "not cached on disk", "the unused cache is reported")
	assert.Contains(t, stderr, "mode 0777 grants group or others", "with the reason")
	assert.Empty(t, entries(), "nothing is cached in a directory others may write")
	code, out = verify("claude")
	assert.Equal(t, exitPlugin, code, "plugins verify with a cache directory others may write: %s", out)
	assert.Contains(t, out, "FAIL compiled code cache: compile cache directory "+cacheDir)

	require.NoError(t, os.Chmod(cacheDir, 0o700))
	got, _ = render("--no-compile-cache")
	assert.Equal(t, want, got, "render with --no-compile-cache")
	assert.Empty(t, entries(), "--no-compile-cache keeps nothing on disk")
}
