package meter

import "fmt"

// rewriteCode appends the code section with every function body instrumented.
func (in *instrumenter) rewriteCode(out []byte, r *reader) ([]byte, error) {
	n, err := r.count(2)
	if err != nil {
		return nil, fmt.Errorf("section %d: %w", secCode, err)
	}
	// The section's size is known only once its bodies are written: write them after a
	// 5-byte placeholder for the size and move them back if the size takes fewer bytes.
	out = append(out, secCode)
	sizeAt := len(out)
	out = append(out, 0, 0, 0, 0, 0)
	out = appendULEB(out, uint64(n))
	for i := range n {
		fn := in.funcImports + i // the function's index in the input
		size, err := r.u32()
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", fn, err)
		}
		body, err := r.bytes(size)
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", fn, err)
		}
		if in.scratch, err = in.body(in.scratch[:0], &reader{b: body}); err != nil {
			return nil, fmt.Errorf("function %d: %w", fn, err)
		}
		out = appendULEB(out, uint64(len(in.scratch)))
		out = append(out, in.scratch...)
	}
	if !r.done() {
		return nil, fmt.Errorf("section %d: %w", secCode, r.fail("%d trailing bytes", r.rest()))
	}
	total := len(out) - sizeAt - 5
	if uint64(total) > 0xffffffff {
		return nil, fmt.Errorf("code section of %d bytes: %w", total, errMalformed)
	}
	enc := appendULEB(nil, uint64(total))
	copy(out[sizeAt:], enc)
	copy(out[sizeAt+len(enc):], out[sizeAt+5:])
	return out[:len(out)-(5-len(enc))], nil
}

// Opcodes the rewrite looks at.
const (
	opLoop       = 0x03
	opCall       = 0x10
	opReturnCall = 0x12
	opRefFunc    = 0xd2
	opMemoryGrow = 0x40
	opPrefixFC   = 0xfc
	opPrefixFD   = 0xfd
)

// body appends one instrumented function body (locals, then instructions) to out.
func (in *instrumenter) body(out []byte, r *reader) ([]byte, error) {
	n, err := r.count(2)
	if err != nil {
		return nil, err
	}
	for range n {
		if _, err := r.u32(); err != nil {
			return nil, err
		}
		t, err := r.byte()
		if err != nil {
			return nil, err
		}
		if !isValueType(t) {
			return nil, r.fail("local of type %#x", t)
		}
	}
	out = append(out, r.b[:r.off]...)
	// A body that starts with a loop is charged by the loop's check, which runs at once.
	if r.done() || r.b[r.off] != opLoop {
		out = append(out, in.check...)
	}
	for !r.done() {
		start := r.off
		op, _ := r.byte()
		switch op {
		case opCall, opReturnCall, opRefFunc:
			if out, err = in.funcIdx(r, append(out, op)); err != nil {
				return nil, err
			}
			continue
		case opLoop:
			if err := blockType(r); err != nil {
				return nil, err
			}
			out = append(out, r.b[start:r.off]...)
			out = append(out, in.check...)
			continue
		case opMemoryGrow:
			out = append(out, in.bulk...)
		case opPrefixFC:
			sub, err := r.u32()
			if err != nil {
				return nil, err
			}
			bulk, err := prefixFC(r, sub)
			if err != nil {
				return nil, err
			}
			if bulk {
				out = append(out, in.bulk...)
			}
			out = append(out, r.b[start:r.off]...)
			continue
		}
		if err := immediates(r, op); err != nil {
			return nil, err
		}
		out = append(out, r.b[start:r.off]...)
	}
	return out, nil
}

// blockType reads the block type of block, loop or if: empty (0x40), one value type, or a
// type index as a non-negative 33-bit signed number (multi-value).
func blockType(r *reader) error {
	c, err := r.peek()
	if err != nil {
		return err
	}
	if c == 0x40 || isValueType(c) {
		r.off++
		return nil
	}
	v, err := r.sleb(33)
	if err != nil {
		return err
	}
	if v < 0 {
		return fmt.Errorf("block type %#x (typed function references or GC): %w", c, errUnsupported)
	}
	return nil
}

// memarg reads a memory instruction's alignment and offset.
func memarg(r *reader) error {
	align, err := r.u32()
	if err != nil {
		return err
	}
	if align&0x40 != 0 { // a memory index follows
		return fmt.Errorf("memory argument with a memory index (multiple memories): %w", errUnsupported)
	}
	_, err = r.u32()
	return err
}

// u32s reads n unsigned 32-bit immediates.
func u32s(r *reader, n int) error {
	for range n {
		if _, err := r.u32(); err != nil {
			return err
		}
	}
	return nil
}

// unsupportedOps names the single-byte opcodes of features Instrument does not handle.
var unsupportedOps = map[byte]string{
	0x06: "try (exception handling)", 0x07: "catch (exception handling)",
	0x08: "throw (exception handling)", 0x09: "rethrow (exception handling)",
	0x0a: "throw_ref (exception handling)", 0x14: "call_ref (typed function references)",
	0x15: "return_call_ref (typed function references)", 0x18: "delegate (exception handling)",
	0x19: "catch_all (exception handling)", 0x1f: "try_table (exception handling)",
	0xd3: "ref.eq (GC)", 0xd4: "ref.as_non_null (typed function references)",
	0xd5: "br_on_null (typed function references)", 0xd6: "br_on_non_null (typed function references)",
	0xfb: "GC prefix", 0xfe: "threads prefix",
}

