package codecache

import (
	"bytes"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func open(t *testing.T, dir, key string) *Cache {
	t.Helper()
	c, err := Open(dir, key, nil)
	require.NoError(t, err, "Open(%s, %s)", dir, key)
	return c
}

// TestOpenCreatesPrivateDirectoryAndKey: the directory is made 0700, the key 0600 in a 0700
// directory of its own, and a second Open reads the same key.
func TestOpenCreatesPrivateDirectoryAndKey(t *testing.T) {
	base := t.TempDir()
	dir, key := filepath.Join(base, "cache", "loadout", "compiled", "wazero"), filepath.Join(base, "config", "loadout", "compile-cache.key")
	c := open(t, dir, key)
	for path, want := range map[string]fs.FileMode{dir: 0o700 | fs.ModeDir, filepath.Dir(key): 0o700 | fs.ModeDir, key: 0o600} {
		fi, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, want, fi.Mode(), "mode of %s", path)
	}
	b, err := os.ReadFile(key)
	require.NoError(t, err)
	assert.Len(t, b, KeySize, "key length")
	names, err := filepath.Glob(filepath.Join(filepath.Dir(key), ".key-*"))
	require.NoError(t, err)
	assert.Empty(t, names, "no temporary key file is left behind")
	require.NoError(t, c.Put(Name("x"), []byte("code")))
	got, err := open(t, dir, key).Get(Name("x"))
	assert.NoError(t, err, "a second Open reads the same key: an entry the first wrote verifies")
	assert.Equal(t, "code", string(got))
	after, err := os.ReadFile(key)
	require.NoError(t, err)
	assert.Equal(t, b, after, "the key is not rewritten")
}

// TestOpenRefusesWhatOthersCouldChange: a directory group or others may write, a key someone
// else may read or write, a key of the wrong size or a symbolic link, and a key inside the
// cache directory are refused; only write access to the directory matters.
func TestOpenRefusesWhatOthersCouldChange(t *testing.T) {
	for _, mode := range []fs.FileMode{0o777, 0o770, 0o720, 0o702} {
		base := t.TempDir()
		dir := filepath.Join(base, "cache")
		require.NoError(t, os.Mkdir(dir, 0o700))
		require.NoError(t, os.Chmod(dir, mode))
		_, err := Open(dir, filepath.Join(base, "key"), nil)
		assert.ErrorIs(t, err, ErrUnsafe, "a cache directory with mode %04o", mode)
		assert.ErrorContains(t, err, dir, "the error names the directory")
	}
	base := t.TempDir()
	dir := filepath.Join(base, "cache")
	require.NoError(t, os.Mkdir(dir, 0o755))
	_, err := Open(dir, filepath.Join(base, "key"), nil)
	assert.NoError(t, err, "a cache directory others may read but not write")

	_, err = Open(dir, filepath.Join(dir, "sub", "key"), nil)
	assert.ErrorIs(t, err, ErrUnsafe, "a key inside the cache directory")

	for _, mode := range []fs.FileMode{0o640, 0o604, 0o620, 0o666} {
		key := filepath.Join(t.TempDir(), "key")
		require.NoError(t, os.WriteFile(key, bytes.Repeat([]byte{1}, KeySize), 0o600))
		require.NoError(t, os.Chmod(key, mode))
		_, err := Open(dir, key, nil)
		assert.ErrorIs(t, err, ErrUnsafe, "a key with mode %04o", mode)
	}
	for _, n := range []int{0, KeySize - 1, KeySize + 1} {
		key := filepath.Join(t.TempDir(), "key")
		require.NoError(t, os.WriteFile(key, bytes.Repeat([]byte{1}, n), 0o600))
		_, err := Open(dir, key, nil)
		assert.ErrorContains(t, err, "want exactly 32 bytes", "a key of %d bytes", n)
	}
	real := filepath.Join(t.TempDir(), "key")
	require.NoError(t, os.WriteFile(real, bytes.Repeat([]byte{1}, KeySize), 0o600))
	link := filepath.Join(t.TempDir(), "key")
	require.NoError(t, os.Symlink(real, link))
	_, err = Open(dir, link, nil)
	assert.Error(t, err, "a key that is a symbolic link")
}

// fakeInfo is a FileInfo with the owner and mode a test gives it.
type fakeInfo struct {
	fs.FileInfo
	uid  uint32
	mode fs.FileMode
}

func (f fakeInfo) Mode() fs.FileMode { return f.mode }
func (f fakeInfo) Sys() any          { return &syscall.Stat_t{Uid: f.uid} }

// TestPrivateRefusesAnotherOwner: a directory or key owned by another user is refused, however
// private its mode (a test cannot chown without root, so the owner is faked).
func TestPrivateRefusesAnotherOwner(t *testing.T) {
	me := uint32(os.Geteuid())
	assert.NoError(t, private(fakeInfo{uid: me, mode: fs.ModeDir | 0o700}, 0o022), "mine, 0700")
	err := private(fakeInfo{uid: me + 1, mode: fs.ModeDir | 0o700}, 0o022)
	assert.ErrorIs(t, err, ErrUnsafe, "another user's, 0700")
	assert.ErrorContains(t, err, "owned by uid")
}

