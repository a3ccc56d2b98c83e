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
