package registry_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/enginetest"
	"github.com/loadout-dev/loadout/host/engine/wazero"
	"github.com/loadout-dev/loadout/host/registry"
	"github.com/loadout-dev/loadout/sdk/abi"
)

const goodManifest = `{"name":"render.test","version":"1.0.0","abiVersion":1,"harness":"test","transports":["stdio","http"],"nativeSkills":true,"roots":["config","run","checkout"]}`

func TestVerify(t *testing.T) {
	wasm := []byte("\x00asm\x01\x00\x00\x00")
	good := registry.Digest(wasm)
	tests := []struct {
		name string
		pin  string
		ok   bool
	}{
		{"matching pin", good, true},
		{"other bytes' pin", registry.Digest([]byte("other")), false},
		{"no prefix", strings.TrimPrefix(good, "sha256:"), false},
		{"uppercase hex", "sha256:" + strings.ToUpper(strings.TrimPrefix(good, "sha256:")), false},
		{"short", good[:len(good)-2], false},
		{"not hex", good[:len(good)-1] + "z", false},
		{"empty", "", false},
		{"other algorithm", "sha512:" + strings.TrimPrefix(good, "sha256:"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := registry.Verify(registry.Artifact{Name: "x.wasm", Wasm: wasm, SHA256: tc.pin})
			if tc.ok {
				assert.NoError(t, err, "Verify(pin %q)", tc.pin)
				return
			}
			assert.ErrorIs(t, err, registry.ErrPinMismatch, "Verify(pin %q)", tc.pin)
		})
	}
}

func TestDecodeManifest(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want error // nil: decodes
	}{
		{"valid", goodManifest, nil},
		{"valid with surrounding whitespace", "\n " + goodManifest + " \n", nil},
		{"minimal", `{"name":"render.x","version":"0","abiVersion":1,"harness":"x","transports":[],"nativeSkills":false,"roots":[]}`, nil},
		{"unknown field", strings.Replace(goodManifest, `"harness"`, `"extra":1,"harness"`, 1), registry.ErrManifest},
		{"duplicate key", strings.Replace(goodManifest, `"harness":"test"`, `"harness":"test","harness":"other"`, 1), registry.ErrManifest},
		{"duplicate key differing only in escape", strings.Replace(goodManifest, `"harness":"test"`, `"harness":"test","h\u0061rness":"test"`, 1), registry.ErrManifest},
		{"trailing object", goodManifest + `{}`, registry.ErrManifest},
		{"trailing garbage", goodManifest + `x`, registry.ErrManifest},
		{"not an object", `[]`, registry.ErrManifest},
		{"empty", ``, registry.ErrManifest},
		{"invalid UTF-8", strings.Replace(goodManifest, `1.0.0`, "1.0.0\xff", 1), registry.ErrManifest},
		{"ABI version 2", strings.Replace(goodManifest, `"abiVersion":1`, `"abiVersion":2`, 1), engine.ErrABIVersion},
		{"unknown root", strings.Replace(goodManifest, `"checkout"]`, `"home"]`, 1), registry.ErrManifest},
		{"repeated root", strings.Replace(goodManifest, `"checkout"]`, `"config"]`, 1), registry.ErrManifest},
		{"unknown transport", strings.Replace(goodManifest, `"http"]`, `"sse"]`, 1), registry.ErrManifest},
		{"name without namespace", strings.Replace(goodManifest, `"render.test"`, `"test"`, 1), registry.ErrManifest},
		{"uppercase harness", strings.Replace(goodManifest, `"harness":"test"`, `"harness":"Test"`, 1), registry.ErrManifest},
		{"empty version", strings.Replace(goodManifest, `"1.0.0"`, `""`, 1), registry.ErrManifest},
		{"roots of the wrong type", strings.Replace(goodManifest, `["config","run","checkout"]`, `"config"`, 1), registry.ErrManifest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := registry.DecodeManifest([]byte(tc.in))
			if tc.want == nil {
				require.NoError(t, err, "DecodeManifest(%q)", tc.in)
				assert.Equal(t, abi.Version, m.ABIVersion, "DecodeManifest(%q).ABIVersion", tc.in)
				return
			}
			assert.ErrorIs(t, err, tc.want, "DecodeManifest(%q)", tc.in)
		})
	}
}

// fakeEngine serves a canned manifest and records what reached Compile.
type fakeEngine struct {
	manifest string
	mu       sync.Mutex
	compiled int
}

func (f *fakeEngine) Name() string                { return "fake" }
func (f *fakeEngine) Close(context.Context) error { return nil }
func (f *fakeEngine) Compile(context.Context, []byte, string, engine.Limits) (engine.Module, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.compiled++
	return &fakeModule{manifest: f.manifest}, nil
}

type fakeModule struct {
	manifest string
	closed   bool
}

func (m *fakeModule) Call(_ context.Context, export string, in []byte) ([]byte, error) {
	if export == abi.ExportManifest {
		return []byte(m.manifest), nil
	}
	return append([]byte("plan:"), in...), nil
}
func (m *fakeModule) Close(context.Context) error { m.closed = true; return nil }

func TestLoadChecksPinBeforeCompile(t *testing.T) {
	fe := &fakeEngine{manifest: goodManifest}
	wasm := []byte("module bytes")
	_, err := registry.Load(context.Background(), fe, registry.Artifact{Name: "x.wasm", Wasm: wasm, SHA256: registry.Digest([]byte("swapped"))})
	assert.ErrorIs(t, err, registry.ErrPinMismatch, "Load with a pin of other bytes")
	assert.Zero(t, fe.compiled, "Load compiled a module whose pin did not match")
}

