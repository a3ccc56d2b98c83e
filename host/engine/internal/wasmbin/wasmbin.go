// Package wasmbin reads the WebAssembly binary format where untrusted bytes meet the engines:
// Check walks a whole module with a bounds-checked Reader before a runtime decodes it. It keeps
// no state; a Reader belongs to one goroutine, Check is safe for concurrent use.
package wasmbin

import (
	"fmt"

	"github.com/loadout-dev/loadout/host/engine"
)

// ErrMalformed is wrapped by every error of a Reader; it matches engine.ErrABI, as an engine's
// compile error does.
var ErrMalformed = fmt.Errorf("malformed module: %w", engine.ErrABI)

// Section ids of the WebAssembly core binary format.
const (
	SecCustom    = 0
	SecType      = 1
	SecImport    = 2
	SecFunction  = 3
	SecTable     = 4
	SecMemory    = 5
	SecGlobal    = 6
	SecExport    = 7
	SecStart     = 8
	SecElement   = 9
	SecCode      = 10
	SecData      = 11
	SecDataCount = 12
)

// Reader is a bounds-checked cursor over B from offset Off. Every method fails, with an error
// wrapping ErrMalformed, instead of reading past the end.
type Reader struct {
	B   []byte
	Off int
}

// Fail returns an error at the current offset.
func (r *Reader) Fail(format string, args ...any) error {
	return fmt.Errorf("at byte %d: %s: %w", r.Off, fmt.Sprintf(format, args...), ErrMalformed)
}

// Done reports whether every byte has been read.
func (r *Reader) Done() bool { return r.Off >= len(r.B) }

// Rest is the number of bytes left.
func (r *Reader) Rest() int { return len(r.B) - r.Off }

// Byte reads one byte.
func (r *Reader) Byte() (byte, error) {
	if r.Off >= len(r.B) {
		return 0, r.Fail("unexpected end")
	}
	c := r.B[r.Off]
	r.Off++
	return c, nil
}

// Bytes reads n bytes, returned as a subslice of B.
func (r *Reader) Bytes(n uint32) ([]byte, error) {
	if uint64(n) > uint64(r.Rest()) {
		return nil, r.Fail("%d bytes wanted, %d left", n, r.Rest())
	}
	s := r.B[r.Off : r.Off+int(n)]
	r.Off += int(n)
	return s, nil
}

// ULEB reads an unsigned LEB128 number of at most bits bits, refusing overlong encodings whose
// unused bits are set.
func (r *Reader) ULEB(bits uint) (uint64, error) {
	var v uint64
	var shift uint
	for i := 0; ; i++ {
		c, err := r.Byte()
		if err != nil {
			return 0, err
		}
		if i == int((bits+6)/7)-1 && c>>(bits-shift) != 0 {
			return 0, r.Fail("LEB128 number over %d bits", bits)
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, nil
		}
		shift += 7
	}
}

// SLEB reads a signed LEB128 number of at most bits bits.
func (r *Reader) SLEB(bits uint) (int64, error) {
	var v int64
	var shift uint
	for i := 0; ; i++ {
		c, err := r.Byte()
		if err != nil {
			return 0, err
		}
		if i == int((bits+6)/7)-1 {
			// The unused bits must all repeat the sign bit, and the number must end here.
			rest := bits - shift // bits still to fill, 1..7
			if c&0x80 != 0 {
				return 0, r.Fail("LEB128 number over %d bits", bits)
			}
			if rest < 7 {
				sign := c >> (rest - 1) & 0x7f // sign bit and the unused bits above it
				if sign != 0 && sign != 0x7f>>(rest-1) {
					return 0, r.Fail("LEB128 number over %d bits", bits)
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

// U32 reads an unsigned 32-bit LEB128 number.
func (r *Reader) U32() (uint32, error) {
	v, err := r.ULEB(32)
	return uint32(v), err
}

// Count reads a vector length and checks that the rest of the input could hold that many
// entries of at least min bytes each, so that a hostile count can make the caller neither
// allocate nor loop for long.
func (r *Reader) Count(min int) (uint32, error) {
	n, err := r.U32()
	if err != nil {
		return 0, err
	}
	if uint64(n)*uint64(min) > uint64(r.Rest()) {
		return 0, r.Fail("vector of %d entries in %d bytes", n, r.Rest())
	}
	return n, nil
}

// Name reads a length-prefixed name, as bytes: whether it must be UTF-8 is the caller's rule.
func (r *Reader) Name() ([]byte, error) {
	n, err := r.U32()
	if err != nil {
		return nil, err
	}
	return r.Bytes(n)
}

// Value types.
const (
	TypeI32       = 0x7f
	TypeI64       = 0x7e
	TypeF32       = 0x7d
	TypeF64       = 0x7c
	TypeV128      = 0x7b
	TypeFuncref   = 0x70
	TypeExternref = 0x6f
)

// IsValueType reports whether t is a value type of WebAssembly 2.0.
func IsValueType(t byte) bool {
	switch t {
	case TypeI32, TypeI64, TypeF32, TypeF64, TypeV128, TypeFuncref, TypeExternref:
		return true
	}
	return false
}

// IsRefType reports whether t is a reference type.
func IsRefType(t byte) bool { return t == TypeFuncref || t == TypeExternref }

// External kinds of imports and exports.
const (
	KindFunc   = 0x00
	KindTable  = 0x01
	KindMemory = 0x02
	KindGlobal = 0x03
)

// ConstInstr reads one instruction of a constant expression and returns its opcode: 0x0b for
// the expression's end; for ref.func (0xd2) it stops before the function index, which the
// caller reads (and may rewrite); for every other constant instruction it reads the
// immediates too. Anything that may not appear in a constant expression is an error.
func (r *Reader) ConstInstr() (byte, error) {
	op, err := r.Byte()
	if err != nil {
		return 0, err
	}
	switch op {
	case 0x0b, 0xd2: // end, ref.func
	case 0x41: // i32.const
		_, err = r.SLEB(32)
	case 0x42: // i64.const
		_, err = r.SLEB(64)
	case 0x43: // f32.const
		_, err = r.Bytes(4)
	case 0x44: // f64.const
		_, err = r.Bytes(8)
	case 0x23: // global.get
		_, err = r.U32()
	case 0xd0: // ref.null
		var t byte
		if t, err = r.Byte(); err == nil && !IsRefType(t) {
			err = r.Fail("ref.null of type %#x", t)
		}
	case 0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e: // extended constants: i32/i64 add, sub, mul
	case 0xfd: // v128.const
		var sub uint32
		if sub, err = r.U32(); err == nil {
			if sub != 12 {
				return 0, r.Fail("SIMD opcode %d in a constant expression", sub)
			}
			_, err = r.Bytes(16)
		}
	default:
		return 0, r.Fail("opcode %#x in a constant expression", op)
	}
	return op, err
}
