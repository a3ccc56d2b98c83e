package meter

import (
	"fmt"
	"github.com/loadout-dev/loadout/host/engine/internal/wasmbin"
	"math"
)

// rewriteCode appends the code section with every function body instrumented.
func (in *instrumenter) rewriteCode(out []byte, r *reader) ([]byte, error) {
	n, err := r.Count(2)
	if err != nil {
		return nil, fmt.Errorf("section %d: %w", wasmbin.SecCode, err)
	}
	// The section's size is known only once its bodies are written: write them after a
	// 5-byte placeholder for the size and move them back if the size takes fewer bytes.
	out = append(out, wasmbin.SecCode)
	sizeAt := len(out)
	out = append(out, 0, 0, 0, 0, 0)
	out = wasmbin.AppendULEB(out, uint64(n))
	for i := range n {
		fn := in.funcImports + i // the function's index in the input
		size, err := r.U32()
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", fn, err)
		}
		body, err := r.Bytes(size)
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", fn, err)
		}
		if in.scratch, err = in.body(in.scratch[:0], i, &reader{wasmbin.Reader{B: body}}); err != nil {
			return nil, fmt.Errorf("function %d: %w", fn, err)
		}
		out = wasmbin.AppendULEB(out, uint64(len(in.scratch)))
		out = append(out, in.scratch...)
	}
	if !r.Done() {
		return nil, fmt.Errorf("section %d: %w", wasmbin.SecCode, r.Fail("%d trailing bytes", r.Rest()))
	}
	total := len(out) - sizeAt - 5
	if uint64(total) > 0xffffffff {
		return nil, fmt.Errorf("code section of %d bytes: %w", total, wasmbin.ErrMalformed)
	}
	enc := wasmbin.AppendULEB(nil, uint64(total))
	copy(out[sizeAt:], enc)
	copy(out[sizeAt+len(enc):], out[sizeAt+5:])
	return out[:len(out)-(5-len(enc))], nil
}

// Opcodes the rewrite looks at.
const (
	opLoop               = 0x03
	opCall               = 0x10
	opReturnCall         = 0x12
	opCallIndirect       = 0x11
	opReturnCallIndirect = 0x13
	opRefFunc            = 0xd2
	opGlobalGet          = 0x23
	opGlobalSet          = 0x24
	opMemoryGrow         = 0x40
	opPrefixFC           = 0xfc
	opPrefixFD           = 0xfd
)

// globalIdx reads a global index and refuses one past the input's globals (the budget's).
func (in *instrumenter) globalIdx(r *reader) error {
	idx, err := r.U32()
	if err != nil {
		return err
	}
	if idx >= in.budget {
		return r.Fail("global %d of a module with %d", idx, in.budget)
	}
	return nil
}

