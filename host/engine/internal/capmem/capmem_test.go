package capmem

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAllocatorCapsGrowth(t *testing.T) {
	a := &Allocator{Limit: 4 << 16}
	m := a.Allocate(1<<16, 1<<32)
	b := m.Reallocate(1 << 16)
	require.Len(t, b, 1<<16, "Reallocate(one page)")
	b[0] = 7
	b = m.Reallocate(3 << 16)
	require.Len(t, b, 3<<16, "Reallocate(three pages)")
	assert.Equal(t, byte(7), b[0], "growing keeps the contents")
	assert.Zero(t, b[2<<16], "new pages are zero")
	assert.False(t, a.Hit, "no grow past the cap yet")
	assert.Nil(t, m.Reallocate(5<<16), "Reallocate past the cap")
	assert.True(t, a.Hit, "a refused grow is remembered")
	m.Free()
}

// TestRecyclerZeroesWhatAGuestWrote holds a recycled memory to all zeroes, over its whole
// capacity, whatever the instance before wrote into it and however far it grew.
func TestRecyclerZeroesWhatAGuestWrote(t *testing.T) {
	r := &Recycler{Max: 1}
	first := &Allocator{Limit: 8 << 16, Recycler: r}
	m := first.Allocate(1<<16, 1<<32)
	m.Reallocate(2 << 16)
	b := m.Reallocate(3 << 16)
	for i := range b {
		b[i] = 0xa5
	}
	first.Release()
	assert.Empty(t, r.free, "Release before wazero frees the memory keeps it with its instance")
	m.Free()
	first.Release()
	require.Len(t, r.free, 1, "Release after Free recycles the memory")

	second := &Allocator{Limit: 8 << 16, Recycler: r}
	b2 := second.Allocate(1<<16, 1<<32).Reallocate(1 << 16)
	require.Len(t, b2, 1<<16, "recycled memory has the size asked for")
	assert.Equal(t, &b[0], &b2[0], "the second instance got the first one's memory")
	full := b2[:cap(b2)]
	for i, v := range full {
		if v != 0 {
			t.Fatalf("recycled memory byte %d of %d = %#x, want 0", i, len(full), v)
		}
	}
	assert.Empty(t, r.free, "a recycled memory serves one instance")
}

// TestRecyclerBounds holds the recycler to Max memories and to memories within the limit of
// the instance that asks.
func TestRecyclerBounds(t *testing.T) {
	r := &Recycler{Max: 1}
	for range 3 {
		a := &Allocator{Limit: 4 << 16, Recycler: r}
		m := a.Allocate(1<<16, 1<<32)
		m.Reallocate(4 << 16)
		m.Free()
		a.Release()
	}
	assert.Len(t, r.free, 1, "memories kept with Max 1")
	small := &Allocator{Limit: 2 << 16, Recycler: r}
	b := small.Allocate(1<<16, 1<<32).Reallocate(1 << 16)
	assert.Equal(t, 1<<16, cap(b), "an instance with a smaller limit gets new memory, not a larger recycled one")
	assert.Len(t, r.free, 1, "the larger memory stays for an instance it fits")
}
