package meter_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/loadout-dev/loadout/host/engine/internal/meter"
)

var errStop = errors.New("guest stopped by the test host")

// TestYieldStopsGuest runs guests that never return (an infinite loop, unbounded recursion
// without loops, a loop of bulk memory instructions) on wazero without
// WithCloseOnContextDone: the yield host function is reached and stops them, by panicking
// with a sys.ExitError or with an error value.
func TestYieldStopsGuest(t *testing.T) {
	cases := []struct {
		name     string
		module   string
		export   string
		args     []uint64
		interval int32
		stop     any
		check    func(t *testing.T, err error)
	}{
		{
			name: "loop/exit-error", module: "spin", export: "spin", interval: 1000,
			stop: sys.NewExitError(sys.ExitCodeDeadlineExceeded),
			check: func(t *testing.T, err error) {
				var exit *sys.ExitError
				require.ErrorAs(t, err, &exit, "spin stopped with an exit error")
				assert.Equal(t, sys.ExitCodeDeadlineExceeded, exit.ExitCode(), "exit code of spin")
			},
		},
		{
			name: "loop/error", module: "spin", export: "spin", interval: meter.DefaultInterval, stop: errStop,
			check: func(t *testing.T, err error) { assert.ErrorIs(t, err, errStop, "spin stopped with the panic's error") },
		},
		{
			name: "recursion/exit-error", module: "recurse", export: "recurse", args: []uint64{0}, interval: 100,
			stop: sys.NewExitError(7),
			check: func(t *testing.T, err error) {
				var exit *sys.ExitError
				require.ErrorAs(t, err, &exit, "recurse stopped with an exit error, not a stack overflow")
				assert.Equal(t, uint32(7), exit.ExitCode(), "exit code of recurse")
			},
		},
		{
			name: "bulk/error", module: "fills", export: "fills", args: []uint64{1 << 30, 0}, interval: 800, stop: errStop,
			check: func(t *testing.T, err error) { assert.ErrorIs(t, err, errStop, "fills stopped with the panic's error") },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const stopAt = 5
			y := &yielder{stopAt: stopAt, stop: tc.stop}
			mod := instantiate(t, newRuntime(t, y), instrument(t, wat(t, tc.module), meter.Options{Interval: tc.interval}))
			_, err := mod.ExportedFunction(tc.export).Call(context.Background(), tc.args...)
			require.Error(t, err, "%s.%s never returns: want it stopped", tc.module, tc.export)
			tc.check(t, err)
			assert.Equal(t, int64(stopAt), y.calls.Load(), "%s.%s: yield calls until the stop", tc.module, tc.export)
		})
	}
}

// TestYieldDeadline stops an infinite loop when the context's deadline passes, the way the
// engine's yield does: the guest returns promptly with the exit code of a deadline.
func TestYieldDeadline(t *testing.T) {
	y := &yielder{}
	mod := instantiate(t, newRuntime(t, y), instrument(t, wat(t, "spin"), meter.Options{}))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := mod.ExportedFunction("spin").Call(ctx)
	elapsed := time.Since(start)
	var exit *sys.ExitError
	require.ErrorAs(t, err, &exit, "spin under a 50ms deadline")
	assert.Equal(t, sys.ExitCodeDeadlineExceeded, exit.ExitCode(), "exit code of spin")
	assert.Less(t, elapsed, 2*time.Second, "spin stopped long after its deadline")
	assert.Greater(t, y.calls.Load(), int64(1), "yield calls before the deadline")
	t.Logf("spin: %d yields in %v, one every %v", y.calls.Load(), elapsed, elapsed/time.Duration(y.calls.Load()))
}

