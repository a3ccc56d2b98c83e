package meter_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/engine/internal/meter"
)

// TestSameResults runs every export of the test modules before and after instrumentation, on
// wazero without WithCloseOnContextDone, and wants the same results.
func TestSameResults(t *testing.T) {
	cases := []struct {
		module string
		export string
		args   []uint64
		yields bool // it calls a function or loops: Interval 1 yields
	}{
		{"features", "run_start", nil, false},
		{"features", "run_calls", nil, true},
		{"features", "run_indirect", nil, true},
		{"features", "run_loops", nil, true},
		{"features", "run_multi", nil, true},
		{"features", "run_bulk", nil, true},
		{"features", "run_simd", nil, false},
		{"noimport", "answer", nil, true},
		{"fills", "fills", []uint64{100, 65536}, true},
	}
	for _, opts := range []meter.Options{{}, {Interval: 1}, {Interval: 7}} {
		for _, tc := range cases {
			t.Run(tc.module+"/"+tc.export, func(t *testing.T) {
				ctx := context.Background()
				orig := instantiate(t, newRuntime(t, &yielder{}), wat(t, tc.module))
				want, err := orig.ExportedFunction(tc.export).Call(ctx, tc.args...)
				require.NoError(t, err, "original %s.%s", tc.module, tc.export)

				y := &yielder{}
				inst := instantiate(t, newRuntime(t, y), instrument(t, wat(t, tc.module), opts))
				got, err := inst.ExportedFunction(tc.export).Call(ctx, tc.args...)
				require.NoError(t, err, "instrumented %s.%s with %+v", tc.module, tc.export, opts)
				assert.Equal(t, want, got, "%s.%s with %+v: instrumented result", tc.module, tc.export, opts)
				switch {
				case opts.Interval == 1 && tc.yields:
					assert.Positive(t, y.calls.Load(), "%s.%s with Interval 1: yield calls", tc.module, tc.export)
				case !tc.yields:
					assert.Zero(t, y.calls.Load(), "%s.%s calls nothing and has no loop: yield calls", tc.module, tc.export)
				}
			})
		}
	}
}
