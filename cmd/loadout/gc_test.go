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
		collectOnlyNearLimit(func(k string) string { return env[k] })
		assert.Equal(t, 100, debug.SetGCPercent(100), "GC percent with %v", env)
		assert.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1), "memory limit with %v", env)
	}

	collectOnlyNearLimit(func(string) string { return "" })
	assert.Equal(t, -1, debug.SetGCPercent(100), "GC percent with neither variable set")
	assert.Equal(t, int64(oneShotMemoryLimit), debug.SetMemoryLimit(math.MaxInt64), "memory limit with neither variable set")
}
