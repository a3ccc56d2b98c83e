// Package codecache keeps compiled plugin code on disk between processes, and hands an engine
// back only bytes it can prove it wrote itself.
//
// The sandbox holds only while compiled code is what the compiler made (altered machine code runs
// with loadout's own rights), so a cache entry is trusted only once authenticated: every entry
// carries a GMAC tag (AES-256-GCM over no plaintext, NIST SP 800-38D) over its name and contents,
// under a fresh random nonce, made with a key that lives outside the cache directory (the caller
// names the key file, created 0600 on first use). A directory copied from elsewhere (a CI cache
// restored from another branch) or edited by someone without the key holds no entry that
// verifies; one moved to another entry's name fails too, since the name is tagged. An entry that
// fails is a miss: the engine compiles the module again and the entry is replaced.
//
// The directory itself must be the user's and writable by no one else (Open refuses it
// otherwise), and an entry is read whole into memory, then verified, then handed over, so what
// is verified is what runs.
package codecache

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

const (
	// Ext ends the name of every entry; files without it are not entries and are never read.
	Ext = ".code"
	// KeySize is the key's length in bytes (AES-256).
	KeySize = 32
	// MaxEntryBytes bounds what one entry may hold; a larger file is not read.
	MaxEntryBytes = 256 << 20
	// domain starts what an entry's tag covers, before its name: it separates this package's
	// tags from any other use of the key, and this format from a later one.
	domain = "loadout compiled code v1\x00"
)

var (
	// ErrNotAuthentic is a cache entry whose tag does not verify under the key.
	ErrNotAuthentic = errors.New("compiled code entry failed authentication")
	// ErrUnsafe is a cache directory or key file someone other than the user could change.
	ErrUnsafe = errors.New("not private to the user")
)

// Cache is one directory of authenticated compiled-code entries. It is safe for concurrent use,
// by one process or several.
type Cache struct {
	dir string
	mac cipher.AEAD // AES-256-GCM: sealing no plaintext tags the additional data (GMAC)
	log *slog.Logger
}

// Open opens the cache directory dir, creating it 0700, and the key in keyFile, creating it
// (and its directory, 0700) with a fresh random key on first use. keyFile must not be inside
// dir. Both must belong to the user running loadout: a directory writable by group or others
// or owned by another user, or a key file readable by anyone else, is refused (ErrUnsafe).
// log, when set, is told about every entry that fails authentication.
func Open(dir, keyFile string, log *slog.Logger) (*Cache, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	keyFile, err = filepath.Abs(keyFile)
	if err != nil {
		return nil, err
	}
	if rel, err := filepath.Rel(dir, keyFile); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("compile cache key %s is inside the cache directory %s: %w", keyFile, dir, ErrUnsafe)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("compile cache: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("compile cache: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("compile cache %s: not a directory", dir)
	}
	if err := private(fi, 0o022); err != nil {
		return nil, fmt.Errorf("compile cache directory %s: %w", dir, err)
	}
	key, err := loadKey(keyFile)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	mac, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Cache{dir: dir, mac: mac, log: log}, nil
}

// private checks that fi belongs to the user running loadout and has none of the mode bits in
// forbidden.
func private(fi fs.FileInfo, forbidden fs.FileMode) error {
	uid, ok := owner(fi)
	if !ok {
		return fmt.Errorf("its owner cannot be read on this system: %w", ErrUnsafe)
	}
	if uid != os.Geteuid() {
		return fmt.Errorf("owned by uid %d, not %d: %w", uid, os.Geteuid(), ErrUnsafe)
	}
	if m := fi.Mode().Perm(); m&forbidden != 0 {
		return fmt.Errorf("mode %04o grants group or others %04o: %w", m, m&forbidden, ErrUnsafe)
	}
	return nil
}

// loadKey reads the key in path, creating it first when there is none. The file is created
// whole or not at all (linked into place from a temporary file), so a concurrent first use
// reads either no key or the complete one.
func loadKey(path string) ([]byte, error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		if err := createKey(path); err != nil {
			return nil, fmt.Errorf("compile cache key %s: %w", path, err)
		}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, fmt.Errorf("compile cache key %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("compile cache key %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("compile cache key %s: not a regular file: %w", path, ErrUnsafe)
	}
	if err := private(fi, 0o077); err != nil {
		return nil, fmt.Errorf("compile cache key %s: %w", path, err)
	}
	key := make([]byte, KeySize+1)
	n, err := io.ReadFull(f, key)
	if n != KeySize || !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("compile cache key %s: want exactly %d bytes (remove it to make a new one)", path, KeySize)
	}
	return key[:KeySize], nil
}

