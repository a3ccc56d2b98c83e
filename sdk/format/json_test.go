package format

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// trickyStrings are seeds shared by the encoder tests and fuzzers: every control character,
// quotes, backslashes, line separators and text that looks like escapes or placeholders.
func trickyStrings() []string {
	s := []string{
		"", "plain", `q"uote`, `back\slash`, `\u0041`, `\n`, `\x41`, `\\"`, "\"\"\"", "'''",
		"<script>&amp;</script>", "\u2028", "\u2029", "\u0085", "\u00a0", "\ufeff", "\ufffe", "\uffff",
		"\x7f", "emoji \U0001F600", "tab\tnl\ncr\r", "{{loadout.secret.1}}", "${HOME}", "!cmd",
		"key = \"v\"\n[evil]", "---\nhooks: x", "# comment", "a: b", "\xff\xfe invalid", "\xc3",
		"\u202e bidi", "é", "\x00",
	}
	for c := 0; c < 0x20; c++ {
		s = append(s, string(rune(c)), "x"+string(rune(c))+"y")
	}
	return s
}

func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, in := range trickyStrings() {
		want, err := json.Marshal(in)
		require.NoError(t, err, "json.Marshal(%q)", in)
		got := AppendJSONString(nil, in)
		assert.Equal(t, string(want), string(got), "AppendJSONString(%q) must equal json.Marshal", in)
	}
}

func TestMarshalJSONShapes(t *testing.T) {
	t.Parallel()
	nested := NewObject().Set("z", "last").Set("a", []string{"x", "y"})
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"empty object", NewObject(), "{}\n"},
		{"nil object", (*Object)(nil), "null\n"},
		{"empty list", []string{}, "[]\n"},
		{"null", nil, "null\n"},
		{"order kept", NewObject().Set("b", 1).Set("a", true), "{\n  \"b\": 1,\n  \"a\": true\n}\n"},
		{"set replaces in place", NewObject().Set("a", 1).Set("b", 2).Set("a", 3), "{\n  \"a\": 3,\n  \"b\": 2\n}\n"},
		{"nested", NewObject().Set("m", nested).Set("e", NewObject()).Set("l", []any{int64(1), "s", NewObject().Set("k", false)}),
			"{\n  \"m\": {\n    \"z\": \"last\",\n    \"a\": [\n      \"x\",\n      \"y\"\n    ]\n  },\n  \"e\": {},\n  \"l\": [\n    1,\n    \"s\",\n    {\n      \"k\": false\n    }\n  ]\n}\n"},
		{"floats", []any{1.5, 60.0, 1e21, 1e-7, -0.25, 123456789.0}, "[\n  1.5,\n  60,\n  1e+21,\n  1e-7,\n  -0.25,\n  123456789\n]\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := MarshalJSON(tc.in)
			require.NoError(t, err, "MarshalJSON(%s)", tc.name)
			assert.Equal(t, tc.want, string(got), "MarshalJSON(%s)", tc.name)
		})
	}
}

func TestMarshalJSONUnsupported(t *testing.T) {
	t.Parallel()
	for _, in := range []any{math.NaN(), math.Inf(1), map[string]string{"a": "b"}, NewObject().Set("x", struct{}{}), []any{uint8(1)}} {
		_, err := MarshalJSON(in)
		assert.ErrorIs(t, err, ErrUnsupported, "MarshalJSON(%#v) must refuse the value", in)
	}
}

// toPlain converts a writer value to what encoding/json decodes it to.
func toPlain(v any) any {
	switch v := v.(type) {
	case *Object:
		m := make(map[string]any, len(v.entries))
		for _, e := range v.entries {
			m[jsonValidUTF8(e.key)] = toPlain(e.val)
		}
		return m
	case []string:
		l := make([]any, len(v))
		for i, s := range v {
			l[i] = toPlain(s)
		}
		return l
	case []any:
		l := make([]any, len(v))
		for i, e := range v {
			l[i] = toPlain(e)
		}
		return l
	case string:
		return jsonValidUTF8(v)
	case int:
		return float64(v)
	case int64:
		return float64(v)
	default:
		return v
	}
}

// jsonValidUTF8 replaces each invalid byte by U+FFFD, as encoding/json does.
func jsonValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		sb.WriteRune(r)
		i += n
	}
	return sb.String()
}

func FuzzMarshalJSON(f *testing.F) {
	for _, s := range trickyStrings() {
		f.Add(s, s+"k", 1.5)
	}
	f.Fuzz(func(t *testing.T, key, val string, num float64) {
		if math.IsNaN(num) || math.IsInf(num, 0) {
			num = 0
		}
		in := NewObject().Set(key, val).Set("list", []string{val, key}).
			Set("nested", NewObject().Set(val, num).Set("b", true)).Set(key+"!", []any{val, num, nil})
		out, err := MarshalJSON(in)
		require.NoError(t, err, "MarshalJSON(%q, %q, %v)", key, val, num)
		require.True(t, bytes.HasSuffix(out, []byte("\n")), "MarshalJSON output must end with a newline")
		var back any
		require.NoError(t, json.Unmarshal(out, &back), "json.Unmarshal of MarshalJSON output:\n%s", out)
		assert.Equal(t, toPlain(in), back, "JSON round trip of %q/%q/%v", key, val, num)

		// With keys sorted, the bytes equal json.MarshalIndent's.
		want, err := json.MarshalIndent(map[string]string{key: val}, "", "  ")
		require.NoError(t, err)
		got, err := MarshalJSON(NewObject().Set(key, val))
		require.NoError(t, err)
		assert.Equal(t, string(want)+"\n", string(got), "MarshalJSON of one key must equal json.MarshalIndent")
	})
}