// immediates reads the immediates of a one-byte opcode (the prefixes 0xfc and 0xfd included
// for 0xfd; 0xfc is read by prefixFC).
func immediates(r *reader, op byte) error {
	switch {
	case op == 0x00, op == 0x01, op == 0x05, op == 0x0b, op == 0x0f, op == 0x1a, op == 0x1b:
		// unreachable, nop, else, end, return, drop, select
		return nil
	case op == 0x02, op == 0x04: // block, if
		return blockType(r)
	case op == 0x0c, op == 0x0d: // br, br_if
		return u32s(r, 1)
	case op == 0x0e: // br_table
		n, err := r.count(1)
		if err != nil {
			return err
		}
		return u32s(r, int(n)+1)
	case op == 0x11, op == 0x13: // call_indirect, return_call_indirect: type, table
		return u32s(r, 2)
	case op == 0x1c: // select with types
		n, err := r.count(1)
		if err != nil {
			return err
		}
		for range n {
			t, err := r.byte()
			if err != nil {
				return err
			}
			if !isValueType(t) {
				return r.fail("select of type %#x", t)
			}
		}
		return nil
	case op >= 0x20 && op <= 0x26: // local.get/set/tee, global.get/set, table.get/set
		return u32s(r, 1)
	case op >= 0x28 && op <= 0x3e: // loads and stores
		return memarg(r)
	case op == 0x3f, op == 0x40: // memory.size, memory.grow: memory index
		return memIdx(r)
	case op == 0x41:
		_, err := r.sleb(32)
		return err
	case op == 0x42:
		_, err := r.sleb(64)
		return err
	case op == 0x43:
		_, err := r.bytes(4)
		return err
	case op == 0x44:
		_, err := r.bytes(8)
		return err
	case op >= 0x45 && op <= 0xc4: // numeric instructions, sign extension included
		return nil
	case op == 0xd0: // ref.null
		t, err := r.byte()
		if err != nil {
			return err
		}
		if !isRefType(t) {
			return fmt.Errorf("ref.null of heap type %#x (typed function references or GC): %w", t, errUnsupported)
		}
		return nil
	case op == 0xd1: // ref.is_null
		return nil
	case op == opPrefixFD:
		sub, err := r.u32()
		if err != nil {
			return err
		}
		return prefixFD(r, sub)
	}
	if name, ok := unsupportedOps[op]; ok {
		return fmt.Errorf("at byte %d: opcode %#x, %s: %w", r.off-1, op, name, errUnsupported)
	}
	return r.fail("unknown opcode %#x", op)
}

// memIdx reads a memory index; only memory 0 exists without multiple memories.
func memIdx(r *reader) error {
	idx, err := r.u32()
	if err != nil {
		return err
	}
	if idx != 0 {
		return fmt.Errorf("memory index %d (multiple memories): %w", idx, errUnsupported)
	}
	return nil
}

// prefixFC reads the immediates of 0xfc sub: saturating truncation (0-7), bulk memory and
// table instructions (8-17). It reports whether the instruction's cost grows with its
// operands.
func prefixFC(r *reader, sub uint32) (bulk bool, err error) {
	switch sub {
	case 0, 1, 2, 3, 4, 5, 6, 7: // saturating truncation
		return false, nil
	case 8: // memory.init data memory
		if err := u32s(r, 1); err != nil {
			return false, err
		}
		return true, memIdx(r)
	case 9: // data.drop data
		return false, u32s(r, 1)
	case 10: // memory.copy memory memory
		if err := memIdx(r); err != nil {
			return false, err
		}
		return true, memIdx(r)
	case 11: // memory.fill memory
		return true, memIdx(r)
	case 12, 14: // table.init elem table, table.copy table table
		return true, u32s(r, 2)
	case 13, 16: // elem.drop elem, table.size table
		return false, u32s(r, 1)
	case 15, 17: // table.grow table, table.fill table
		return true, u32s(r, 1)
	}
	return false, fmt.Errorf("at byte %d: opcode 0xfc %d: %w", r.off, sub, errUnsupported)
}

// simdGaps are the SIMD opcodes below 256 that WebAssembly 2.0 leaves unassigned.
var simdGaps = map[uint32]bool{
	154: true, 162: true, 165: true, 166: true, 175: true, 176: true, 178: true, 179: true,
	180: true, 187: true, 194: true, 197: true, 198: true, 207: true, 208: true, 210: true,
	211: true, 212: true, 226: true, 238: true,
}

// prefixFD reads the immediates of the SIMD instruction 0xfd sub.
func prefixFD(r *reader, sub uint32) error {
	switch {
	case sub <= 11: // v128.load*, v128.store
		return memarg(r)
	case sub == 12, sub == 13: // v128.const, i8x16.shuffle
		_, err := r.bytes(16)
		return err
	case sub >= 21 && sub <= 34: // extract_lane, replace_lane
		_, err := r.byte()
		return err
	case sub >= 84 && sub <= 91: // v128.load*_lane, v128.store*_lane
		if err := memarg(r); err != nil {
			return err
		}
		_, err := r.byte()
		return err
	case sub == 92, sub == 93: // v128.load32_zero, v128.load64_zero
		return memarg(r)
	case sub <= 255 && !simdGaps[sub]:
		return nil
	}
	return fmt.Errorf("at byte %d: opcode 0xfd %d (relaxed SIMD or unassigned): %w", r.off, sub, errUnsupported)
}
