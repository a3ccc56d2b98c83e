//go:build unix

package wazero

import "syscall"

// reserve maps l.limit bytes of zeroed, private, lazily backed memory as l.buf's capacity.
// It reports false (and leaves l.buf nil, so Reallocate falls back to the Go heap) when the
// mapping fails.
func (l *linearMemory) reserve() bool {
	if l.limit == 0 || l.limit > 1<<32 {
		return false
	}
	b, err := syscall.Mmap(-1, 0, int(l.limit), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return false
	}
	l.buf = b[:0]
	return true
}

// release unmaps the reservation.
func (l *linearMemory) release() {
	_ = syscall.Munmap(l.buf[:cap(l.buf)])
}