// body appends one instrumented function body (locals, then instructions) to out; fn is the
// function's index among the defined functions.
func (in *instrumenter) body(out []byte, fn uint32, r *reader) ([]byte, error) {
	if fn >= uint32(len(in.funcTypes)) {
		return nil, r.Fail("code for function %d, which the function section does not declare", in.funcImports+fn)
	}
	typ := in.funcTypes[fn]
	if typ >= uint32(len(in.params)) {
		return nil, r.Fail("function of type %d, out of range", typ)
	}
	// The locals, and the index of one more, the scratch local of the bulk charges.
	n, err := r.Count(2)
	if err != nil {
		return nil, err
	}
	scratch := uint64(in.params[typ])
	for range n {
		c, err := r.U32()
		if err != nil {
			return nil, err
		}
		scratch += uint64(c)
		if scratch >= math.MaxUint32 {
			return nil, r.Fail("more than %d locals", uint32(math.MaxUint32))
		}
		t, err := r.Byte()
		if err != nil {
			return nil, err
		}
		if !wasmbin.IsValueType(t) {
			return nil, r.Fail("local of type %#x", t)
		}
	}
	locals := r.B[:r.Off]
	// The instructions go to in.code, the locals in front of them once it is known whether
	// the scratch local is used.
	code := in.code[:0]
	// The entry check bounds recursion. A body that reaches a loop before anything else is
	// charged by the loop's check; a body that calls nothing cannot recurse and runs in time
	// bounded by its size (its loops and bulk instructions are charged on their own). The
	// check is written first and taken out again once the body turns out to call nothing.
	entry := !reachesLoop(&reader{wasmbin.Reader{B: r.B, Off: r.Off}})
	if entry {
		code = append(code, in.check...)
	}
	calls, usesScratch := false, false
	for !r.Done() {
		start := r.Off
		op, _ := r.Byte()
		switch op {
		case opCall, opReturnCall, opRefFunc:
			calls = calls || op != opRefFunc
			if code, err = in.funcIdx(r, append(code, op)); err != nil {
				return nil, err
			}
			continue
		case opCallIndirect, opReturnCallIndirect:
			calls = true
		case opGlobalGet, opGlobalSet:
			// The budget takes the first global index past the module's own: an access to it
			// is invalid in the input and would be valid in the output, letting a guest refill
			// its budget and never yield. Refuse every index past the input's globals.
			if err := in.globalIdx(r); err != nil {
				return nil, err
			}
			code = append(code, r.B[start:r.Off]...)
			continue
		case opLoop:
			if err := blockType(r); err != nil {
				return nil, err
			}
			code = append(code, r.B[start:r.Off]...)
			code = append(code, in.check...)
			continue
		case opMemoryGrow:
			code = append(code, in.bulk...)
		case opPrefixFC:
			sub, err := r.U32()
			if err != nil {
				return nil, err
			}
			charge, err := prefixFC(r, sub)
			if err != nil {
				return nil, err
			}
			switch charge {
			case chargeBytes:
				usesScratch = true
				code = in.byteCharge(code, uint32(scratch))
			case chargeBulk:
				code = append(code, in.bulk...)
			}
			code = append(code, r.B[start:r.Off]...)
			continue
		}
		if err := immediates(r, op); err != nil {
			return nil, err
		}
		code = append(code, r.B[start:r.Off]...)
	}
	if entry && !calls {
		code = code[:copy(code, code[len(in.check):])]
	}
	in.code = code
	if !usesScratch {
		out = append(out, locals...)
		return append(out, code...), nil
	}
	out = wasmbin.AppendULEB(out, uint64(n)+1)
	out = append(out, locals[(&reader{wasmbin.Reader{B: locals}}).lebLen():]...)
	out = append(out, 1, wasmbin.TypeI32)
	return append(out, code...), nil
}

// lebLen returns the length of the LEB128 number at the reader's position (already read once,
// so well formed).
func (r *reader) lebLen() int {
	n := 0
	for r.Off+n < len(r.B) && r.B[r.Off+n]&0x80 != 0 {
		n++
	}
	return n + 1
}

// byteCharge appends the check charging 1 + n/BytesPerStep steps before memory.copy,
// memory.fill or memory.init, whose byte count n is on top of the operand stack; the scratch
// local holds a copy of it.
//
//	local.tee $scratch
//	global.get $budget; local.get $scratch; i32.const log2(BytesPerStep); i32.shr_u; i32.sub
//	i32.const 1; i32.sub; global.set $budget; ... then as checkCode
func (in *instrumenter) byteCharge(code []byte, scratch uint32) []byte {
	code = wasmbin.AppendULEB(append(code, 0x22), uint64(scratch))
	code = wasmbin.AppendULEB(append(code, 0x23), uint64(in.budget))
	code = wasmbin.AppendULEB(append(code, 0x20), uint64(scratch))
	code = append(code, 0x41, bytesPerStepLog2, 0x76, 0x6b)
	return append(code, in.check[len(wasmbin.AppendULEB([]byte{0x23}, uint64(in.budget))):]...)
}

// reachesLoop reports whether every run of a body reaches a loop, and so its check, before it
// can call a function, branch or return: the body starts with instructions that neither
// branch nor call (blocks may open, and nothing closes) and then a loop. Go's wasm output
// starts every function with a loop reached this way. Such a body needs no entry check:
// recursion through it is charged by the loop's check.
func reachesLoop(r *reader) bool {
	for !r.Done() {
		op, _ := r.Byte()
		switch {
		case op == opLoop:
			return true
		case op == 0x01, op == 0x02, op == 0x1a, op == 0x1b, // nop, block, drop, select
			op >= 0x20 && op <= 0x24, // local.get/set/tee, global.get/set
			op >= 0x28 && op <= 0x3e, // loads and stores
			op >= 0x41 && op <= 0xc4: // constants and numeric instructions
			if immediates(r, op) != nil {
				return false
			}
		default:
			return false
		}
	}
	return false
}

// blockType reads the block type of block, loop or if: empty (0x40), one value type, or a
// type index as a non-negative 33-bit signed number (multi-value).
func blockType(r *reader) error {
	c, err := r.Peek()
	if err != nil {
		return err
	}
	if c == 0x40 || wasmbin.IsValueType(c) {
		r.Off++
		return nil
	}
	v, err := r.SLEB(33)
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
	align, err := r.U32()
	if err != nil {
		return err
	}
	if align&0x40 != 0 { // a memory index follows
		return fmt.Errorf("memory argument with a memory index (multiple memories): %w", errUnsupported)
	}
	_, err = r.U32()
	return err
}

