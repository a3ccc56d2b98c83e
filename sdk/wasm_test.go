//go:build !wasip1

package sdk_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/sdk"
	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/internal/testrender"
	"github.com/loadout-dev/loadout/sdk/sdktest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// guest is one instance of a plugin module in a sandbox like the host's: WASI preview 1 with
// no env, no args, no preopens, fake clocks, a page cap, _initialize as the only start function.
type guest struct {
	ctx context.Context
	mod api.Module
}

func buildTestPlugin(t testing.TB) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "testplugin.wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", out, "./internal/testplugin")
	cmd.Env = append(cmd.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build ./sdk/internal/testplugin: %s", b)
	return out
}

func newGuest(t testing.TB, wasmPath string) *guest {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithMemoryLimitPages(1024).WithCloseOnContextDone(true))
	t.Cleanup(func() { rt.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	wasm, err := os.ReadFile(wasmPath)
	require.NoError(t, err, "read %s", wasmPath)
	compiled, err := rt.CompileModule(ctx, wasm)
	require.NoError(t, err, "compile %s", wasmPath)
	for _, imp := range compiled.ImportedFunctions() {
		mod, name, _ := imp.Import()
		assert.Equal(t, "wasi_snapshot_preview1", mod, "import %s.%s: only WASI preview 1 may be imported", mod, name)
	}
	mod, err := rt.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithStartFunctions(abi.ExportInitialize).WithName(""))
	require.NoError(t, err, "instantiate %s", wasmPath)
	return &guest{ctx: ctx, mod: mod}
}

// output reads the (ptr<<32|len) result of an export.
func (g *guest) output(t testing.TB, packed uint64) []byte {
	t.Helper()
	b, ok := g.mod.Memory().Read(uint32(packed>>32), uint32(packed))
	require.True(t, ok, "result (ptr %d, len %d) is outside guest memory", packed>>32, uint32(packed))
	return append([]byte(nil), b...)
}

func (g *guest) call(t testing.TB, export string, params ...uint64) []uint64 {
	t.Helper()
	fn := g.mod.ExportedFunction(export)
	require.NotNil(t, fn, "export %s missing", export)
	res, err := fn.Call(g.ctx, params...)
	require.NoError(t, err, "call %s%v", export, params)
	return res
}

// render hands input to loadout_render the way the host does and returns the output.
func (g *guest) render(t testing.TB, input []byte) []byte {
	t.Helper()
	ptr := g.call(t, abi.ExportAlloc, uint64(len(input)))[0]
	require.True(t, g.mod.Memory().Write(uint32(ptr), input), "write %d input bytes at %d", len(input), ptr)
	return g.output(t, g.call(t, abi.ExportRender, ptr, uint64(len(input)))[0])
}

