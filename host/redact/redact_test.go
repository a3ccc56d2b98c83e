package redact

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
// survives, and that input without secrets passes unchanged. Secrets are drawn without the
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
		present := false
		for _, s := range secrets {
			if strings.Contains(want, s) {
				t.Fatalf("String(%q) = %q still holds secret %q", in, want, s)
			}
			present = present || bytes.Contains(in, []byte(s))
		}
		if !present && want != string(in) {
			t.Fatalf("String(%q) = %q, want the input unchanged (no secret in it)", in, want)
		}
	})
}