// TestGetAuthenticates: an entry reads back as written; one whose bytes changed, that was
// moved to another name, made with another key, is a symbolic link or a FIFO, or is cut short
// fails authentication and is logged; a missing one is fs.ErrNotExist.
func TestGetAuthenticates(t *testing.T) {
	dir, keys := t.TempDir(), t.TempDir()
	var log bytes.Buffer
	c, err := Open(dir, filepath.Join(keys, "key"), slog.New(slog.NewTextHandler(&log, nil)))
	require.NoError(t, err)
	a, b := Name("engine", "sha256:aa"), Name("engine", "sha256:bb")
	require.NoError(t, c.Put(a, []byte("code of a")))
	require.NoError(t, c.Put(b, []byte("code of b")))
	got, err := c.Get(a)
	require.NoError(t, err, "Get(a)")
	assert.Equal(t, "code of a", string(got))
	fi, err := os.Stat(filepath.Join(dir, a))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o600), fi.Mode().Perm(), "an entry is written 0600")

	_, err = c.Get(Name("engine", "sha256:cc"))
	assert.ErrorIs(t, err, fs.ErrNotExist, "a missing entry")
	assert.Empty(t, log.String(), "a missing entry is not logged")

	pathA := filepath.Join(dir, a)
	good, err := os.ReadFile(pathA)
	require.NoError(t, err)
	other := open(t, dir, filepath.Join(keys, "other"))
	for name, plant := range map[string]func(){
		"a byte changed": func() {
			bad := bytes.Clone(good)
			bad[len(bad)-1] ^= 1
			require.NoError(t, os.WriteFile(pathA, bad, 0o600))
		},
		"the tag changed": func() {
			bad := bytes.Clone(good)
			bad[0] ^= 1
			require.NoError(t, os.WriteFile(pathA, bad, 0o600))
		},
		"another entry moved over it": func() {
			bb, err := os.ReadFile(filepath.Join(dir, b))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(pathA, bb, 0o600))
		},
		"made with another key": func() { require.NoError(t, other.Put(a, []byte("code of a"))) },
		"cut short":             func() { require.NoError(t, os.WriteFile(pathA, good[:10], 0o600)) },
		"a symbolic link":       func() { require.NoError(t, os.Symlink(filepath.Join(dir, b), pathA)) },
		"a FIFO":                func() { require.NoError(t, syscall.Mkfifo(pathA, 0o600)) },
	} {
		t.Run(name, func(t *testing.T) {
			log.Reset()
			require.NoError(t, os.Remove(pathA))
			plant()
			done := make(chan error, 1)
			go func() { _, err := c.Get(a); done <- err }()
			select {
			case err := <-done:
				assert.ErrorIs(t, err, ErrNotAuthentic)
			case <-time.After(10 * time.Second):
				t.Fatal("Get blocked")
			}
			assert.Contains(t, log.String(), "failed authentication", "the refusal is logged")
			assert.Contains(t, log.String(), pathA, "the log names the entry")
		})
	}
	require.NoError(t, os.Remove(pathA))
	require.NoError(t, os.WriteFile(pathA, good, 0o600))
	_, err = c.Get(a)
	assert.NoError(t, err, "the original entry, put back")
	assert.Error(t, c.Put("../x"+Ext, nil), "an entry name with a path")
	_, err = c.Get("trim.txt")
	assert.Error(t, err, "a file that is not an entry is never read")
}

// TestCheck verifies every entry, removes those that fail and leaves other files alone.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	c := open(t, dir, filepath.Join(t.TempDir(), "key"))
	good, bad := Name("good"), Name("bad")
	require.NoError(t, c.Put(good, []byte("good code")))
	require.NoError(t, c.Put(bad, []byte("bad code")))
	b, err := os.ReadFile(filepath.Join(dir, bad))
	require.NoError(t, err)
	b[len(b)-1] ^= 1
	require.NoError(t, os.WriteFile(filepath.Join(dir, bad), b, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "trim.txt"), nil, 0o600))

	ok, failed, err := c.Check()
	require.NoError(t, err)
	assert.Equal(t, 1, ok, "entries that verify")
	require.Len(t, failed, 1, "entries that fail")
	assert.Equal(t, bad, failed[0].Name)
	assert.ErrorIs(t, failed[0].Err, ErrNotAuthentic)
	_, err = os.Stat(filepath.Join(dir, bad))
	assert.ErrorIs(t, err, fs.ErrNotExist, "the failing entry is removed")
	for _, keep := range []string{good, "trim.txt"} {
		_, err = os.Stat(filepath.Join(dir, keep))
		assert.NoError(t, err, "%s stays", keep)
	}
	assert.True(t, strings.HasSuffix(good, Ext))
}