func TestWasmExports(t *testing.T) {
	wasmPath := buildTestPlugin(t)
	g := newGuest(t, wasmPath)

	assert.Equal(t, []uint64{abi.Version}, g.call(t, abi.ExportABIVersion), "loadout_abi_version()")

	p, err := sdk.New(testrender.Manifest, testrender.Render)
	require.NoError(t, err, "sdk.New(testrender.Manifest)")
	assert.Equal(t, string(p.ManifestJSON()), string(g.output(t, g.call(t, abi.ExportManifest)[0])), "loadout_manifest()")

	req := abi.Request{
		ABIVersion: abi.Version,
		Harness:    testrender.Manifest.Harness,
		Servers: []abi.Server{
			{ID: "files", Transport: abi.TransportStdio, Command: "/usr/bin/files"},
			{ID: "docs", Transport: abi.TransportHTTP, URL: "https://mcp.example.com/" + strings.Repeat("x", 1<<20)},
		},
		Skills: []abi.Skill{{Name: "review", Instructions: "{{loadout.blob.1}}"}},
	}
	in, err := json.Marshal(req)
	require.NoError(t, err, "encode request")
	native := sdktest.Render(t, testrender.Manifest, testrender.Render, req)
	for i := range 3 { // one instance serves several calls; each output is complete
		plan, rerr := sdktest.Decode(t, g.render(t, in))
		require.Nil(t, rerr, "render #%d returned an error", i)
		assert.Equal(t, native, plan, "render #%d in wasm differs from the native render", i)
	}

	cases := []struct {
		name     string
		input    string
		wantCode string
	}{
		{"panic", `{"abiVersion":1,"harness":"sdktest","servers":[{"id":"panic"}]}`, abi.CodeInternal},
		{"abi.Error", `{"abiVersion":1,"harness":"sdktest","servers":[{"id":"unsupported"}]}`, abi.CodeUnsupported},
		{"plain error", `{"abiVersion":1,"harness":"sdktest","servers":[{"id":"plain-error"}]}`, abi.CodeInternal},
		{"duplicate key", `{"abiVersion":1,"harness":"sdktest","harness":"sdktest"}`, abi.CodeInvalidInput},
		{"unknown field", `{"abiVersion":1,"harness":"sdktest","x":1}`, abi.CodeInvalidInput},
		{"trailing data", `{"abiVersion":1,"harness":"sdktest"}{}`, abi.CodeInvalidInput},
		{"empty input", ``, abi.CodeInvalidInput},
	}
	for _, tc := range cases {
		_, rerr := sdktest.Decode(t, g.render(t, []byte(tc.input)))
		if assert.NotNil(t, rerr, "render(%s) returned a plan, want error %s", tc.input, tc.wantCode) {
			assert.Equal(t, tc.wantCode, rerr.Code, "render(%s) code (message %q)", tc.input, rerr.Message)
		}
	}

	// A pointer the guest never handed out is refused, not read.
	packed := g.call(t, abi.ExportRender, 8, 16)[0]
	_, rerr := sdktest.Decode(t, g.output(t, packed))
	if assert.NotNil(t, rerr, "render at an unallocated pointer returned a plan") {
		assert.Equal(t, abi.CodeInvalidInput, rerr.Code, "render at an unallocated pointer: code (message %q)", rerr.Message)
	}

	// After a panic the instance still renders.
	plan, rerr := sdktest.Decode(t, g.render(t, in))
	require.Nil(t, rerr, "render after a panic returned an error")
	assert.Equal(t, native, plan, "render after a panic")
}

// BenchmarkWasmRender measures the guest side of one render as the host runs it: "render" is
// the loadout_alloc + copy + loadout_render of a realistic request (eight servers, four inline
// skill bodies, about 12 KiB) in a live instance; "render-minimal" is the same for an empty
// request (the fixed cost of one call); "instantiate" is the fresh instance and _initialize
// that the host adds to every call.
func BenchmarkWasmRender(b *testing.B) {
	wasmPath := buildTestPlugin(b)
	req := abi.Request{ABIVersion: abi.Version, Harness: testrender.Manifest.Harness}
	body := strings.Repeat("Review the change for correctness, style and tests. Use \"gofmt\".\n", 48)
	for i := range 8 {
		req.Servers = append(req.Servers, abi.Server{
			ID: "server" + string(rune('a'+i)), Transport: abi.TransportStdio, Command: "/usr/bin/mcp",
			Args: []string{"--root", "{{loadout.root.checkout}}"}, Env: []abi.Pair{{Name: "TOKEN", Value: "{{loadout.secret.1}}", Secret: true}},
			ToolsRestricted: true, AllowedTools: []string{"read", "list"}, Enabled: true,
		})
	}
	for range 4 {
		req.Skills = append(req.Skills, abi.Skill{Name: "review", Description: "Reviews", Instructions: body})
	}
	in, err := json.Marshal(req)
	require.NoError(b, err, "encode request")
	b.Run("render", func(b *testing.B) {
		g := newGuest(b, wasmPath)
		b.SetBytes(int64(len(in)))
		for b.Loop() {
			g.render(b, in)
		}
	})
	b.Run("render-minimal", func(b *testing.B) {
		g := newGuest(b, wasmPath)
		empty := []byte(`{"abiVersion":1,"harness":"sdktest"}`)
		for b.Loop() {
			g.render(b, empty)
		}
	})
	b.Run("instantiate", func(b *testing.B) {
		ctx := context.Background()
		rt := wazero.NewRuntime(ctx)
		defer rt.Close(ctx)
		wasi_snapshot_preview1.MustInstantiate(ctx, rt)
		wasm, err := os.ReadFile(wasmPath)
		require.NoError(b, err, "read %s", wasmPath)
		compiled, err := rt.CompileModule(ctx, wasm)
		require.NoError(b, err, "compile %s", wasmPath)
		for b.Loop() {
			mod, err := rt.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithStartFunctions(abi.ExportInitialize).WithName(""))
			require.NoError(b, err, "instantiate")
			mod.Close(ctx)
		}
	})
}
