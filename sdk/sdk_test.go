package sdk

import (
	"testing"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func nop(abi.Request) (abi.Plan, error) { return abi.Plan{}, nil }

func validManifest() abi.Manifest {
	return abi.Manifest{Name: "render.x", Version: "1.0.0", Harness: "x", Transports: []string{"stdio", "http"}, Roots: []string{"config", "run", "checkout"}}
}

func TestNewChecksTheManifest(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		edit   func(*abi.Manifest)
		render RenderFunc
		ok     bool
	}{
		{"valid", func(*abi.Manifest) {}, nop, true},
		{"explicit current ABI version", func(m *abi.Manifest) { m.ABIVersion = abi.Version }, nop, true},
		{"no transports (skills only)", func(m *abi.Manifest) { m.Transports = nil }, nop, true},
		{"other ABI version", func(m *abi.Manifest) { m.ABIVersion = abi.Version + 1 }, nop, false},
		{"empty name", func(m *abi.Manifest) { m.Name = "" }, nop, false},
		{"empty version", func(m *abi.Manifest) { m.Version = "" }, nop, false},
		{"empty harness", func(m *abi.Manifest) { m.Harness = "" }, nop, false},
		{"unknown transport", func(m *abi.Manifest) { m.Transports = []string{"sse"} }, nop, false},
		{"repeated transport", func(m *abi.Manifest) { m.Transports = []string{"stdio", "stdio"} }, nop, false},
		{"no roots", func(m *abi.Manifest) { m.Roots = nil }, nop, false},
		{"unknown root", func(m *abi.Manifest) { m.Roots = []string{"home"} }, nop, false},
		{"repeated root", func(m *abi.Manifest) { m.Roots = []string{"run", "run"} }, nop, false},
		{"invalid UTF-8 name", func(m *abi.Manifest) { m.Name = "\xff" }, nop, false},
		{"nil render", func(*abi.Manifest) {}, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := validManifest()
			tc.edit(&m)
			p, err := New(m, tc.render)
			if !tc.ok {
				assert.Error(t, err, "New(%+v) = %v, want an error", m, p)
				return
			}
			require.NoError(t, err, "New(%+v)", m)
			assert.Equal(t, abi.Version, p.Manifest().ABIVersion, "New fills the ABI version")
			got, err := decodeManifestForTest(p.ManifestJSON())
			require.NoError(t, err, "decode ManifestJSON %s", p.ManifestJSON())
			assert.Equal(t, p.Manifest(), got, "ManifestJSON and Manifest disagree")
		})
	}
}

func TestRegister(t *testing.T) {
	// Not parallel: Register sets package state.
	t.Cleanup(func() {
		mu.Lock()
		registered = nil
		mu.Unlock()
	})
	assert.Nil(t, Registered(), "Registered before Register")
	assert.Panics(t, func() { Register(abi.Manifest{}, nop) }, "Register with an empty manifest must panic")
	assert.Nil(t, Registered(), "a refused Register must not register")
	Register(validManifest(), nop)
	require.NotNil(t, Registered(), "Registered after Register")
	assert.Equal(t, "render.x", Registered().Manifest().Name, "Registered().Manifest().Name")
	assert.Panics(t, func() { Register(validManifest(), nop) }, "a second Register must panic")
}

func TestManifestIsACopy(t *testing.T) {
	t.Parallel()
	m := validManifest()
	p, err := New(m, nop)
	require.NoError(t, err, "New(%+v)", m)
	m.Roots[0] = "changed"
	got := p.Manifest()
	got.Transports[0] = "changed"
	assert.Equal(t, []string{"config", "run", "checkout"}, p.Manifest().Roots, "the caller's manifest slice leaked into the plugin")
	assert.Equal(t, []string{"stdio", "http"}, p.Manifest().Transports, "Manifest() returned shared state")
}

func decodeManifestForTest(b []byte) (abi.Manifest, error) {
	var m abi.Manifest
	err := jsonUnmarshalStrict(b, &m)
	return m, err
}
