// Package capmem is the wazero memory allocator that enforces loadout's page cap: the wazero
// engine gives every instance one, so a grow past the cap is refused (memory.grow
// returns -1 to the guest) and remembered, and a later trap can be reported as the memory
// limit. An Allocator belongs to one instance (one goroutine).
//
// A Recycler, shared by the instances of one engine, keeps the memory of finished instances
// for the next ones. A Go plugin's memory is megabytes: allocating it per instance is a
// garbage collection every few calls, and fresh pages fault in one by one (on the build
// machine zeroing and faulting in new memory was the largest part of an instantiation).
// Recycled memory stays resident and is zeroed before it is handed out again, so no instance
// sees a byte another one wrote.
package capmem

import (
	"sync"

	"github.com/tetratelabs/wazero/experimental"
)

// Allocator backs one instance's memory and refuses to grow it past Limit bytes.
type Allocator struct {
	Limit uint64
	// Recycler, when set, provides the memory and takes it back at Release.
	Recycler *Recycler
	// Hit is true once a grow past Limit was refused.
	Hit bool

	mem *linearMemory // the last memory allocated
}

// Allocate implements experimental.MemoryAllocator.
func (a *Allocator) Allocate(_, max uint64) experimental.LinearMemory {
	a.mem = &linearMemory{a: a, limit: min(max, a.Limit)}
	return a.mem
}

// Release hands the instance's memory to the Recycler, once wazero has freed it (the module is
// closed). The caller must be the instance's owner, calling after the instance has stopped
// running for good: nothing may read or write that memory afterwards.
func (a *Allocator) Release() {
	if a.Recycler == nil || a.mem == nil || !a.mem.freed || a.mem.buf == nil {
		return
	}
	a.Recycler.put(a.mem.buf)
	a.mem.buf = nil
}

type linearMemory struct {
	a     *Allocator
	limit uint64
	buf   []byte
	freed bool
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
	var buf []byte
	if l.buf == nil && l.a.Recycler != nil {
		buf = l.a.Recycler.get(size, l.limit)
	}
	if buf == nil {
		next := min(max(size, 2*uint64(cap(l.buf))), l.limit)
		buf = make([]byte, size, next)
		copy(buf, l.buf)
	}
	l.buf = buf
	return buf
}

// Free marks the memory released by wazero; Allocator.Release recycles it.
func (l *linearMemory) Free() { l.freed = true }

// Recycler keeps up to Max memories of finished instances. It is safe for concurrent use.
type Recycler struct {
	Max int

	mu   sync.Mutex
	free [][]byte // each with its length the part a guest could have written
}

// get is a zeroed memory of size bytes with a capacity of at most limit, or nil.
func (r *Recycler) get(size, limit uint64) []byte {
	r.mu.Lock()
	var buf []byte
	for i := len(r.free) - 1; i >= 0; i-- {
		if c := uint64(cap(r.free[i])); c >= size && c <= limit {
			buf = r.free[i]
			r.free = append(r.free[:i], r.free[i+1:]...)
			break
		}
	}
	r.mu.Unlock()
	if buf == nil {
		return nil
	}
	// Past its length the memory was never handed to a guest, so it is still zero.
	clear(buf)
	return buf[:size]
}

// put keeps buf for a later get, or drops it when Max are kept already.
func (r *Recycler) put(buf []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.free) < r.Max {
		r.free = append(r.free, buf)
	}
}
