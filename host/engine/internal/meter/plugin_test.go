package meter_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/loadout-dev/loadout/host/engine/internal/meter"
	"github.com/loadout-dev/loadout/internal/testplugins"
	"github.com/loadout-dev/loadout/sdk/abi"
)

var claude struct {
	once               sync.Once
	orig, instrumented []byte
	req                []byte
}

// claudePlugin returns the claude plugin, original and instrumented with the default options,
// and the rich render request.
func claudePlugin(tb testing.TB) (orig, instrumented, req []byte) {
	tb.Helper()
	claude.once.Do(func() {
		claude.orig = testplugins.Read(tb, "claude")
		claude.instrumented = instrument(tb, claude.orig, meter.Options{})
		var err error
		claude.req, err = os.ReadFile(filepath.Join(testplugins.Root(tb), "plugins", "claude", "testdata", "requests", "rich.json"))
		require.NoError(tb, err, "read rich.json")
	})
	require.NotEmpty(tb, claude.instrumented, "claude plugin instrumented in an earlier test")
	return claude.orig, claude.instrumented, claude.req
}

// pluginRuntime is a runtime with wazero's WASI and the yield import y.
func pluginRuntime(tb testing.TB, closeOnDone bool, y *yielder) wazero.Runtime {
	tb.Helper()
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().
		WithCoreFeatures(api.CoreFeaturesV2).WithCloseOnContextDone(closeOnDone))
	tb.Cleanup(func() { _ = r.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	_, err := r.NewHostModuleBuilder(meter.ImportModule).NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(y.yield), nil, nil).Export(meter.ImportName).
		Instantiate(ctx)
	require.NoError(tb, err, "instantiate %s", meter.ImportModule)
	return r
}

// startPlugin instantiates a plugin without running its start functions, then runs
// _initialize.
func startPlugin(tb testing.TB, r wazero.Runtime, cm wazero.CompiledModule) api.Module {
	tb.Helper()
	ctx := context.Background()
	mod, err := r.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName("").WithStartFunctions())
	require.NoError(tb, err, "InstantiateModule")
	tb.Cleanup(func() { _ = mod.Close(ctx) })
	_, err = mod.ExportedFunction(abi.ExportInitialize).Call(ctx)
	require.NoError(tb, err, "%s", abi.ExportInitialize)
	return mod
}

// render hands req to the plugin and returns a copy of its output.
func render(tb testing.TB, ctx context.Context, mod api.Module, req []byte) []byte {
	res, err := mod.ExportedFunction(abi.ExportAlloc).Call(ctx, uint64(len(req)))
	if err != nil {
		tb.Fatalf("%s: %v", abi.ExportAlloc, err)
	}
	if !mod.Memory().Write(uint32(res[0]), req) {
		tb.Fatalf("write the request at %d: out of memory", res[0])
	}
	res, err = mod.ExportedFunction(abi.ExportRender).Call(ctx, res[0], uint64(len(req)))
	if err != nil {
		tb.Fatalf("%s: %v", abi.ExportRender, err)
	}
	out, ok := mod.Memory().Read(uint32(res[0]>>32), uint32(res[0]))
	if !ok {
		tb.Fatalf("%s returned %#x, outside memory", abi.ExportRender, res[0])
	}
	return append([]byte(nil), out...)
}

// TestClaudePlugin renders rich.json with the claude plugin before and after instrumentation
// and wants the same bytes; the instrumented plugin must have yielded on the way.
func TestClaudePlugin(t *testing.T) {
	orig, instrumented, req := claudePlugin(t)
	ctx := context.Background()

	r := pluginRuntime(t, false, &yielder{})
	cm, err := r.CompileModule(ctx, orig)
	require.NoError(t, err, "compile the original plugin")
	want := render(t, ctx, startPlugin(t, r, cm), req)
	require.NotEmpty(t, want, "original render output")

	y := &yielder{}
	r = pluginRuntime(t, false, y)
	cm, err = r.CompileModule(ctx, instrumented)
	require.NoError(t, err, "compile the instrumented plugin")
	mod := startPlugin(t, r, cm)
	before := y.calls.Load()
	assert.Positive(t, before, "yield calls during _initialize")
	got := render(t, ctx, mod, req)
	assert.Equal(t, string(want), string(got), "instrumented render of rich.json")
	assert.Greater(t, y.calls.Load(), before, "yield calls during render")
	// A second render on the same instance still agrees.
	assert.Equal(t, string(want), string(render(t, ctx, mod, req)), "second instrumented render of rich.json")
	t.Logf("plugin %d -> %d bytes (+%.1f%%); %d yields", len(orig), len(instrumented),
		100*float64(len(instrumented)-len(orig))/float64(len(orig)), y.calls.Load())
}