// u32s reads n unsigned 32-bit immediates.
func u32s(r *reader, n int) error {
	for range n {
		if _, err := r.U32(); err != nil {
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
		n, err := r.Count(1)
		if err != nil {
			return err
		}
		return u32s(r, int(n)+1)
	case op == 0x11, op == 0x13: // call_indirect, return_call_indirect: type, table
		return u32s(r, 2)
	case op == 0x1c: // select with types
		n, err := r.Count(1)
		if err != nil {
			return err
		}
		for range n {
			t, err := r.Byte()
			if err != nil {
				return err
			}
			if !wasmbin.IsValueType(t) {
				return r.Fail("select of type %#x", t)
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
		_, err := r.SLEB(32)
		return err
	case op == 0x42:
		_, err := r.SLEB(64)
		return err
	case op == 0x43:
		_, err := r.Bytes(4)
		return err
	case op == 0x44:
		_, err := r.Bytes(8)
		return err
	case op >= 0x45 && op <= 0xc4: // numeric instructions, sign extension included
		return nil
	case op == 0xd0: // ref.null
		t, err := r.Byte()
		if err != nil {
			return err
		}
		if !wasmbin.IsRefType(t) {
			return fmt.Errorf("ref.null of heap type %#x (typed function references or GC): %w", t, errUnsupported)
		}
		return nil
	case op == 0xd1: // ref.is_null
		return nil
	case op == opPrefixFD:
		sub, err := r.U32()
		if err != nil {
			return err
		}
		return prefixFD(r, sub)
	}
	if name, ok := unsupportedOps[op]; ok {
		return fmt.Errorf("at byte %d: opcode %#x, %s: %w", r.Off-1, op, name, errUnsupported)
	}
	return r.Fail("unknown opcode %#x", op)
}

// memIdx reads a memory index; only memory 0 exists without multiple memories.
func memIdx(r *reader) error {
	idx, err := r.U32()
	if err != nil {
		return err
	}
	if idx != 0 {
		return fmt.Errorf("memory index %d (multiple memories): %w", idx, errUnsupported)
	}
	return nil
}

// What an 0xfc instruction is charged.
const (
	chargeNone  = iota
	chargeBytes // memory.copy, memory.fill, memory.init: 1 + n/BytesPerStep steps
	chargeBulk  // table.init, table.copy, table.grow, table.fill: BulkCost steps
)

// prefixFC reads the immediates of 0xfc sub: saturating truncation (0-7), bulk memory and
// table instructions (8-17). It reports what the instruction is charged.
func prefixFC(r *reader, sub uint32) (charge int, err error) {
	switch sub {
	case 0, 1, 2, 3, 4, 5, 6, 7: // saturating truncation
		return chargeNone, nil
	case 8: // memory.init data memory
		if err := u32s(r, 1); err != nil {
			return 0, err
		}
		return chargeBytes, memIdx(r)
	case 9: // data.drop data
		return chargeNone, u32s(r, 1)
	case 10: // memory.copy memory memory
		if err := memIdx(r); err != nil {
			return 0, err
		}
		return chargeBytes, memIdx(r)
	case 11: // memory.fill memory
		return chargeBytes, memIdx(r)
	case 12, 14: // table.init elem table, table.copy table table
		return chargeBulk, u32s(r, 2)
	case 13, 16: // elem.drop elem, table.size table
		return chargeNone, u32s(r, 1)
	case 15, 17: // table.grow table, table.fill table
		return chargeBulk, u32s(r, 1)
	}
	return 0, fmt.Errorf("at byte %d: opcode 0xfc %d: %w", r.Off, sub, errUnsupported)
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
		_, err := r.Bytes(16)
		return err
	case sub >= 21 && sub <= 34: // extract_lane, replace_lane
		_, err := r.Byte()
		return err
	case sub >= 84 && sub <= 91: // v128.load*_lane, v128.store*_lane
		if err := memarg(r); err != nil {
			return err
		}
		_, err := r.Byte()
		return err
	case sub == 92, sub == 93: // v128.load32_zero, v128.load64_zero
		return memarg(r)
	case sub <= 255 && !simdGaps[sub]:
		return nil
	}
	return fmt.Errorf("at byte %d: opcode 0xfd %d (relaxed SIMD or unassigned): %w", r.Off, sub, errUnsupported)
}
