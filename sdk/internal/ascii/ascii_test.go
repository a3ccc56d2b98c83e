package ascii

import (
	"strings"
	"testing"
)

func plain(c byte) bool { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' }

func plainHTML(c byte) bool { return plain(c) && c != '<' && c != '>' && c != '&' }

// firstSpecial is the byte-by-byte answer Plain must give for s[i:i+8].
func firstSpecial(s string, i int, isPlain func(byte) bool) int {
	for k := 0; k < 8; k++ {
		if !isPlain(s[i+k]) {
			return k
		}
	}
	return 8
}

// check compares the word tests with the byte-by-byte answer at every offset of s.
func check(t *testing.T, s string) {
	t.Helper()
	for i := 0; i+8 <= len(s); i++ {
		w := Word(s, i)
		if w != WordBytes([]byte(s), i) {
			t.Fatalf("Word(%q, %d) = %#x, WordBytes = %#x", s, i, w, WordBytes([]byte(s), i))
		}
		if got, want := Plain(Special(w)), firstSpecial(s, i, plain); got != want {
			t.Fatalf("Plain(Special(%q)) = %d, want %d", s[i:i+8], got, want)
		}
		if got, want := Plain(Special(w)|HTML(w)), firstSpecial(s, i, plainHTML); got != want {
			t.Fatalf("Plain(Special|HTML(%q)) = %d, want %d", s[i:i+8], got, want)
		}
	}
}

// TestEveryByteInEveryPosition puts each of the 256 byte values at each position of a word of
// plain bytes, followed by each byte that can carry or borrow into its neighbour (0x00, 0x1f,
// 0x7f, 0x80, 0xff), so that both the first special byte and the bytes after it are checked.
func TestEveryByteInEveryPosition(t *testing.T) {
	for _, fill := range []byte{'a', ' ', '~'} {
		base := []byte(strings.Repeat(string(fill), 16))
		for c := 0; c < 256; c++ {
			for pos := range 8 {
				b := append([]byte(nil), base...)
				b[pos] = byte(c)
				check(t, string(b))
				for _, next := range []byte{0x00, 0x1f, 0x7f, 0x80, 0xff, '"', '\\', '<'} {
					b2 := append([]byte(nil), b...)
					b2[pos+1] = next
					check(t, string(b2))
				}
			}
		}
	}
}

func TestPlain(t *testing.T) {
	for _, tc := range []struct {
		word string
		want int
	}{
		{"abcdefgh", 8}, {`"bcdefgh`, 0}, {`abcdefg\`, 7}, {"abc\ndefg", 3}, {"abc\x7fdefg", 3},
		{"abcé123", 3}, {"a<c>e&gh", 8},
	} {
		if got := Plain(Special(Word(tc.word, 0))); got != tc.want {
			t.Errorf("Plain(Special(%q)) = %d, want %d", tc.word, got, tc.want)
		}
	}
	if got := Plain(Special(Word("a<c>e&gh", 0)) | HTML(Word("a<c>e&gh", 0))); got != 1 {
		t.Errorf("Plain(Special|HTML(%q)) = %d, want 1", "a<c>e&gh", got)
	}
}

func FuzzSpecial(f *testing.F) {
	f.Add("plain ascii text with \"quotes\" and \\ backslashes")
	f.Add("caf\u00e9 \u2028 <tag> & \x7f\x00\xff\x80")
	f.Fuzz(func(t *testing.T, s string) { check(t, s) })
}
