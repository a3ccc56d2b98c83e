package builtin

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoad(t *testing.T) {
	a, b := []byte("\x00asm-a"), []byte("\x00asm-b")
	pinA := `{"sha256":"sha256:aa","manifest":{"harness":"ha"}}`
	pinB := `{"sha256":"sha256:bb","manifest":{"harness":"hb"}}`
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
			"wasm/pins.json": {Data: []byte(`{"a.wasm":{"sha256":"sha256:aa","manifest":{"harness":"ha"},"extra":1}}`)},
		}, wantErr: "unknown field"},
		{name: "pin without a harness", fs: fstest.MapFS{
			"wasm/a.wasm":    {Data: a},
			"wasm/pins.json": {Data: []byte(`{"a.wasm":{"sha256":"sha256:aa","manifest":{}}}`)},
		}, wantErr: "manifest.harness are required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := load(tc.fs)
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
		})
	}
}
