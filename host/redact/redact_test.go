package redact

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/sdk/format"
)

func TestString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		secrets []string
		in      string
		want    string
	}{
		{name: "no secrets", secrets: nil, in: "hello", want: "hello"},
		{name: "empty secret ignored", secrets: []string{""}, in: "hello", want: "hello"},
		{name: "one occurrence", secrets: []string{"tok"}, in: "a tok b", want: "a [REDACTED] b"},
		{name: "every occurrence", secrets: []string{"tok"}, in: "toktok tok", want: "[REDACTED][REDACTED] [REDACTED]"},
		{name: "longest first", secrets: []string{"ab", "abcd"}, in: "xabcdx", want: "x[REDACTED]x"},
		{name: "leftmost wins over overlap", secrets: []string{"bc", "ab"}, in: "abc", want: "[REDACTED]c"},
		{name: "escaped spellings are just more strings", secrets: []string{"p\"w", `p\"w`}, in: `{"k":"p\"w"} p"w`, want: `{"k":"[REDACTED]"} [REDACTED]`},
		{name: "secret at the end", secrets: []string{"end"}, in: "the end", want: "the [REDACTED]"},
		{name: "duplicates collapse", secrets: []string{"x", "x"}, in: "axb", want: "a[REDACTED]b"},
		{name: "no match", secrets: []string{"secret"}, in: "secre", want: "secre"},
		{name: "multibyte", secrets: []string{"é€"}, in: "aé€b", want: "a[REDACTED]b"},
		{name: "shared prefix, longest that matches", secrets: []string{"tok-1", "tok-12", "tok-123"}, in: "tok-124 tok-1x", want: "[REDACTED]4 [REDACTED]x"},
		{name: "a prefix of a longer secret that does not match", secrets: []string{"abcdef", "cd"}, in: "abcdxx", want: "ab[REDACTED]xx"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := New(tc.secrets)
			assert.Equal(t, tc.want, r.String(tc.in), "New(%q).String(%q)", tc.secrets, tc.in)
			var out bytes.Buffer
			n, err := r.Copy(&out, iotest.OneByteReader(strings.NewReader(tc.in)))
			require.NoError(t, err, "Copy(one byte at a time)")
			assert.Equal(t, tc.want, out.String(), "New(%q).Copy(%q) one byte at a time", tc.secrets, tc.in)
			assert.Equal(t, int64(len(tc.want)), n, "Copy: bytes written")
		})
	}
}

// TestModel holds the one masking rule: every spelling of a secret (raw, each harness form,
// JSON- and TOML-escaped, Go-quoted, the credential alone) is masked, a secret that is a
// substring of another never splits the longer one, and text holding no spelling of a secret
// (a value that merely resembles one included) is unchanged.
func TestModel(t *testing.T) {
	t.Parallel()
	// A value with a quote, a backslash, a non-ASCII letter, a control character and a "$" a
	// harness would expand; form stands for a harness spelling of it (plan.SecretSpellings).
	const value = "Bearer s3cr\"t\\é\x01$x"
	const form = "Bearer s3cr\"t\\é\x01$$x"
	const jsonValue = `Bearer s3cr\"t\\é\u0001$x` // TOML spells it the same way
	const jsonForm = `Bearer s3cr\"t\\é\u0001$$x`
	set := Spellings(value, form)
	assert.Equal(t, []string{value, jsonValue, form, jsonForm}, set, "Spellings(value, form)")
	assert.Equal(t, []string{"a\tb", `a\tb`}, Spellings("a\tb"), "JSON and TOML both spell a tab \\t: one entry")
	assert.Equal(t, []string{"<&>", `\u003c\u0026\u003e`}, Spellings("<&>"), "JSON escapes <, & and >, TOML does not")
	assert.Equal(t, []string{"plain-token"}, Spellings("plain-token"), "a value escaping leaves alone has one spelling")
	assert.Empty(t, Spellings(""), "an empty value is no secret")

	r := New(set)
	quoted := strconv.Quote(value)
	for _, tc := range []struct{ name, spelling string }{
		{"raw", value},
		{"harness form", form},
		{"JSON and TOML", jsonValue},
		{"JSON and TOML of the form", jsonForm},
		{"Go-quoted", quoted[1 : len(quoted)-1]},
		{"credential alone", "s3cr\"t\\é\x01$x"},
	} {
		assert.Equal(t, "<"+Mask+">", r.String("<"+tc.spelling+">"), "the %s spelling %q is masked whole", tc.name, tc.spelling)
	}

	nested := New(append(Spellings("abc12345"), Spellings("xabc12345y")...))
	assert.Equal(t, Mask+" "+Mask+" "+Mask+"z", nested.String("xabc12345y abc12345 abc12345z"),
		"a secret inside a longer one: the longer is masked whole, the shorter wherever it stands")

	in := "X-Client: loadout " + value
	assert.Equal(t, in, New(nil).String(in), "no secret: unchanged")
	for _, text := range []string{
		"X-Client: loadout", // an ordinary header value
		"Bearer s3cr",       // a prefix of the secret
		"Bearer ",           // the scheme alone
		"s3cr\"t\\é",        // most of the credential
		"abc1234 bc12345 ABC12345",
	} {
		assert.Equal(t, text, r.String(text), "%q is no spelling of a secret", text)
		assert.Equal(t, text, nested.String(text), "%q is no spelling of a secret", text)
	}
	assert.Equal(t, "short and "+Mask, New([]string{"Bearer short"}).String("short and Bearer short"),
		"a credential under 8 bytes is masked only with its scheme")
}