// TestPlugins renders every request in the testdata of each Go plugin, and asks each plugin
// embedded in the host for its manifest (the C plugin included), before and after
// instrumentation, and wants the same bytes.
func TestPlugins(t *testing.T) {
	ctx := context.Background()
	outputs := func(wasm []byte, reqs [][]byte) []string {
		r := pluginRuntime(t, false, &yielder{})
		cm, err := r.CompileModule(ctx, wasm)
		require.NoError(t, err, "compile a plugin of %d bytes", len(wasm))
		var outs []string
		mod := startPlugin(t, r, cm)
		res, err := mod.ExportedFunction(abi.ExportManifest).Call(ctx)
		require.NoError(t, err, "%s", abi.ExportManifest)
		manifest, ok := mod.Memory().Read(uint32(res[0]>>32), uint32(res[0]))
		require.True(t, ok, "%s returned %#x, outside memory", abi.ExportManifest, res[0])
		require.NotEmpty(t, manifest, "%s output", abi.ExportManifest)
		outs = append(outs, string(manifest))
		for _, req := range reqs {
			// A fresh instance per request, as the engine gives every call.
			outs = append(outs, string(render(t, ctx, startPlugin(t, r, cm), req)))
		}
		return outs
	}
	root := testplugins.Root(t)
	for _, name := range []string{"claude", "codex", "pi"} {
		t.Run(name, func(t *testing.T) {
			files, err := filepath.Glob(filepath.Join(root, "plugins", name, "testdata", "requests", "*.json"))
			require.NoError(t, err, "list %s requests", name)
			require.NotEmpty(t, files, "%s requests", name)
			var reqs [][]byte
			for _, f := range files {
				b, err := os.ReadFile(f)
				require.NoError(t, err, "read %s", f)
				reqs = append(reqs, b)
			}
			orig := testplugins.Read(t, name)
			want := outputs(orig, reqs)
			got := outputs(instrument(t, orig, meter.Options{}), reqs)
			for i := range want {
				what := abi.ExportManifest
				if i > 0 {
					what = filepath.Base(files[i-1])
				}
				assert.Equal(t, want[i], got[i], "%s: instrumented output of %s", name, what)
			}
		})
	}
	embedded, err := filepath.Glob(filepath.Join(root, "host", "builtin", "wasm", "*.wasm"))
	require.NoError(t, err, "list the embedded plugins")
	for _, f := range embedded {
		t.Run("embedded/"+filepath.Base(f), func(t *testing.T) {
			orig, err := os.ReadFile(f)
			require.NoError(t, err, "read %s", f)
			assert.Equal(t, outputs(orig, nil), outputs(instrument(t, orig, meter.Options{}), nil), "%s: instrumented manifest", f)
		})
	}
}

// renderModes are the three ways BenchmarkRender and BenchmarkRenderInterleaved run the claude
// plugin: the original module with WithCloseOnContextDone(true) (deadline), the original
// without it (nodeadline), and the instrumented module without it (metered), whose yield
// checks the deadline as an engine's would.
func renderModes(tb testing.TB) []renderMode {
	orig, instrumented, _ := claudePlugin(tb)
	return []renderMode{
		{"deadline", orig, true},
		{"nodeadline", orig, false},
		{"metered", instrumented, false},
	}
}

type renderMode struct {
	name        string
	wasm        []byte
	closeOnDone bool
}

// start returns a live, initialized instance of the mode's module and its yield counter.
func (m renderMode) start(tb testing.TB) (api.Module, *yielder) {
	ctx := context.Background()
	y := &yielder{}
	r := pluginRuntime(tb, m.closeOnDone, y)
	cm, err := r.CompileModule(ctx, m.wasm)
	require.NoError(tb, err, "CompileModule(%s)", m.name)
	mod := startPlugin(tb, r, cm)
	y.calls.Store(0)
	return mod, y
}

// renderDeadline renders once under a fresh 10s deadline, as an engine call would.
func renderDeadline(tb testing.TB, mod api.Module, req []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	render(tb, ctx, mod, req)
}

// BenchmarkRender renders rich.json with the claude plugin on one reused instance, in each
// of the three renderModes, side by side.
func BenchmarkRender(b *testing.B) {
	_, _, req := claudePlugin(b)
	for _, m := range renderModes(b) {
		b.Run(m.name, func(b *testing.B) {
			mod, y := m.start(b)
			b.ReportAllocs()
			for b.Loop() {
				renderDeadline(b, mod, req)
			}
			b.ReportMetric(float64(y.calls.Load())/float64(b.N), "yields/op")
		})
	}
}

// BenchmarkRenderInterleaved is BenchmarkRender with the three modes taking turns within each
// iteration, so that load from other processes falls on all of them alike; it reports each
// mode's mean time per render (an op is one render in each mode).
func BenchmarkRenderInterleaved(b *testing.B) {
	_, _, req := claudePlugin(b)
	modes := renderModes(b)
	mods := make([]api.Module, len(modes))
	for i, m := range modes {
		mods[i], _ = m.start(b)
	}
	spent := make([]time.Duration, len(modes))
	for b.Loop() {
		for i, mod := range mods {
			start := time.Now()
			renderDeadline(b, mod, req)
			spent[i] += time.Since(start)
		}
	}
	for i, m := range modes {
		b.ReportMetric(float64(spent[i].Nanoseconds())/float64(b.N), m.name+"-ns/render")
	}
}

// BenchmarkInstrument is the cost of instrumenting the claude plugin, paid once per compile.
func BenchmarkInstrument(b *testing.B) {
	orig, _, _ := claudePlugin(b)
	b.SetBytes(int64(len(orig)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := meter.Instrument(orig, meter.Options{}); err != nil {
			b.Fatalf("Instrument: %v", err)
		}
	}
}
