package meter

import (
	"fmt"

	"github.com/loadout-dev/loadout/host/engine"
)

// errMalformed is wrapped by every error about bytes that are not a module Instrument can
// read; it matches engine.ErrABI, as an engine's compile error does.
var errMalformed = fmt.Errorf("malformed module: %w", engine.ErrABI)

// errUnsupported is wrapped by every error about a valid construct of a WebAssembly feature
// the engines do not enable (threads, exceptions, GC, typed function references, multiple
// memories, 64-bit memories, relaxed SIMD).
var errUnsupported = fmt.Errorf("unsupported feature: %w", engine.ErrABI)

// reader is a bounds-checked cursor over one byte slice (the approach of preinit's reader).
// Every method fails instead of reading past the end.
type reader struct {
	b   []byte
	off int
}

func (r *reader) fail(format string, args ...any) error {
	return fmt.Errorf("at byte %d: %s: %w", r.off, fmt.Sprintf(format, args...), errMalformed)
}

func (r *reader) done() bool { return r.off >= len(r.b) }

func (r *reader) rest() int { return len(r.b) - r.off }

func (r *reader) byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, r.fail("unexpected end")
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

// peek returns the next byte without consuming it.
func (r *reader) peek() (byte, error) {
	if r.off >= len(r.b) {
		return 0, r.fail("unexpected end")
	}
	return r.b[r.off], nil
}

func (r *reader) bytes(n uint32) ([]byte, error) {
	if uint64(n) > uint64(r.rest()) {
		return nil, r.fail("%d bytes wanted, %d left", n, r.rest())
	}
	s := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return s, nil
}

// uleb reads an unsigned LEB128 number of at most bits bits, refusing overlong encodings whose
// unused bits are set.
func (r *reader) uleb(bits uint) (uint64, error) {
	var v uint64
	var shift uint
	for i := 0; ; i++ {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		if i == int((bits+6)/7)-1 && c>>(bits-shift) != 0 {
			return 0, r.fail("LEB128 number over %d bits", bits)
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, nil
		}
		shift += 7
	}
}

// sleb reads a signed LEB128 number of at most bits bits.
func (r *reader) sleb(bits uint) (int64, error) {
	var v int64
	var shift uint
	for i := 0; ; i++ {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		if i == int((bits+6)/7)-1 {
			// The unused bits must all repeat the sign bit, and the number must end here.
			rest := bits - shift // bits still to fill, 1..7
			if c&0x80 != 0 {
				return 0, r.fail("LEB128 number over %d bits", bits)
			}
			if rest < 7 {
				sign := c >> (rest - 1) & 0x7f // sign bit and the unused bits above it
				if sign != 0 && sign != 0x7f>>(rest-1) {
					return 0, r.fail("LEB128 number over %d bits", bits)
				}
			}
		}
		v |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v, nil
		}
	}
}

func (r *reader) u32() (uint32, error) {
	v, err := r.uleb(32)
	return uint32(v), err
}

// count reads a vector length and checks that the rest of the input could hold that many
// entries of at least min bytes each, so that a hostile count cannot make a loop run long.
func (r *reader) count(min int) (uint32, error) {
	n, err := r.u32()
	if err != nil {
		return 0, err
	}
	if uint64(n)*uint64(min) > uint64(r.rest()) {
		return 0, r.fail("vector of %d entries in %d bytes", n, r.rest())
	}
	return n, nil
}

// name reads a length-prefixed name. Its bytes are kept as they are; UTF-8 validity is the
// runtime's to check.
func (r *reader) name() ([]byte, error) {
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	return r.bytes(n)
}

// Encoding.

func appendULEB(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func appendSLEB(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func appendName(b []byte, s string) []byte {
	b = appendULEB(b, uint64(len(s)))
	return append(b, s...)
}
