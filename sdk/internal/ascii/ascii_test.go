package ascii

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The skips as the sdk's callers write them.
func SkipQuoted(s string, i int) int {
	for i+8 <= len(s) && !Special(Word(s, i)) {
		i += 8
	}
	return i
}

func SkipQuotedBytes(b []byte, i int) int {
	for i+8 <= len(b) && !Special(WordBytes(b, i)) {
		i += 8
	}
	return i
}

func SkipQuotedHTML(s string, i int) int {
	for i+8 <= len(s) {
		if w := Word(s, i); Special(w) || HTML(w) {
			break
		}
		i += 8
	}
	return i
}

func plain(c byte) bool { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' }

func plainHTML(c byte) bool { return plain(c) && c != '<' && c != '>' && c != '&' }

// checkSkip holds the contract of a Skip function on s from i: it stops at a word boundary
// from i, every byte it skipped is plain, and the word it stopped at (if whole) is not.
func checkSkip(t *testing.T, name string, got int, s string, i int, isPlain func(byte) bool) {
	t.Helper()
	if got < i || (got-i)%8 != 0 {
		t.Fatalf("%s(%q, %d) = %d: not a word boundary at or after %d", name, s, i, got, i)
	}
	for k := i; k < got; k++ {
		if !isPlain(s[k]) {
			t.Fatalf("%s(%q, %d) = %d skipped byte %#x at %d", name, s, i, got, s[k], k)
		}
	}
	if got+8 <= len(s) {
		allPlain := true
		for k := got; k < got+8; k++ {
			allPlain = allPlain && isPlain(s[k])
		}
		if allPlain {
			t.Fatalf("%s(%q, %d) = %d stopped before a plain word", name, s, i, got)
		}
	}
}

func checkAll(t *testing.T, s string, i int) {
	t.Helper()
	checkSkip(t, "SkipQuoted", SkipQuoted(s, i), s, i, plain)
	checkSkip(t, "SkipQuotedBytes", SkipQuotedBytes([]byte(s), i), s, i, plain)
	checkSkip(t, "SkipQuotedHTML", SkipQuotedHTML(s, i), s, i, plainHTML)
}

// TestEveryByteInEveryPosition puts each of the 256 byte values at each position of a run of
// plain bytes, beside each neighbour that can confuse a word-at-a-time test (carries and
// borrows from 0x00, 0x7f, 0x80 and 0xff).
func TestEveryByteInEveryPosition(t *testing.T) {
	for _, fill := range []byte{'a', ' ', '~'} {
		base := strings.Repeat(string(fill), 24)
		for c := 0; c < 256; c++ {
			for pos := range 24 {
				b := []byte(base)
				b[pos] = byte(c)
				checkAll(t, string(b), 0)
				checkAll(t, string(b), pos%8)
				for _, nb := range []byte{0x00, 0x1f, 0x7f, 0x80, 0xff} {
					if pos+1 < len(b) {
						b2 := append([]byte(nil), b...)
						b2[pos+1] = nb
						checkAll(t, string(b2), 0)
					}
				}
			}
		}
	}
}

func TestShortAndEmpty(t *testing.T) {
	for _, s := range []string{"", "a", "abcdefg", "abcdefgh", "abcdefgh\"", `abcdefg"`} {
		for i := 0; i <= len(s); i++ {
			checkAll(t, s, i)
		}
	}
	require.Equal(t, 8, SkipQuoted(`abcdefgh"ijklmno`, 0), "stop at the word holding the quote")
	require.Equal(t, 16, SkipQuoted(strings.Repeat("x", 20), 0), "stop at the last partial word")
	require.Equal(t, 0, SkipQuotedHTML("abc<defgh", 0), "'<' stops the HTML variant")
	require.Equal(t, 8, SkipQuoted("abc<defgh", 0), "'<' is plain for the JSON/YAML variant")
}

func FuzzSkip(f *testing.F) {
	f.Add("plain ascii text with \"quotes\" and \\ backslashes", 0)
	f.Add("caf\u00e9 \u2028 <tag> & \x7f\x00", 3)
	f.Fuzz(func(t *testing.T, s string, i int) {
		if i < 0 || i > len(s) {
			return
		}
		checkAll(t, s, i)
	})
}
