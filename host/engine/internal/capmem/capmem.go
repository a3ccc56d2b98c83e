// Package capmem is the wazero memory allocator that enforces loadout's page cap: the wazero
// engine and preinit give every instance one, so a grow past the cap is refused (memory.grow
// returns -1 to the guest) and remembered, and a later trap can be reported as the memory
// limit. An Allocator belongs to one instance (one goroutine).
package capmem

import "github.com/tetratelabs/wazero/experimental"

// Allocator backs one instance's memory and refuses to grow it past Limit bytes.
type Allocator struct {
	Limit uint64
	// Hit is true once a grow past Limit was refused.
	Hit bool
}

// Allocate implements experimental.MemoryAllocator.
func (a *Allocator) Allocate(_, max uint64) experimental.LinearMemory {
	return &linearMemory{a: a, limit: min(max, a.Limit)}
}

type linearMemory struct {
	a     *Allocator
	limit uint64
	buf   []byte
}

// Reallocate grows the memory to size bytes; it never shrinks, so bytes past the old length
// are still zero.
func (l *linearMemory) Reallocate(size uint64) []byte {
	if size > l.limit {
		l.a.Hit = true
		return nil
	}
	if size <= uint64(cap(l.buf)) {
		l.buf = l.buf[:size]
		return l.buf
	}
	next := min(max(size, 2*uint64(cap(l.buf))), l.limit)
	buf := make([]byte, size, next)
	copy(buf, l.buf)
	l.buf = buf
	return buf
}

// Free releases the memory.
func (l *linearMemory) Free() { l.buf = nil }