// TestEscapes pins the JSON and TOML spellings the rule lists (sdk/format's, the ones the host
// writes secrets with), and that a value Set spells as is has no other spelling.
func TestEscapes(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, json, toml string }{
		{in: "plain", json: "plain", toml: "plain"},
		{in: "p\"a\\ss\nword", json: `p\"a\\ss\nword`, toml: `p\"a\\ss\nword`},
		{in: "\b\f\r\t", json: `\b\f\r\t`, toml: `\b\f\r\t`},
		{in: "\x01\x1f", json: `\u0001\u001f`, toml: `\u0001\u001f`},
		{in: "<a>&b", json: `\u003ca\u003e\u0026b`, toml: "<a>&b"},
		{in: "\u2028\u2029", json: `\u2028\u2029`, toml: "\u2028\u2029"},
		{in: "del\x7f", json: "del\x7f", toml: `del\u007f`},
		{in: "é", json: "é", toml: "é"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.json, format.JSONStringBody(tc.in), "format.JSONStringBody(%q)", tc.in)
		assert.Equal(t, tc.toml, format.TOMLStringBody(tc.in), "format.TOMLStringBody(%q)", tc.in)
		assert.Equal(t, tc.in == tc.json && tc.in == tc.toml && tc.in != "é" && tc.in != "\u2028\u2029", spelledAsIs(tc.in),
			"spelledAsIs(%q): want true exactly for printable ASCII spelled as is", tc.in)
	}
	// Redaction skips the spellings of a value spelled as is: that must never lose one.
	for b := range 256 {
		s := "a" + string(rune(b)) + "z"
		if b >= 0x80 {
			s = "a" + string([]byte{byte(b)}) + "z"
		}
		same := format.JSONStringBody(s) == s && format.TOMLStringBody(s) == s
		if spelledAsIs(s) {
			assert.True(t, same, "spelledAsIs(%q) = true, but json %q toml %q", s, format.JSONStringBody(s), format.TOMLStringBody(s))
		} else if b < 0x80 {
			assert.False(t, same, "spelledAsIs(%q) = false for an ASCII value spelled as is", s)
		}
	}
}

// TestManySecretsSharingAPrefix masks with a thousand secrets that differ only at the end, as
// the tokens and headers of a large request do: each is found, and nothing else is masked.
func TestManySecretsSharingAPrefix(t *testing.T) {
	t.Parallel()
	var secrets []string
	for i := range 1000 {
		secrets = append(secrets, fmt.Sprintf("Bearer tok-%04d", i))
	}
	r := New(secrets)
	assert.Equal(t, "a [REDACTED] b [REDACTED] c Bearer tok-1000", r.String("a Bearer tok-0999 b Bearer tok-0000 c Bearer tok-1000"))
	assert.Equal(t, "Bearer tok-", r.String("Bearer tok-"), "a shared prefix alone is no secret")
}

