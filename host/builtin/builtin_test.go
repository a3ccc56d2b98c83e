package builtin

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/registry"
	"github.com/loadout-dev/loadout/sdk/abi"
)

func TestHarnesses(t *testing.T) {
	arts := []Artifact{{Manifest: abi.Manifest{Harness: "zz"}}, {Manifest: abi.Manifest{Harness: "aa"}}, {Manifest: abi.Manifest{Harness: "zz"}}}
	assert.Equal(t, []string{"aa", "zz"}, Harnesses(arts), "sorted, once each")
	assert.Empty(t, Harnesses(nil), "no plugin, no harness")
}

func TestLoad(t *testing.T) {
	a, b := []byte("\x00asm-a"), []byte("\x00asm-b")
	pinA := `{"sha256":"sha256:aa","profile":"sha256:pa","manifest":{"harness":"ha"}}`
	pinB := `{"sha256":"sha256:bb","profile":"sha256:pb","manifest":{"harness":"hb"}}`
	tests := []struct {
		name    string
		fs      fstest.MapFS
		want    map[string]string // file name → harness
		wantErr string
	}{
		{name: "not built", fs: fstest.MapFS{"wasm/README.md": {}}, wantErr: "run ./build.sh"},
		{name: "pinned", fs: fstest.MapFS{
			"wasm/b.wasm":    {Data: b},
			"wasm/a.wasm":    {Data: a},
			"wasm/pins.json": {Data: []byte(`{"a.wasm":` + pinA + `,"b.wasm":` + pinB + `}`)},
		}, want: map[string]string{"a.wasm": "ha", "b.wasm": "hb"}},
		{name: "unpinned module", fs: fstest.MapFS{
			"wasm/a.wasm":    {Data: a},
			"wasm/pins.json": {Data: []byte(`{}`)},
		}, wantErr: "has no pin"},
		{name: "pin without module", fs: fstest.MapFS{
			"wasm/a.wasm":    {Data: a},
			"wasm/pins.json": {Data: []byte(`{"a.wasm":` + pinA + `,"gone.wasm":` + pinB + `}`)},
		}, wantErr: "not embedded"},
		{name: "pin of the old string form", fs: fstest.MapFS{
			"wasm/a.wasm":    {Data: a},
			"wasm/pins.json": {Data: []byte(`{"a.wasm":"sha256:aa"}`)},
		}, wantErr: "built-in pins.json"},
		{name: "pin with an unknown field", fs: fstest.MapFS{
			"wasm/a.wasm":    {Data: a},
			"wasm/pins.json": {Data: []byte(`{"a.wasm":{"sha256":"sha256:aa","profile":"sha256:pa","manifest":{"harness":"ha"},"extra":1}}`)},
		}, wantErr: "unknown field"},
		{name: "pin without a harness", fs: fstest.MapFS{
			"wasm/a.wasm":    {Data: a},
			"wasm/pins.json": {Data: []byte(`{"a.wasm":{"sha256":"sha256:aa","manifest":{}}}`)},
		}, wantErr: "manifest.harness are required"},
		{name: "pin without a profile", fs: fstest.MapFS{
			"wasm/a.wasm":    {Data: a},
			"wasm/pins.json": {Data: []byte(`{"a.wasm":{"sha256":"sha256:aa","manifest":{"harness":"ha"}}}`)},
		}, wantErr: "profile and manifest.harness are required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := load(tc.fs, fstest.MapFS{})
			if tc.wantErr != "" {
				require.Error(t, err, "load(%s) should fail", tc.name)
				assert.Contains(t, err.Error(), tc.wantErr)
				if tc.name == "not built" {
					assert.ErrorIs(t, err, ErrNotBuilt)
				}
				return
			}
			require.NoError(t, err)
			harnesses := map[string]string{}
			var names []string
			for _, art := range got {
				names = append(names, art.Name)
				harnesses[art.Name] = art.Manifest.Harness
				wasm, err := art.Wasm()
				require.NoError(t, err, "Wasm(%s)", art.Name)
				assert.Equal(t, tc.fs["wasm/"+art.Name].Data, wasm, "Wasm(%s)", art.Name)
			}
			assert.Equal(t, []string{"a.wasm", "b.wasm"}, names, "artifacts in name order")
			assert.Equal(t, tc.want, harnesses)
			assert.Equal(t, []string{"ha", "hb"}, Harnesses(got), "Harnesses")
		})
	}
}

// TestProfilePinned: a built-in module's profile is read only when its bytes are the ones
// pinned beside the module and it names the module's harness; an embedded profile tampered
// with after the pins were written is refused.
func TestProfilePinned(t *testing.T) {
	const profile = "harness: ha\npaths: [{root: run, path: x.json}]\nvalueSyntax: literal\ntools: {in: none}\n"
	wasm := fstest.MapFS{
		"wasm/a.wasm":    {Data: []byte("\x00asm-a")},
		"wasm/pins.json": {Data: []byte(`{"a.wasm":{"sha256":"sha256:aa","profile":"` + registry.Digest([]byte(profile)) + `","manifest":{"harness":"ha"}}}`)},
	}
	tests := []struct {
		name    string
		profile string // "" leaves it out
		wantErr string
		pinErr  bool
	}{
		{name: "as pinned", profile: profile},
		{name: "tampered", profile: profile + "args: [{flag: --yolo}]\n", wantErr: "pin mismatch", pinErr: true},
		{name: "missing", wantErr: "profile"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			profiles := fstest.MapFS{}
			if tc.profile != "" {
				profiles["a/profile.yaml"] = &fstest.MapFile{Data: []byte(tc.profile)}
			}
			arts, err := load(wasm, profiles)
			require.NoError(t, err, "load")
			require.Len(t, arts, 1)
			p, err := arts[0].Profile()
			_, perr := Profiles(arts)
			if tc.wantErr == "" {
				require.NoError(t, err, "Profile()")
				require.NoError(t, perr, "Profiles()")
				assert.Equal(t, "ha", p.Harness, "Profile().Harness")
				return
			}
			require.Error(t, err, "Profile() of a %s profile", tc.name)
			assert.Contains(t, err.Error(), tc.wantErr)
			assert.Error(t, perr, "Profiles() of a %s profile", tc.name)
			if tc.pinErr {
				assert.ErrorIs(t, err, registry.ErrPinMismatch)
			}
		})
	}
	t.Run("another harness", func(t *testing.T) {
		other := "harness: hb\npaths: [{root: run, path: x.json}]\nvalueSyntax: literal\ntools: {in: none}\n"
		w := fstest.MapFS{
			"wasm/a.wasm":    {Data: []byte("\x00asm-a")},
			"wasm/pins.json": {Data: []byte(`{"a.wasm":{"sha256":"sha256:aa","profile":"` + registry.Digest([]byte(other)) + `","manifest":{"harness":"ha"}}}`)},
		}
		arts, err := load(w, fstest.MapFS{"a/profile.yaml": {Data: []byte(other)}})
		require.NoError(t, err, "load")
		_, err = arts[0].Profile()
		require.Error(t, err, "Profile() naming another harness")
		assert.Contains(t, err.Error(), `for harness "hb"`)
	})
}
