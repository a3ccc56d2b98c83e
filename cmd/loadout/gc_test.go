package main

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCollectOnlyNearLimit: a one-shot command collects only near the limit, unless the
// environment sets the collector's pacing itself.
func TestCollectOnlyNearLimit(t *testing.T) {
	prevPercent := debug.SetGCPercent(100)
	prevLimit := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(prevPercent)
		debug.SetMemoryLimit(prevLimit)
	})

	for _, env := range []map[string]string{{"GOGC": "200"}, {"GOMEMLIMIT": "1GiB"}} {
		collectOnlyNearLimit(func(k string) string { return env[k] }, 1)
		assert.Equal(t, 100, debug.SetGCPercent(100), "GC percent with %v", env)
		assert.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1), "memory limit with %v", env)
	}

	collectOnlyNearLimit(func(string) string { return "" }, 1)
	assert.Equal(t, -1, debug.SetGCPercent(100), "GC percent with neither variable set")
	assert.Equal(t, int64(oneShotMemoryLimit), debug.SetMemoryLimit(math.MaxInt64), "memory limit with neither variable set")

	// Each plugin beyond the first raises the limit: five harnesses (96 MiB) no longer collect
	// again and again with the live heap of five modules near 64 MiB.
	collectOnlyNearLimit(func(string) string { return "" }, 5)
	assert.Equal(t, int64(96<<20), debug.SetMemoryLimit(math.MaxInt64), "memory limit for five plugins")
	collectOnlyNearLimit(func(string) string { return "" }, 0)
	assert.Equal(t, int64(oneShotMemoryLimit), debug.SetMemoryLimit(math.MaxInt64), "memory limit for no plugin named")
}
