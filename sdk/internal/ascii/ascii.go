// Package ascii finds the end of a run of plain printable ASCII eight bytes at a time. The
// string writers and the request decoder of the sdk spend most of their time walking such runs
// byte by byte; inside a Go-compiled WebAssembly plugin every byte of that walk costs several
// instructions, so skipping a whole 8-byte word when none of its bytes needs care is the
// cheapest gain there is.
//
// A caller skips words while Special (and HTML, for encoding/json's escaping) reports none of
// their bytes needs care, then walks the next word byte by byte as before:
//
//	for i+8 <= len(s) && !ascii.Special(ascii.Word(s, i)) {
//		i += 8
//	}
//
// A word is skipped only when every byte in it is plain, so a caller that handles every byte
// itself stays exactly as correct. Each function is small enough for the compiler to inline
// (a call costs more than the test inside a WebAssembly guest); all are pure and safe for
// concurrent use.
package ascii

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

// Special reports whether w holds a byte below 0x20, at or above 0x7f, '"' or '\\': the bytes
// no JSON or YAML double-quoted string writes as themselves. Each test (Hacker's Delight "has
// less", "has more", "has zero") is exact about whether such a byte exists, which is all the
// callers need.
func Special(w uint64) bool {
	control := (w - ones*0x20) & ^w
	high := w + ones*(0x80-0x7f) | w // high bit set where a byte >= 0x7f
	q := w ^ ones*'"'
	quote := (q - ones) & ^q
	bs := w ^ ones*'\\'
	backslash := (bs - ones) & ^bs
	return (control|high|quote|backslash)&highs != 0
}

// HTML reports whether w holds '<', '>' or '&'.
func HTML(w uint64) bool {
	lt := w ^ ones*'<'
	gt := w ^ ones*'>'
	amp := w ^ ones*'&'
	return ((lt-ones)&^lt|(gt-ones)&^gt|(amp-ones)&^amp)&highs != 0
}
