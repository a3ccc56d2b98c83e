//go:build !unix

// Package flock takes the exclusive, non-blocking file locks loadout uses to tell a directory a
// running process is writing from one a dead process left: the kernel releases the lock when
// its holder dies, however it dies.
package flock

import (
	"errors"
	"os"
)

// TryLock needs flock, which this platform lacks: nothing is ever taken for stale.
func TryLock(*os.File) error {
	return errors.New("flock: this platform has no flock")
}
