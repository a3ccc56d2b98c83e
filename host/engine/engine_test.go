package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/loadout-dev/loadout/host/engine"
)

func TestCallDeadlineGrowsWithInput(t *testing.T) {
	l := engine.Limits{Deadline: 2 * time.Second, DeadlinePerKiB: 20 * time.Millisecond}
	assert.Equal(t, 2*time.Second, l.CallDeadline(0), "no input: the base deadline")
	assert.Equal(t, 2*time.Second, l.CallDeadline(1023), "under a KiB: the base deadline")
	assert.Equal(t, 2*time.Second+20*time.Millisecond, l.CallDeadline(1024), "one KiB")
	assert.Equal(t, 7*time.Second, l.CallDeadline(250<<10), "a 1,000-server request of about 250 KiB")
}
