package meter_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/loadout-dev/loadout/host/engine/internal/meter"
)

type built struct {
	once sync.Once
	wasm []byte
	err  error
}

var wats sync.Map // name -> *built

// wat returns testdata/<name>.wat compiled with wat2wasm (name section included), once per
// test binary. Safe for concurrent use.
func wat(tb testing.TB, name string) []byte {
	tb.Helper()
	v, _ := wats.LoadOrStore(name, &built{})
	b := v.(*built)
	b.once.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		src := filepath.Join(filepath.Dir(file), "testdata", name+".wat")
		var stderr bytes.Buffer
		cmd := exec.Command("wat2wasm", append(watFlags[name], "--debug-names", src, "--output=-")...)
		cmd.Stderr = &stderr
		b.wasm, b.err = cmd.Output()
		if b.err != nil {
			b.err = fmt.Errorf("wat2wasm %s: %w\n%s", src, b.err, stderr.Bytes())
		}
	})
	require.NoError(tb, b.err, "wat2wasm %s", name)
	return b.wasm
}

// watNames lists the modules in testdata that stay within WebAssembly 2.0.
var watNames = []string{"provider", "features", "spin", "recurse", "fills", "bare", "noimport"}

// watFlags are the extra wat2wasm flags of a module past WebAssembly 2.0.
var watFlags = map[string][]string{"tailcall": {"--enable-tail-call"}}

// instrument calls meter.Instrument and fails the test on an error.
func instrument(tb testing.TB, wasm []byte, opts meter.Options) []byte {
	tb.Helper()
	out, err := meter.Instrument(wasm, opts)
	require.NoError(tb, err, "Instrument(%d bytes, %+v)", len(wasm), opts)
	return out
}

// yielder is a test host for the yield import, as an engine would define it: it counts calls,
// stops the guest when the call's context is done (the deadline passed) by panicking with an
// exit error, and, when stopAt is set, stops the guest at the stopAt-th call by panicking with
// stop.
type yielder struct {
	calls  atomic.Int64
	stopAt int64
	stop   any
}

func (y *yielder) yield(ctx context.Context, _ api.Module, _ []uint64) {
	n := y.calls.Add(1)
	if ctx.Err() != nil {
		panic(sys.NewExitError(sys.ExitCodeDeadlineExceeded))
	}
	if y.stopAt > 0 && n >= y.stopAt {
		panic(y.stop)
	}
}

// newRuntime returns a wazero runtime configured as the engine is, but WITHOUT
// WithCloseOnContextDone, with the test host modules "env" (add1) and ImportModule (y.yield)
// instantiated, and testdata/provider instantiated as "prov".
func newRuntime(tb testing.TB, y *yielder) wazero.Runtime {
	tb.Helper()
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCoreFeatures(api.CoreFeaturesV2))
	tb.Cleanup(func() { _ = r.Close(ctx) })
	_, err := r.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, _ api.Module, stack []uint64) {
			stack[0] = uint64(uint32(stack[0]) + 1)
		}), []api.ValueType{api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}).Export("add1").
		Instantiate(ctx)
	require.NoError(tb, err, "instantiate env")
	_, err = r.NewHostModuleBuilder(meter.ImportModule).NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(y.yield), nil, nil).Export(meter.ImportName).
		Instantiate(ctx)
	require.NoError(tb, err, "instantiate %s", meter.ImportModule)
	_, err = r.InstantiateWithConfig(ctx, wat(tb, "provider"), wazero.NewModuleConfig().WithName("prov"))
	require.NoError(tb, err, "instantiate provider")
	return r
}

// instantiate compiles and instantiates wasm anonymously (start function included).
func instantiate(tb testing.TB, r wazero.Runtime, wasm []byte) api.Module {
	tb.Helper()
	ctx := context.Background()
	mod, err := r.InstantiateWithConfig(ctx, wasm, wazero.NewModuleConfig().WithName(""))
	require.NoError(tb, err, "instantiate a module of %d bytes", len(wasm))
	tb.Cleanup(func() { _ = mod.Close(ctx) })
	return mod
}