// TestBulkCharge checks what a loop of memory.fill is charged: one step per iteration, and
// 1 + size/BytesPerStep per fill, so that yields follow the bytes filled.
func TestBulkCharge(t *testing.T) {
	cases := []struct {
		interval int32
		n, size  uint64
	}{
		{8, 400, 0},
		{800, 400, 0},
		{800, 400, 65536},
		{80_000, 400, 65536},
		{meter.DefaultInterval, 1000, 4096},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.interval, "/", tc.size), func(t *testing.T) {
			y := &yielder{}
			mod := instantiate(t, newRuntime(t, y), instrument(t, wat(t, "fills"), meter.Options{Interval: tc.interval}))
			res, err := mod.ExportedFunction("fills").Call(context.Background(), tc.n, tc.size)
			require.NoError(t, err, "fills(%d, %d)", tc.n, tc.size)
			require.Equal(t, tc.n, res[0], "fills(%d, %d) result", tc.n, tc.size)
			// The loop header runs n+1 times, the fill n times; a check that spends the budget
			// yields and sets it back to Interval.
			want, budget := int64(0), int64(tc.interval)
			charge := func(cost int64) {
				if budget -= cost; budget <= 0 {
					budget = int64(tc.interval)
					want++
				}
			}
			for i := uint64(0); i <= tc.n; i++ {
				charge(1)
				if i < tc.n {
					charge(1 + int64(tc.size/meter.BytesPerStep))
				}
			}
			assert.Equal(t, want, y.calls.Load(), "yield calls for %d fills of %d bytes at Interval %d", tc.n, tc.size, tc.interval)
		})
	}
}

// TestTailCalls runs return_call, which WebAssembly 2.0 lacks but Instrument handles, on
// wazero with tail calls enabled: results are the same, and endless tail recursion without a
// loop (constant stack) is stopped from yield.
func TestTailCalls(t *testing.T) {
	ctx := context.Background()
	run := func(wasm []byte, y *yielder, export string, args ...uint64) ([]uint64, error) {
		r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().
			WithCoreFeatures(api.CoreFeaturesV2|experimental.CoreFeaturesTailCall))
		defer r.Close(ctx)
		_, err := r.NewHostModuleBuilder(meter.ImportModule).NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(y.yield), nil, nil).Export(meter.ImportName).
			Instantiate(ctx)
		require.NoError(t, err, "instantiate %s", meter.ImportModule)
		mod, err := r.Instantiate(ctx, wasm)
		require.NoError(t, err, "instantiate tailcall")
		return mod.ExportedFunction(export).Call(ctx, args...)
	}
	orig := wat(t, "tailcall")
	out := instrument(t, orig, meter.Options{Interval: 100})
	want, err := run(orig, &yielder{}, "count", 100_000, 0)
	require.NoError(t, err, "original count")
	y := &yielder{}
	got, err := run(out, y, "count", 100_000, 0)
	require.NoError(t, err, "instrumented count")
	assert.Equal(t, want, got, "count(100000) instrumented")
	assert.Equal(t, int64(1000), y.calls.Load(), "yield calls of 100001 entries of count at Interval 100")

	y = &yielder{stopAt: 3, stop: errStop}
	_, err = run(out, y, "forever")
	assert.ErrorIs(t, err, errStop, "forever stopped from yield")
}

// TestGCDuringSpin runs a garbage collection while an instrumented guest spins: the collection's
// stop-the-world must not wait for the guest to end, because every yield is a point where the
// goroutine running the guest can be stopped. (Uninstrumented and without
// WithCloseOnContextDone, the same guest would hold the collection until it ended.)
func TestGCDuringSpin(t *testing.T) {
	y := &yielder{}
	mod := instantiate(t, newRuntime(t, y), instrument(t, wat(t, "spin"), meter.Options{}))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := mod.ExportedFunction("spin").Call(ctx)
		done <- err
	}()
	for y.calls.Load() == 0 { // the guest is running
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	runtime.GC()
	gc := time.Since(start)
	assert.Less(t, gc, time.Second, "runtime.GC while a guest spins")
	select {
	case err := <-done:
		t.Fatalf("spin returned during the collection: %v", err)
	default:
	}
	cancel()
	var exit *sys.ExitError
	require.ErrorAs(t, <-done, &exit, "spin after its context was cancelled")
	t.Logf("runtime.GC took %v while the guest spun", gc)
}
