package format

import (
	"math"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTOMLDocument(t *testing.T) {
	t.Parallel()
	var d TOMLDocument
	d.Root().Set("top", "level")
	d.Table("mcp_servers", "docs").
		Set("url", "https://x.example/mcp").
		Set("http_headers", NewObject().Set("X-Client", "loadout").Set("Authorization", "Bearer {{loadout.secret.1}}")).
		Set("enabled_tools", []string{}).
		Set("tool_timeout_sec", int64(60))
	later := NewObject()
	d.AppendTable(later, "mcp_servers", "a.b")
	later.Set("args", []string{"q\"", "nl\n"}).Set("enabled", false).Set("t", 2.5).Set("f", 60.0)
	got, err := d.Marshal()
	require.NoError(t, err, "Marshal")
	want := `top = "level"

[mcp_servers.docs]
url = "https://x.example/mcp"
http_headers = { X-Client = "loadout", Authorization = "Bearer {{loadout.secret.1}}" }
enabled_tools = []
tool_timeout_sec = 60

[mcp_servers."a.b"]
args = ["q\"", "nl\n"]
enabled = false
t = 2.5
f = 60.0
`
	assert.Equal(t, want, string(got), "TOMLDocument.Marshal")
	var back map[string]any
	_, err = toml.Decode(string(got), &back)
	require.NoError(t, err, "toml.Decode of:\n%s", got)
}

func TestTOMLDocumentErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		build func(d *TOMLDocument)
	}{
		{"table twice", func(d *TOMLDocument) { d.Table("a"); d.Table("a") }},
		{"empty path", func(d *TOMLDocument) { d.Table() }},
		{"root key redefined", func(d *TOMLDocument) { d.Root().Set("a", 1); d.Table("a", "b") }},
		{"null", func(d *TOMLDocument) { d.Table("a").Set("k", nil) }},
		{"nan", func(d *TOMLDocument) { d.Table("a").Set("k", math.NaN()) }},
		{"map", func(d *TOMLDocument) { d.Root().Set("k", map[string]string{}) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var d TOMLDocument
			tc.build(&d)
			_, err := d.Marshal()
			assert.ErrorIs(t, err, ErrUnsupported, "Marshal of a document with %s must fail", tc.name)
		})
	}
}

func TestAppendTOMLString(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{`a"b\c`, `"a\"b\\c"`},
		{"\b\t\n\f\r", `"\b\t\n\f\r"`},
		{"\x00\x1f\x7f", `"\u0000\u001f\u007f"`},
		{"\u2028é\U0001F600", "\"\u2028é\U0001F600\""},
		{"\xff", `"\ufffd"`},
		{`\u0041`, `"\\u0041"`},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, string(AppendTOMLString(nil, tc.in)), "AppendTOMLString(%q)", tc.in)
	}
}

func TestAppendTOMLKey(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"A-z_09", "A-z_09"},
		{"a.b", `"a.b"`},
		{"", `""`},
		{"bad name", `"bad name"`},
		{"é", `"é"`},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, string(AppendTOMLKey(nil, tc.in)), "AppendTOMLKey(%q)", tc.in)
	}
}

// tomlPlain converts a writer value to what BurntSushi/toml decodes it to.
func tomlPlain(v any) any {
	switch v := v.(type) {
	case *Object:
		m := make(map[string]any, len(v.entries))
		for _, e := range v.entries {
			m[jsonValidUTF8(e.key)] = tomlPlain(e.val)
		}
		return m
	case []string:
		l := make([]any, len(v))
		for i, s := range v {
			l[i] = jsonValidUTF8(s)
		}
		return l
	case []any:
		l := make([]any, len(v))
		for i, e := range v {
			l[i] = tomlPlain(e)
		}
		return l
	case string:
		return jsonValidUTF8(v)
	case int:
		return int64(v)
	default:
		return v
	}
}

func FuzzTOMLDocument(f *testing.F) {
	for _, s := range trickyStrings() {
		f.Add(s, s+"k", 2.5, int64(7))
	}
	f.Fuzz(func(t *testing.T, key, val string, num float64, n int64) {
		if math.IsNaN(num) || math.IsInf(num, 0) {
			num = 0
		}
		var d TOMLDocument
		d.Root().Set("root", val)
		body := d.Table("mcp_servers", key).
			Set(key, val).
			Set("args", []string{val, key, ""}).
			Set("env", NewObject().Set(key, val).Set("Z", "z")).
			Set("n", n).Set("f", num).Set("b", true).
			Set("mixed", []any{val, int64(1)})
		out, err := d.Marshal()
		require.NoError(t, err, "Marshal(%q, %q)", key, val)
		var back map[string]any
		_, err = toml.Decode(string(out), &back)
		require.NoError(t, err, "toml.Decode of Marshal output:\n%s", out)
		want := map[string]any{
			"root":        jsonValidUTF8(val),
			"mcp_servers": map[string]any{jsonValidUTF8(key): tomlPlain(body)},
		}
		assert.Equal(t, want, back, "TOML round trip of %q/%q", key, val)
	})
}
