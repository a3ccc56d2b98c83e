// Package ascii finds the bytes a JSON or YAML string writer (or reader) must look at, eight
// bytes at a time. The sdk's string writers and request decoder spend most of their time on
// runs of plain printable ASCII; inside a Go-compiled WebAssembly plugin every turn of a
// byte-by-byte loop costs a dozen instructions and an indirect branch, so jumping over a plain
// run, or straight to the next byte that needs care, is the cheapest gain there is.
//
// A caller reads a word, asks for the mask of its special bytes, and moves by Plain of it: past
// the whole word when none is special, else onto the first special byte, which it handles as
// before:
//
//	for i < len(s) {
//		if i+8 <= len(s) {
//			n := ascii.Plain(ascii.Special(ascii.Word(s, i)))
//			if i += n; n == 8 {
//				continue
//			}
//		}
//		// s[i] is special, or one of the last seven bytes: handle it byte by byte.
//	}
//
// Plain never counts a byte that needs care, so a caller that handles every byte it stops at
// stays exactly as correct as a byte-by-byte loop. Each function is small enough for the
// compiler to inline (a call costs more than the test); all are pure and safe for concurrent
// use.
package ascii

import "math/bits"

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// Word is the little-endian uint64 of s[i:i+8]; the compiler turns it into one load.
func Word(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// WordBytes is Word for a byte slice.
func WordBytes(b []byte, i int) uint64 {
	b = b[i : i+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// Special is the mask of w's bytes below 0x20, at or above 0x7f, '"' and '\\': the bytes no
// JSON or YAML double-quoted string writes as themselves. The mask is zero when w has none, and
// its lowest set bit is the high bit of the first such byte. (Each test, Hacker's Delight "has
// less", "has more" and "has zero", may also mark bytes after a marked one, through a borrow or
// a carry, never before it.)
func Special(w uint64) uint64 {
	control := (w - ones*0x20) & ^w
	high := w + ones*(0x80-0x7f) | w
	q := w ^ ones*'"'
	bs := w ^ ones*'\\'
	return (control | high | (q-ones)&^q | (bs-ones)&^bs) & highs
}

// HTML is the mask of w's '<', '>' and '&' bytes, which encoding/json also escapes, with
// Special's guarantees.
func HTML(w uint64) uint64 {
	lt := w ^ ones*'<'
	gt := w ^ ones*'>'
	amp := w ^ ones*'&'
	return ((lt-ones)&^lt | (gt-ones)&^gt | (amp-ones)&^amp) & highs
}

// Plain is the number of bytes before the first byte mask m marks: 8 when m is zero.
func Plain(m uint64) int { return bits.TrailingZeros64(m) >> 3 }