func createKey(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".key-*") // 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(key); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// Dir is the cache directory.
func (c *Cache) Dir() string { return c.dir }

// Name is the entry name for the parts that identify a compiled module (the engine's version
// and settings, the module's verified pin): a hex sha256 of them, with Ext.
func Name(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s\x00", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil)) + Ext
}

// An entry file is a nonce, the tag, then what the tag covers: domain, the entry's name, a NUL
// and the contents. The name inside is compared with the name asked for, so an entry moved to
// another name fails; a GMAC needs a nonce never used twice under the key, and a random 96-bit
// one per entry is that for far more entries than a cache ever holds.
const (
	nonceSize = 12
	tagSize   = 16
)

// header is what the tag covers before an entry's contents.
func header(name string) string { return domain + name + "\x00" }

// Get returns the contents of entry name once its tag verifies. A missing entry is an error
// for which errors.Is(err, fs.ErrNotExist) holds; one that does not verify is ErrNotAuthentic
// (and logged). The bytes returned are the bytes verified.
func (c *Cache) Get(name string) ([]byte, error) {
	data, err := c.read(name)
	if errors.Is(err, ErrNotAuthentic) {
		c.log.Warn("compiled plugin code in the cache failed authentication: not used, compiling again", "entry", filepath.Join(c.dir, name), "error", err)
	}
	return data, err
}

// read reads and verifies entry name.
func (c *Cache) read(name string) ([]byte, error) {
	if name != filepath.Base(name) || !strings.HasSuffix(name, Ext) {
		return nil, fmt.Errorf("compile cache entry %q: not an entry name", name)
	}
	f, err := os.OpenFile(filepath.Join(c.dir, name), os.O_RDONLY|noFollow|noBlock, 0)
	if err != nil {
		if isLoop(err) {
			return nil, fmt.Errorf("%s is a symbolic link: %w", name, ErrNotAuthentic)
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file: %w", name, ErrNotAuthentic)
	}
	h := header(name)
	least := int64(nonceSize + tagSize + len(h))
	if fi.Size() < least || fi.Size() > MaxEntryBytes {
		return nil, fmt.Errorf("%s holds %d bytes, want %d to %d: %w", name, fi.Size(), least, MaxEntryBytes, ErrNotAuthentic)
	}
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, err
	}
	nonce, tag, covered := b[:nonceSize], b[nonceSize:nonceSize+tagSize], b[nonceSize+tagSize:]
	if _, err := c.mac.Open(nil, nonce, tag, covered); err != nil || string(covered[:len(h)]) != h {
		return nil, fmt.Errorf("%s: %w", name, ErrNotAuthentic)
	}
	return covered[len(h):], nil
}

// Put stores data as entry name with its tag, replacing any entry of that name atomically.
// The cache only saves time: callers may ignore the error.
func (c *Cache) Put(name string, data []byte) error {
	if name != filepath.Base(name) || !strings.HasSuffix(name, Ext) {
		return fmt.Errorf("compile cache entry %q: not an entry name", name)
	}
	b := make([]byte, nonceSize+tagSize, nonceSize+tagSize+len(header(name))+len(data))
	if _, err := rand.Read(b[:nonceSize]); err != nil {
		return err
	}
	b = append(append(b, header(name)...), data...)
	c.mac.Seal(b[nonceSize:nonceSize], b[:nonceSize], nil, b[nonceSize+tagSize:])
	tmp, err := os.CreateTemp(c.dir, ".entry-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(c.dir, name)); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return nil
}

// Bad is an entry that failed Check.
type Bad struct {
	Name string
	Err  error
}

// Check verifies every entry in the directory, removes each one that fails (none of it would
// ever be run: Get refuses it too) and returns them, with the number that verified.
func (c *Cache) Check() (ok int, bad []Bad, err error) {
	des, err := os.ReadDir(c.dir)
	if err != nil {
		return 0, nil, err
	}
	for _, de := range des {
		if !strings.HasSuffix(de.Name(), Ext) {
			continue
		}
		if _, err := c.read(de.Name()); err != nil {
			bad = append(bad, Bad{Name: de.Name(), Err: err})
			_ = os.Remove(filepath.Join(c.dir, de.Name()))
			continue
		}
		ok++
	}
	return ok, bad, nil
}