func TestLoadValidatesManifest(t *testing.T) {
	wasm := []byte("module bytes")
	tests := []struct {
		name     string
		manifest string
		harness  string
		want     error
	}{
		{"valid", goodManifest, "", nil},
		{"valid, harness expected", goodManifest, "test", nil},
		{"harness differs from the expected one", goodManifest, "claude", registry.ErrManifest},
		{"duplicate keys", strings.Replace(goodManifest, `"name":"render.test"`, `"name":"render.test","name":"render.evil"`, 1), "", registry.ErrManifest},
		{"trailing data", goodManifest + "\x00", "", registry.ErrManifest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fe := &fakeEngine{manifest: tc.manifest}
			p, err := registry.Load(context.Background(), fe, registry.Artifact{Name: "x.wasm", Wasm: wasm, SHA256: registry.Digest(wasm), Harness: tc.harness})
			if tc.want != nil {
				assert.ErrorIs(t, err, tc.want, "Load with manifest %q", tc.manifest)
				assert.Nil(t, p, "Load returned a plugin with its error")
				return
			}
			require.NoError(t, err, "Load with manifest %q", tc.manifest)
			defer p.Close(context.Background())
			m := p.Manifest()
			assert.Equal(t, "render.test", m.Name, "Manifest().Name")
			m.Roots[0] = "mutated"
			assert.Equal(t, abi.RootConfig, p.Manifest().Roots[0], "Manifest() must return a copy")
			assert.Equal(t, registry.Digest(wasm), p.Digest(), "Digest()")
			out, err := p.Render(context.Background(), []byte("req"))
			require.NoError(t, err, "Render")
			assert.Equal(t, "plan:req", string(out), "Render(req)")
		})
	}
}

func TestLoadOnWazero(t *testing.T) {
	ctx := context.Background()
	eng, err := wazero.New(ctx, wazero.Config{})
	require.NoError(t, err, "wazero.New")
	defer eng.Close(ctx)

	wasm := enginetest.GoPlugin(t)
	p, err := registry.Load(ctx, eng, registry.Artifact{Name: "goplugin.wasm", Wasm: wasm, SHA256: registry.Digest(wasm), Harness: "goplugin"})
	require.NoError(t, err, "Load(goplugin.wasm)")
	defer p.Close(ctx)
	assert.Equal(t, "render.goplugin", p.Manifest().Name, "Manifest().Name")

	req := enginetest.Request(4 << 10)
	var wg sync.WaitGroup
	outs := make([][]byte, 4)
	errs := make([]error, 4)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = p.Render(ctx, req)
		}()
	}
	wg.Wait()
	for i := range outs {
		require.NoError(t, errs[i], "concurrent Render #%d", i)
		assert.Equal(t, outs[0], outs[i], "concurrent Render #%d differs from #0", i)
	}

	// A plugin whose render traps keeps its typed error through the registry.
	trap := enginetest.WAT(t, "noisy_trap")
	tp, err := registry.Load(ctx, eng, registry.Artifact{Name: "noisy_trap.wasm", Wasm: trap, SHA256: registry.Digest(trap)})
	require.NoError(t, err, "Load(noisy_trap.wasm)")
	defer tp.Close(ctx)
	_, err = tp.Render(ctx, []byte("x"))
	var te *engine.TrapError
	assert.True(t, errors.As(err, &te), "Render on noisy_trap.wasm = %v, want a *engine.TrapError", err)
}

// countingEngine is a fakeEngine whose modules count the calls to the manifest export.
type countingEngine struct {
	fakeEngine
	manifestCalls int
}

type countingModule struct {
	*fakeModule
	e *countingEngine
}

func (c *countingEngine) Compile(ctx context.Context, wasm []byte, digest string, l engine.Limits) (engine.Module, error) {
	m, err := c.fakeEngine.Compile(ctx, wasm, digest, l)
	if err != nil {
		return nil, err
	}
	return countingModule{m.(*fakeModule), c}, nil
}

func (m countingModule) Call(ctx context.Context, export string, in []byte) ([]byte, error) {
	if export == abi.ExportManifest {
		m.e.manifestCalls++
	}
	return m.fakeModule.Call(ctx, export, in)
}

// TestLoadWithPinnedManifest checks that a manifest pinned with the bytes replaces the call
// to the manifest export, and is held to the same rules as one the plugin returns.
func TestLoadWithPinnedManifest(t *testing.T) {
	wasm := []byte("module bytes")
	good, err := registry.DecodeManifest([]byte(goodManifest))
	require.NoError(t, err, "DecodeManifest(goodManifest)")
	bad := good
	bad.Roots = []string{"config", "config"}
	tests := []struct {
		name     string
		manifest abi.Manifest
		harness  string
		want     error
	}{
		{"valid", good, "test", nil},
		{"harness differs from the expected one", good, "claude", registry.ErrManifest},
		{"a root listed twice", bad, "", registry.ErrManifest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ce := &countingEngine{fakeEngine: fakeEngine{manifest: `{"name":"render.other"}`}}
			m := tc.manifest
			p, err := registry.Load(context.Background(), ce, registry.Artifact{Name: "x.wasm", Wasm: wasm, SHA256: registry.Digest(wasm), Harness: tc.harness, Manifest: &m})
			assert.Zero(t, ce.manifestCalls, "Load called the manifest export although the manifest was pinned")
			if tc.want != nil {
				assert.ErrorIs(t, err, tc.want, "Load with pinned manifest %+v", tc.manifest)
				return
			}
			require.NoError(t, err, "Load with a pinned manifest")
			defer p.Close(context.Background())
			assert.Equal(t, good, p.Manifest(), "Manifest() of a plugin loaded with a pinned manifest")
			m.Roots[0] = "mutated"
			assert.Equal(t, abi.RootConfig, p.Manifest().Roots[0], "the plugin must not share the caller's manifest")
		})
	}
}
