package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Compiled plugin code is kept per module digest, so every loadout upgrade or plugin rebuild
// leaves the previous modules' code behind (about 12 MiB each on wazero). trimCompileCache
// removes what has not been used for a while, as Go's own build cache does.
const (
	// cacheUnusedFor is how long an entry may go unused before it is removed.
	cacheUnusedFor = 30 * 24 * time.Hour
	// cacheTrimEvery is how often a cache directory is walked at most.
	cacheTrimEvery = 24 * time.Hour
	// cacheTrimMarker, in a cache directory, records the last trim by its modification time.
	cacheTrimMarker = "trim.txt"
)

// trimCompileCache removes the regular files under dir last used (read or written) more than
// cacheUnusedFor before now, at most once every cacheTrimEvery. "Used" is the later of a file's
// access and modification times: the engines only read an entry once it is written, and Linux's
// default relatime mount updates the access time of a file read after a day. An entry removed
// while another process reads it stays readable to that process; a later render recompiles it.
// Errors are ignored: the cache only saves time.
func trimCompileCache(dir string, now time.Time) {
	marker := filepath.Join(dir, cacheTrimMarker)
	if fi, err := os.Stat(marker); err == nil && now.Sub(fi.ModTime()) < cacheTrimEvery {
		return
	}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || path == marker {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if now.Sub(lastUse(fi)) > cacheUnusedFor {
			_ = os.Remove(path)
		}
		return nil
	})
	_ = os.WriteFile(marker, nil, 0o600)
	_ = os.Chtimes(marker, now, now)
}

// lastUse is the later of fi's modification and access times (accessTime: zero where the
// platform's is not read).
func lastUse(fi fs.FileInfo) time.Time {
	if at := accessTime(fi); at.After(fi.ModTime()) {
		return at
	}
	return fi.ModTime()
}
