package wasmbin

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLEB(t *testing.T) {
	cases := []struct {
		name   string
		in     []byte
		signed bool
		bits   uint
		want   int64
		ok     bool
	}{
		{"u32 zero", []byte{0}, false, 32, 0, true},
		{"u32 max", []byte{0xff, 0xff, 0xff, 0xff, 0x0f}, false, 32, 0xffffffff, true},
		{"u32 over 32 bits", []byte{0xff, 0xff, 0xff, 0xff, 0x1f}, false, 32, 0, false},
		{"u32 six bytes", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, false, 32, 0, false},
		{"u32 padded zero", []byte{0x80, 0x80, 0x00}, false, 32, 0, true},
		{"u32 truncated", []byte{0x80}, false, 32, 0, false},
		{"s32 -1", []byte{0x7f}, true, 32, -1, true},
		{"s32 min", []byte{0x80, 0x80, 0x80, 0x80, 0x78}, true, 32, -1 << 31, true},
		{"s32 max", []byte{0xff, 0xff, 0xff, 0xff, 0x07}, true, 32, 1<<31 - 1, true},
		{"s32 over 32 bits", []byte{0xff, 0xff, 0xff, 0xff, 0x0f}, true, 32, 0, false},
		{"s32 bad sign bits", []byte{0x80, 0x80, 0x80, 0x80, 0x70}, true, 32, 0, false},
		{"s64 min", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f}, true, 64, -1 << 63, true},
		{"s64 max", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00}, true, 64, 1<<63 - 1, true},
		{"s64 over 64 bits", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, true, 64, 0, false},
		{"s64 eleven bytes", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, true, 64, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &Reader{B: tc.in}
			var got int64
			var err error
			if tc.signed {
				got, err = r.SLEB(tc.bits)
			} else {
				var u uint64
				u, err = r.ULEB(tc.bits)
				got = int64(u)
			}
			if !tc.ok {
				assert.ErrorIs(t, err, ErrMalformed, "LEB128 % x (signed %v, %d bits)", tc.in, tc.signed, tc.bits)
				return
			}
			require.NoError(t, err, "LEB128 % x (signed %v, %d bits)", tc.in, tc.signed, tc.bits)
			assert.Equal(t, tc.want, got, "LEB128 % x", tc.in)
			assert.True(t, r.Done(), "LEB128 % x should consume every byte", tc.in)
		})
	}
}

func TestLEBEncodeRoundTrip(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 63, 64, -64, -65, 1<<31 - 1, -1 << 31, 1<<63 - 1, -1 << 63} {
		r := &Reader{B: appendSLEB(nil, v)}
		got, err := r.SLEB(64)
		require.NoError(t, err, "sleb(appendSLEB(%d))", v)
		assert.Equal(t, v, got, "signed LEB128 round trip")
		if v >= 0 {
			r := &Reader{B: binary.AppendUvarint(nil, uint64(v))}
			got, err := r.ULEB(64)
			require.NoError(t, err, "uleb(AppendUvarint(%d))", v)
			assert.Equal(t, uint64(v), got, "unsigned LEB128 round trip")
		}
	}
}

func TestCountRefusesVectorsLongerThanTheInput(t *testing.T) {
	r := &Reader{B: append(binary.AppendUvarint(nil, 1000), make([]byte, 10)...)}
	_, err := r.Count(1)
	assert.ErrorIs(t, err, ErrMalformed, "Count of 1000 one-byte entries in 10 bytes")
	r = &Reader{B: append(binary.AppendUvarint(nil, 10), make([]byte, 10)...)}
	n, err := r.Count(1)
	require.NoError(t, err, "Count of 10 one-byte entries in 10 bytes")
	assert.Equal(t, uint32(10), n, "Count")
}

func TestNameAndBytesStayInBounds(t *testing.T) {
	r := &Reader{B: appendName(nil, "loadout")}
	got, err := r.Name()
	require.NoError(t, err, "Name of an encoded name")
	assert.Equal(t, "loadout", string(got), "Name")
	assert.True(t, r.Done(), "Name consumes the name")
	r = &Reader{B: []byte{5, 'a', 'b'}}
	_, err = r.Name()
	assert.ErrorIs(t, err, ErrMalformed, "Name longer than the input")
	_, err = (&Reader{}).Byte()
	assert.ErrorIs(t, err, ErrMalformed, "Byte at the end")
}

func TestConstInstr(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		op   byte
		used int // bytes consumed
		ok   bool
	}{
		{"end", []byte{0x0b}, 0x0b, 1, true},
		{"i32.const", []byte{0x41, 0x7f}, 0x41, 2, true},
		{"i64.const", []byte{0x42, 0x80, 0x01}, 0x42, 3, true},
		{"f32.const", []byte{0x43, 1, 2, 3, 4}, 0x43, 5, true},
		{"f64.const", []byte{0x44, 1, 2, 3, 4, 5, 6, 7, 8}, 0x44, 9, true},
		{"global.get", []byte{0x23, 3}, 0x23, 2, true},
		{"ref.null funcref", []byte{0xd0, TypeFuncref}, 0xd0, 2, true},
		{"ref.func stops before its index", []byte{0xd2, 5}, 0xd2, 1, true},
		{"i32.add (extended constants)", []byte{0x6a}, 0x6a, 1, true},
		{"v128.const", append([]byte{0xfd, 12}, make([]byte, 16)...), 0xfd, 18, true},
		{"ref.null of a value type", []byte{0xd0, TypeI32}, 0, 0, false},
		{"other SIMD opcode", []byte{0xfd, 13}, 0, 0, false},
		{"local.get is not constant", []byte{0x20, 0}, 0, 0, false},
		{"f64.const cut short", []byte{0x44, 1, 2}, 0, 0, false},
		{"nothing", nil, 0, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &Reader{B: tc.in}
			op, err := r.ConstInstr()
			if !tc.ok {
				assert.ErrorIs(t, err, ErrMalformed, "ConstInstr(% x)", tc.in)
				return
			}
			require.NoError(t, err, "ConstInstr(% x)", tc.in)
			assert.Equal(t, tc.op, op, "ConstInstr(% x) opcode", tc.in)
			assert.Equal(t, tc.used, r.Off, "ConstInstr(% x) consumed bytes", tc.in)
		})
	}
}

// appendSLEB appends v in signed LEB128 (encoding/binary's unsigned varint is LEB128; its
// signed one is zigzag-encoded, not LEB128).
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

// appendName appends s as a length-prefixed name.
func appendName(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}
