//go:build unix

// Package flock takes the exclusive, non-blocking file locks loadout uses to tell a directory a
// running process is writing from one a dead process left: the kernel releases the lock when
// its holder dies, however it dies.
package flock

import (
	"os"
	"syscall"
)

// TryLock takes an exclusive flock on f without waiting; it fails when another open file
// description holds one.
func TryLock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