func TestNilRedactorPassesThrough(t *testing.T) {
	t.Parallel()
	var r *Redactor
	assert.Equal(t, "abc", r.String("abc"), "(*Redactor)(nil).String")
	var out bytes.Buffer
	_, err := r.Copy(&out, strings.NewReader("abc"))
	require.NoError(t, err, "(*Redactor)(nil).Copy")
	assert.Equal(t, "abc", out.String(), "(*Redactor)(nil).Copy output")
}

func TestWriterSplitAcrossWrites(t *testing.T) {
	t.Parallel()
	r := New([]string{"supersecret"})
	var out bytes.Buffer
	w := r.NewWriter(&out)
	for _, part := range []string{"log: super", "sec", "ret done; supers", "ecret"} {
		n, err := w.Write([]byte(part))
		require.NoError(t, err, "Write(%q)", part)
		require.Equal(t, len(part), n, "Write(%q) count", part)
		assert.NotContains(t, out.String(), "super", "nothing of a possible secret is written early")
	}
	require.NoError(t, w.Close(), "Close")
	assert.Equal(t, "log: [REDACTED] done; [REDACTED]", out.String(), "Writer output")
	_, err := w.Write([]byte("x"))
	assert.ErrorIs(t, err, ErrClosed, "Write after Close")
}

type errWriter struct{}

var errBoom = errors.New("boom")

func (errWriter) Write([]byte) (int, error) { return 0, errBoom }

func TestCopyErrors(t *testing.T) {
	t.Parallel()
	r := New([]string{"s"})
	_, err := r.Copy(errWriter{}, strings.NewReader(strings.Repeat("x", 100)))
	assert.ErrorIs(t, err, errBoom, "Copy to a failing writer")
	_, err = r.Copy(&bytes.Buffer{}, iotest.ErrReader(errBoom))
	assert.ErrorIs(t, err, errBoom, "Copy from a failing reader")
}

// FuzzRedact checks that streaming equals String whatever the chunking, that no secret
// survives, and that input without a secret spelling passes unchanged. Secrets are drawn without the
// characters of the mask, so the mask itself cannot spell one.
func FuzzRedact(f *testing.F) {
	f.Add([]byte("token=abc123; again abc123"), []byte("abc123\x00c12"), uint8(3))
	f.Add([]byte(`{"k":"p\"w"}`), []byte("p\"w\x00p\\\"w"), uint8(1))
	f.Add([]byte("aaaaaaaa"), []byte("aa\x00aaa"), uint8(2))
	f.Add([]byte("nothing here"), []byte("zzz"), uint8(0))
	f.Fuzz(func(t *testing.T, in, secretBlob []byte, chunk uint8) {
		var secrets []string
		for _, s := range bytes.Split(secretBlob, []byte{0}) {
			if len(s) > 0 && !bytes.ContainsAny(s, Mask) {
				secrets = append(secrets, string(s))
			}
		}
		r := New(secrets)
		want := r.String(string(in))
		var out bytes.Buffer
		src := iotest.HalfReader(bytes.NewReader(in))
		if chunk%2 == 0 {
			src = iotest.OneByteReader(bytes.NewReader(in))
		}
		w := r.NewWriter(&out)
		size := int(chunk%17) + 1
		for rest := in; len(rest) > 0; {
			n := min(size, len(rest))
			if _, err := w.Write(rest[:n]); err != nil {
				t.Fatalf("Write: %v", err)
			}
			rest = rest[n:]
		}
		if err := w.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if out.String() != want {
			t.Fatalf("Writer(chunks of %d) = %q, String = %q (secrets %q)", size, out.String(), want, secrets)
		}
		var out2 bytes.Buffer
		if _, err := r.Copy(&out2, src); err != nil {
			t.Fatalf("Copy: %v", err)
		}
		if out2.String() != want {
			t.Fatalf("Copy = %q, String = %q (secrets %q)", out2.String(), want, secrets)
		}
		for _, s := range secrets {
			if strings.Contains(want, s) {
				t.Fatalf("String(%q) = %q still holds secret %q", in, want, s)
			}
		}
		present := false
		for _, s := range derive(secrets) {
			present = present || bytes.Contains(in, []byte(s))
		}
		if !present && want != string(in) {
			t.Fatalf("String(%q) = %q, want the input unchanged (no secret in it)", in, want)
		}
	})
}
