//go:build unix

package materialize

import (
	"os"
	"syscall"
)

// tryLock takes an exclusive flock on f without waiting; the kernel releases it when the
// process holding it dies, however it dies.
func tryLock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
