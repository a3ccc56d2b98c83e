package builtin

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func pin(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func TestLoad(t *testing.T) {
	a, b := []byte("\x00asm-a"), []byte("\x00asm-b")
	tests := []struct {
		name    string
		fs      fstest.MapFS
		want    []string
		wantErr string
	}{
		{name: "not built", fs: fstest.MapFS{"wasm/README.md": {}}, wantErr: "run ./build.sh"},
		{name: "pinned", fs: fstest.MapFS{
			"wasm/b.wasm":    {Data: b},
			"wasm/a.wasm":    {Data: a},
			"wasm/pins.json": {Data: []byte(`{"a.wasm":"` + pin(a) + `","b.wasm":"` + pin(b) + `"}`)},
		}, want: []string{"a.wasm", "b.wasm"}},
		{name: "swapped module", fs: fstest.MapFS{
			"wasm/a.wasm":    {Data: b},
			"wasm/pins.json": {Data: []byte(`{"a.wasm":"` + pin(a) + `"}`)},
		}, wantErr: "does not match its pin"},
		{name: "unpinned module", fs: fstest.MapFS{
			"wasm/a.wasm":    {Data: a},
			"wasm/pins.json": {Data: []byte(`{}`)},
		}, wantErr: "has no pin"},
		{name: "pin without module", fs: fstest.MapFS{
			"wasm/a.wasm":    {Data: a},
			"wasm/pins.json": {Data: []byte(`{"a.wasm":"` + pin(a) + `","gone.wasm":"sha256:00"}`)},
		}, wantErr: "not embedded"},
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
			var names []string
			for _, a := range got {
				names = append(names, a.Name)
				assert.Equal(t, pin(a.Bytes), a.SHA256)
			}
			assert.Equal(t, tc.want, names)
		})
	}
}
