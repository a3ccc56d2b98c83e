// Package meter instruments a WebAssembly module so that a runtime without preemption can stop
// it: the module itself counts its steps and, every Interval steps, calls a host function, where
// the host checks the deadline and stops the guest. wazero stops a spinning guest only with
// WithCloseOnContextDone(true), which makes its compiler exit native code to Go at every
// function entry and loop header; a Go plugin has a loop in every function and renders about 5x
// slower with it. The counter costs a few instructions in native code instead, and leaves
// native code only once per Interval steps.
//
// # What Instrument adds
//
//   - One imported function, ImportModule.ImportName ("loadout:meter"."yield"), of type
//     () -> (), placed after the module's other function imports. Every defined function's
//     index moves up by one; Instrument rewrites every reference (call, return_call, ref.func,
//     constant expressions, element segments, exports, the start section and the "name"
//     section's function, local and label names). The import is named
//     "loadout:meter.yield" in the name section when the module has function names.
//   - One mutable i32 global, the budget, appended after the module's other globals (no global
//     index moves), initialised to Interval.
//   - A check at the start of every function body that calls a function (unless every run of
//     the body reaches a loop first, whose check then runs at once, as in every function of
//     Go's wasm output) and right after every loop's block type: the budget is decreased by
//     one step and, when it reaches zero or below, it is set back to Interval and the yield
//     import is called. A body that calls nothing gets no entry check: it cannot recurse, and
//     its time is bounded by its size and its own loops' checks.
//   - Before memory.copy, memory.fill and memory.init, a check that charges 1 +
//     n/BytesPerStep steps, n being the byte count on top of the operand stack (copied with
//     local.tee to one i32 local appended to the function's locals). Before memory.grow,
//     table.init, table.copy, table.grow and table.fill, a check that charges
//     BulkCost(Interval) steps, so a loop of them yields at least every 8 iterations.
//
// Every check leaves the operand stack as it was and touches no local of the input.
//
// A step is thus one function entry or one loop iteration, or a slice of a bulk instruction. A
// guest cannot run long without calling yield: straight-line code is bounded by the body size,
// loops, recursion and bulk instructions by the budget. Interval trades the cost of a yield
// (one call out to Go) against how late a deadline is noticed: at DefaultInterval the claude
// plugin yields about every 100 microseconds of rendering, and a bare (loop br 0) about every
// 7 microseconds; the yields cost the claude plugin nothing measurable (Interval 100_000
// renders as fast).
//
// # What the host must do
//
// The host defines a function ImportModule.ImportName of type () -> () and instantiates it
// before the instrumented module. Each call is a preemption point of the goroutine running the
// guest. The function checks the call's deadline (the context it receives) and, when the
// deadline has passed or the call was cancelled, stops the guest; on wazero that is
//
//	panic(sys.NewExitError(sys.ExitCodeDeadlineExceeded))
//
// (or any other panic value: wazero recovers a host function's panic and returns it from the
// exported function's Call as the error; an ExitError comes back as itself, so
// errors.As(err, *sys.ExitError) reports the code). Otherwise it returns and the guest goes on
// with a fresh budget. The runtime need not be built WithCloseOnContextDone(true): the
// metering replaces it, at a fraction of its cost (see BenchmarkRender).
//
// # Where it goes in an engine
//
// Instrument runs on the module the runtime compiles: after preinit.Prepare (a snapshot runs
// _initialize on its own runtime, which has no yield import, and preinit.Check would count the
// extra local against its limit), before CompileModule. The engine's import check must let
// ImportModule.ImportName of type () -> () through; the sandbox's WASI module stays the only
// import a plugin may declare itself, since Instrument refuses any input import from
// ImportModule. The instrumented bytes can be cached with the compiled code: Instrument is
// deterministic for given bytes and Options.
//
// Instrument refuses a module that already imports from ImportModule (engine.ErrLink), and any
// instruction, type or section of a feature outside WebAssembly 2.0 (wazero's
// api.CoreFeaturesV2) other than tail calls and extended constant expressions, which it
// handles (engine.ErrABI). It reads untrusted bytes: it is bounds-checked, never panics, and
// allocates about the size of its output, at most a small multiple of its input (see
// MaxGrowth). It is a pure function, safe for concurrent use, and deterministic.
//
// Custom sections that describe code offsets (".debug_*" DWARF sections and
// "sourceMappingURL") are dropped: the inserted checks move every instruction, so they would
// point at the wrong code. Every other custom section is kept as it is.
package meter

import (
	"bytes"
	"fmt"
	"math"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/internal/wasmbin"
)

// The import Instrument adds: module ImportModule, name ImportName, type () -> ().
const (
	ImportModule = "loadout:meter"
	ImportName   = "yield"
)

// Version names Instrument's output format. It changes whenever Instrument may produce other
// bytes for the same input and options, so a cache of instrumented modules keyed by it never
// serves a stale result.
const Version = 3

// DefaultInterval is Interval when Options leaves it zero: steps between two yields.
const DefaultInterval = 10_000

// MaxInterval is the largest Interval: the budget is an i32 that must not overflow.
const MaxInterval = math.MaxInt32 / 2

// MaxGrowth bounds the output: len(out) <= MaxGrowth*len(in) + 256. The worst input is a body
// of 2-byte loop headers or memory.grow instructions, each followed by a check of up to 49
// bytes when the indices it names take 5 bytes; real modules grow by a few percent (the claude
// plugin by 3%).
const MaxGrowth = 32

// Options configures Instrument. The zero value uses DefaultInterval.
type Options struct {
	// Interval is the number of steps (function entries and loop iterations) between two
	// calls of the yield import, in [1, MaxInterval]; 0 means DefaultInterval.
	Interval int32
}

// BytesPerStep is what memory.copy, memory.fill and memory.init are charged: one step, plus
// one per BytesPerStep bytes they move (about the time of a step of a Go plugin's code).
const BytesPerStep = 1 << bytesPerStepLog2

const bytesPerStepLog2 = 6

// BulkCost is the number of steps charged before memory.grow, table.init, table.copy,
// table.grow and table.fill: Interval/8, at least 1, so that a loop of them yields at least
// every 8 iterations.
func BulkCost(interval int32) int32 { return max(1, interval/8) }

// secTag and kindTag are the section id and the import/export kind of the exception-handling
// proposal's tags, which Instrument refuses.
const (
	secTag  = 13
	kindTag = 0x04
)

// sectionRank is the position a non-custom section must keep in a module (the data count
// section sits between the element and code sections).
var sectionRank = [...]int{
	wasmbin.SecType: 1, wasmbin.SecImport: 2, wasmbin.SecFunction: 3, wasmbin.SecTable: 4, wasmbin.SecMemory: 5, wasmbin.SecGlobal: 6,
	wasmbin.SecExport: 7, wasmbin.SecStart: 8, wasmbin.SecElement: 9, wasmbin.SecDataCount: 10, wasmbin.SecCode: 11, wasmbin.SecData: 12,
}

var magic = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

// section is one section of a module as read.
type section struct {
	id   byte
	body []byte
}

// instrumenter holds what the rewrite of one module needs; it lives for one Instrument call.
type instrumenter struct {
	wasm       []byte // the input
	lastRanked int    // ordinal of the input's last non-custom section, -1 for none

	funcImports   uint32 // imported functions in the input: the yield import's index
	globalImports uint32
	globals       uint32 // defined globals in the input
	types         uint32 // function types in the input
	yieldType     uint32 // index of the () -> () type
	addType       bool   // the () -> () type is appended
	hasType       bool   // the input has a type section
	hasImport     bool
	hasGlobal     bool

	interval int32
	check    []byte // the check charging one step
	bulk     []byte // the check charging BulkCost steps
	budget   uint32 // the budget global's index
	scratch  []byte // one rewritten function body
	code     []byte // its instructions

	params    []uint32 // parameter count of each function type
	funcTypes []uint32 // type index of each defined function
}

// Instrument returns wasm with the metering described in the package doc. Errors wrap
// engine.ErrABI (bytes it cannot read, features it does not support) or engine.ErrLink (the
// module already imports from ImportModule).
func Instrument(wasm []byte, opts Options) ([]byte, error) {
	interval := opts.Interval
	if interval == 0 {
		interval = DefaultInterval
	}
	if interval < 1 || interval > MaxInterval {
		return nil, fmt.Errorf("meter: interval %d outside [1, %d]", interval, MaxInterval)
	}
	in := &instrumenter{interval: interval}
	if err := in.read(wasm); err != nil {
		return nil, err
	}
	in.budget = in.globalImports + in.globals
	if in.globals >= math.MaxUint32-in.globalImports || in.funcImports == math.MaxUint32 || in.types == math.MaxUint32 {
		return nil, fmt.Errorf("index space full: %w", wasmbin.ErrMalformed)
	}
	in.check = checkCode(in.budget, in.funcImports, 1, interval)
	in.bulk = checkCode(in.budget, in.funcImports, BulkCost(interval), interval)
	return in.write(len(wasm))
}

// checkCode returns the instruction sequence that charges cost steps to the budget global and
// calls the yield function once the budget is spent:
//
//	global.get $budget; i32.const cost; i32.sub; global.set $budget
//	global.get $budget; i32.const 0; i32.le_s
//	if; i32.const interval; global.set $budget; call $yield; end
func checkCode(budget, yield uint32, cost, interval int32) []byte {
	b := wasmbin.AppendULEB([]byte{0x23}, uint64(budget))
	b = wasmbin.AppendSLEB(append(b, 0x41), int64(cost))
	b = wasmbin.AppendULEB(append(b, 0x6b, 0x24), uint64(budget))
	b = wasmbin.AppendULEB(append(b, 0x23), uint64(budget))
	b = append(b, 0x41, 0x00, 0x4c, 0x04, 0x40)
	b = wasmbin.AppendSLEB(append(b, 0x41), int64(interval))
	b = wasmbin.AppendULEB(append(b, 0x24), uint64(budget))
	b = wasmbin.AppendULEB(append(b, 0x10), uint64(yield))
	return append(b, 0x0b)
}

// read splits the module into sections, checks their order, and reads what the rewrite needs
// to know before it starts: the function types, the imports and the number of globals.
func (in *instrumenter) read(wasm []byte) error {
	if len(wasm) < len(magic) || !bytes.Equal(wasm[:len(magic)], magic) {
		return fmt.Errorf("not a WebAssembly 1.0 binary: %w", wasmbin.ErrMalformed)
	}
	in.wasm, in.lastRanked = wasm, -1
	r := &reader{wasmbin.Reader{B: wasm, Off: len(magic)}}
	last := 0
	for i := 0; !r.Done(); i++ {
		s, err := nextSection(r)
		if err != nil {
			return err
		}
		id, body := s.id, s.body
		if id != wasmbin.SecCustom {
			in.lastRanked = i
			if id == secTag {
				return fmt.Errorf("tag section (exception handling): %w", errUnsupported)
			}
			if int(id) >= len(sectionRank) {
				return r.Fail("unknown section id %d", id)
			}
			rank := sectionRank[id]
			if rank <= last {
				return r.Fail("section id %d out of order or repeated", id)
			}
			last = rank
		}
		sr := &reader{wasmbin.Reader{B: body}}
		switch id {
		case wasmbin.SecType:
			in.hasType = true
			err = in.readTypes(sr)
		case wasmbin.SecImport:
			in.hasImport = true
			err = in.readImports(sr)
		case wasmbin.SecFunction:
			err = in.readFunctions(sr)
		case wasmbin.SecGlobal:
			in.hasGlobal = true
			in.globals, err = sr.U32()
		}
		if err != nil {
			return fmt.Errorf("section %d: %w", id, err)
		}
	}
	if !in.hasType {
		in.addType = true
	}
	return nil
}

// nextSection reads one section's id and body.
func nextSection(r *reader) (section, error) {
	id, err := r.Byte()
	if err != nil {
		return section{}, err
	}
	size, err := r.U32()
	if err != nil {
		return section{}, err
	}
	body, err := r.Bytes(size)
	return section{id: id, body: body}, err
}

// readTypes counts the function types and finds the first () -> () one.
func (in *instrumenter) readTypes(r *reader) error {
	n, err := r.Count(3)
	if err != nil {
		return err
	}
	in.types = n
	in.addType = true
	in.params = make([]uint32, 0, n)
	for i := range n {
		form, err := r.Byte()
		if err != nil {
			return err
		}
		if form != 0x60 {
			return fmt.Errorf("type %d of form %#x (GC types): %w", i, form, errUnsupported)
		}
		var lens [2]uint32
		for j := range lens { // parameters, then results
			if lens[j], err = r.Count(1); err != nil {
				return err
			}
			for range lens[j] {
				t, err := r.Byte()
				if err != nil {
					return err
				}
				if !wasmbin.IsValueType(t) {
					return r.Fail("value type %#x", t)
				}
			}
		}
		in.params = append(in.params, lens[0])
		if in.addType && lens == [2]uint32{} {
			in.addType = false
			in.yieldType = i
		}
	}
	if !r.Done() {
		return r.Fail("%d trailing bytes", r.Rest())
	}
	if in.addType {
		in.yieldType = n
	}
	return nil
}

// readFunctions reads the type index of every defined function.
func (in *instrumenter) readFunctions(r *reader) error {
	n, err := r.Count(1)
	if err != nil {
		return err
	}
	in.funcTypes = make([]uint32, 0, n)
	for range n {
		t, err := r.U32()
		if err != nil {
			return err
		}
		in.funcTypes = append(in.funcTypes, t)
	}
	if !r.Done() {
		return r.Fail("%d trailing bytes", r.Rest())
	}
	return nil
}

// readImports counts the imported functions and globals and refuses ImportModule.
func (in *instrumenter) readImports(r *reader) error {
	n, err := r.Count(4)
	if err != nil {
		return err
	}
	for range n {
		mod, err := r.Name()
		if err != nil {
			return err
		}
		name, err := r.Name()
		if err != nil {
			return err
		}
		if string(mod) == ImportModule {
			return fmt.Errorf("import %s.%s: module %q is reserved for the metering: %w", mod, name, ImportModule, engine.ErrLink)
		}
		if err := in.importDesc(r, mod, name); err != nil {
			return err
		}
	}
	if !r.Done() {
		return r.Fail("%d trailing bytes", r.Rest())
	}
	return nil
}

func (in *instrumenter) importDesc(r *reader, mod, name []byte) error {
	kind, err := r.Byte()
	if err != nil {
		return err
	}
	switch kind {
	case wasmbin.KindFunc:
		if _, err := r.U32(); err != nil {
			return err
		}
		in.funcImports++
		if in.funcImports == 0 {
			return r.Fail("function index space full")
		}
	case wasmbin.KindTable:
		return tableType(r)
	case wasmbin.KindMemory:
		return memoryType(r)
	case wasmbin.KindGlobal:
		t, err := r.Byte()
		if err != nil {
			return err
		}
		if !wasmbin.IsValueType(t) {
			return r.Fail("global of value type %#x", t)
		}
		if mut, err := r.Byte(); err != nil {
			return err
		} else if mut > 1 {
			return r.Fail("global mutability %d", mut)
		}
		in.globalImports++
		if in.globalImports == 0 {
			return r.Fail("global index space full")
		}
	case kindTag:
		return fmt.Errorf("import %s.%s of a tag (exception handling): %w", mod, name, errUnsupported)
	default:
		return r.Fail("import %s.%s of unknown kind %d", mod, name, kind)
	}
	return nil
}

// limits reads table or memory limits whose flags were already read: the minimum and, when
// flags has bit 0, the maximum.
func limits(r *reader, flags byte) error {
	if _, err := r.U32(); err != nil {
		return err
	}
	if flags&1 != 0 {
		_, err := r.U32()
		return err
	}
	return nil
}

func tableType(r *reader) error {
	t, err := r.Byte()
	if err != nil {
		return err
	}
	if !wasmbin.IsRefType(t) {
		return r.Fail("table of type %#x", t)
	}
	flags, err := r.Byte()
	if err != nil {
		return err
	}
	if flags > 1 {
		return fmt.Errorf("table limits flags %#x (64-bit or shared tables): %w", flags, errUnsupported)
	}
	return limits(r, flags)
}

func memoryType(r *reader) error {
	flags, err := r.Byte()
	if err != nil {
		return err
	}
	// Bit 1 is a shared memory (threads), bit 2 a 64-bit memory, bit 3 a custom page size.
	if flags > 1 {
		return fmt.Errorf("memory limits flags %#x (shared, 64-bit or custom-page memory): %w", flags, errUnsupported)
	}
	return limits(r, flags)
}

// shift maps a function index of the input to the output: the yield import takes index
// funcImports, so every defined function moves up by one.
func (in *instrumenter) shift(idx uint32) uint32 {
	if idx < in.funcImports {
		return idx
	}
	return idx + 1
}

// funcIdx reads a function index and appends it, shifted, to out.
func (in *instrumenter) funcIdx(r *reader, out []byte) ([]byte, error) {
	idx, err := r.U32()
	if err != nil {
		return nil, err
	}
	if idx == math.MaxUint32 {
		return nil, r.Fail("function index %d", idx)
	}
	return wasmbin.AppendULEB(out, uint64(in.shift(idx))), nil
}

// write emits the instrumented module. Sections the input lacks (type, import, global) are
// inserted at their rank, before the first section that ranks after them, or right after the
// last non-custom section.
func (in *instrumenter) write(size int) ([]byte, error) {
	out := make([]byte, 0, size+size/4+256)
	out = append(out, magic...)
	pending := map[byte]bool{wasmbin.SecType: !in.hasType, wasmbin.SecImport: !in.hasImport, wasmbin.SecGlobal: !in.hasGlobal}
	var err error
	flush := func(before int) {
		for _, id := range []byte{wasmbin.SecType, wasmbin.SecImport, wasmbin.SecGlobal} {
			if pending[id] && sectionRank[id] < before && err == nil {
				pending[id] = false
				out, err = in.section(out, section{id: id})
			}
		}
	}
	if in.lastRanked < 0 {
		flush(math.MaxInt)
	}
	// The sections are read again: read checked them, and keeping them would cost memory
	// proportional to their number.
	r := &reader{wasmbin.Reader{B: in.wasm, Off: len(magic)}}
	for i := 0; !r.Done(); i++ {
		var s section
		if s, err = nextSection(r); err != nil {
			return nil, err
		}
		if s.id != wasmbin.SecCustom {
			flush(sectionRank[s.id])
		}
		if err == nil {
			out, err = in.section(out, s)
		}
		if i == in.lastRanked {
			flush(math.MaxInt)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(out) > MaxGrowth*size+256 {
		return nil, fmt.Errorf("instrumented module of %d bytes from %d: %w", len(out), size, wasmbin.ErrMalformed)
	}
	return out, nil
}

// section appends the rewritten section s (an empty body stands for a section the input
// lacks) to out.
func (in *instrumenter) section(out []byte, s section) ([]byte, error) {
	r := &reader{wasmbin.Reader{B: s.body}}
	var body []byte
	var err error
	switch s.id {
	case wasmbin.SecCustom:
		return in.custom(out, s)
	case wasmbin.SecType:
		body, err = in.rewriteTypes(r)
	case wasmbin.SecImport:
		body, err = in.rewriteImports(r)
	case wasmbin.SecTable:
		body, err = in.rewriteTables(r)
	case wasmbin.SecGlobal:
		body, err = in.rewriteGlobals(r)
	case wasmbin.SecExport:
		body, err = in.rewriteExports(r)
	case wasmbin.SecStart:
		body, err = in.funcIdx(r, nil)
	case wasmbin.SecElement:
		body, err = in.rewriteElements(r)
	case wasmbin.SecCode:
		return in.rewriteCode(out, r)
	case wasmbin.SecMemory:
		body, err = in.checkMemories(r)
	default: // function, data count, data: no function or global index to move
		body, r.Off = s.body, len(s.body)
	}
	if err == nil && !r.Done() {
		err = r.Fail("%d trailing bytes", r.Rest())
	}
	if err != nil {
		return nil, fmt.Errorf("section %d: %w", s.id, err)
	}
	out = append(out, s.id)
	out = wasmbin.AppendULEB(out, uint64(len(body)))
	return append(out, body...), nil
}

func (in *instrumenter) rewriteTypes(r *reader) ([]byte, error) {
	if !in.addType {
		r.Off = len(r.B)
		return r.B, nil
	}
	body, err := growVector(r, in.hasType, 8)
	if err != nil {
		return nil, err
	}
	return append(body, 0x60, 0x00, 0x00), nil
}

// growVector returns a section body whose vector (read from r when the section exists) counts
// one more entry, with the existing entries copied and room for extra bytes: the caller
// appends the new entry.
func growVector(r *reader, exists bool, extra int) ([]byte, error) {
	var n uint32
	if exists {
		var err error
		if n, err = r.U32(); err != nil {
			return nil, err
		}
	}
	body := wasmbin.AppendULEB(make([]byte, 0, len(r.B)+extra), uint64(n)+1)
	body = append(body, r.B[r.Off:]...)
	r.Off = len(r.B)
	return body, nil
}

func (in *instrumenter) rewriteImports(r *reader) ([]byte, error) {
	body, err := growVector(r, in.hasImport, 32)
	if err != nil {
		return nil, err
	}
	body = wasmbin.AppendName(body, ImportModule)
	body = wasmbin.AppendName(body, ImportName)
	body = append(body, wasmbin.KindFunc)
	return wasmbin.AppendULEB(body, uint64(in.yieldType)), nil
}

func (in *instrumenter) checkMemories(r *reader) ([]byte, error) {
	n, err := r.Count(2)
	if err != nil {
		return nil, err
	}
	for range n {
		if err := memoryType(r); err != nil {
			return nil, err
		}
	}
	return r.B, nil
}

// rewriteTables moves the function indices of the initializer expressions of tables declared
// with one (0x40 0x00 prefix).
func (in *instrumenter) rewriteTables(r *reader) ([]byte, error) {
	n, err := r.Count(3)
	if err != nil {
		return nil, err
	}
	body := wasmbin.AppendULEB(make([]byte, 0, len(r.B)+8), uint64(n))
	for range n {
		start := r.Off
		c, err := r.Peek()
		if err != nil {
			return nil, err
		}
		if c == 0x40 {
			r.Off++
			if z, err := r.Byte(); err != nil {
				return nil, err
			} else if z != 0 {
				return nil, r.Fail("table with initializer, reserved byte %#x", z)
			}
			if err := tableType(r); err != nil {
				return nil, err
			}
			body = append(body, r.B[start:r.Off]...)
			if body, err = in.constExpr(r, body); err != nil {
				return nil, err
			}
			continue
		}
		if err := tableType(r); err != nil {
			return nil, err
		}
		body = append(body, r.B[start:r.Off]...)
	}
	return body, nil
}

// rewriteGlobals moves function indices in the initializers and appends the budget.
func (in *instrumenter) rewriteGlobals(r *reader) ([]byte, error) {
	var n uint32
	if in.hasGlobal {
		var err error
		if n, err = r.Count(3); err != nil {
			return nil, err
		}
	}
	body := wasmbin.AppendULEB(make([]byte, 0, len(r.B)+16), uint64(n)+1)
	for range n {
		t, err := r.Byte()
		if err != nil {
			return nil, err
		}
		if !wasmbin.IsValueType(t) {
			return nil, r.Fail("global of value type %#x", t)
		}
		mut, err := r.Byte()
		if err != nil {
			return nil, err
		}
		if mut > 1 {
			return nil, r.Fail("global mutability %d", mut)
		}
		body = append(body, t, mut)
		if body, err = in.constExpr(r, body); err != nil {
			return nil, err
		}
	}
	body = append(body, wasmbin.TypeI32, 0x01, 0x41)
	body = wasmbin.AppendSLEB(body, int64(in.interval))
	return append(body, 0x0b), nil
}

// constExpr reads a constant expression up to and including its end and appends it to out
// with its ref.func indices moved.
func (in *instrumenter) constExpr(r *reader, out []byte) ([]byte, error) {
	for {
		start := r.Off
		op, err := r.ConstInstr()
		if err != nil {
			return nil, err
		}
		switch op {
		case 0x0b: // end
			return append(out, op), nil
		case 0xd2: // ref.func
			if out, err = in.funcIdx(r, append(out, op)); err != nil {
				return nil, err
			}
		case 0x23: // global.get: never the budget (see body)
			ir := &reader{wasmbin.Reader{B: r.B[:r.Off], Off: start + 1}}
			if err := in.globalIdx(ir); err != nil {
				return nil, err
			}
			out = append(out, r.B[start:r.Off]...)
		default:
			out = append(out, r.B[start:r.Off]...)
		}
	}
}

func (in *instrumenter) rewriteExports(r *reader) ([]byte, error) {
	n, err := r.Count(3)
	if err != nil {
		return nil, err
	}
	body := wasmbin.AppendULEB(make([]byte, 0, len(r.B)+8), uint64(n))
	for range n {
		start := r.Off
		if _, err := r.Name(); err != nil {
			return nil, err
		}
		kind, err := r.Byte()
		if err != nil {
			return nil, err
		}
		body = append(body, r.B[start:r.Off]...)
		switch kind {
		case wasmbin.KindFunc:
			body, err = in.funcIdx(r, body)
		case wasmbin.KindTable, wasmbin.KindMemory, wasmbin.KindGlobal:
			start = r.Off
			if _, err = r.U32(); err == nil {
				body = append(body, r.B[start:r.Off]...)
			}
		case kindTag:
			err = fmt.Errorf("export of a tag (exception handling): %w", errUnsupported)
		default:
			err = r.Fail("export of unknown kind %d", kind)
		}
		if err != nil {
			return nil, err
		}
	}
	return body, nil
}

// rewriteElements moves the function indices of element segments, given as indices or as
// constant expressions. Flags: bit 0 passive or declarative, bit 1 explicit table index (when
// active) or declarative (when not), bit 2 expressions instead of indices.
func (in *instrumenter) rewriteElements(r *reader) ([]byte, error) {
	n, err := r.Count(3)
	if err != nil {
		return nil, err
	}
	body := wasmbin.AppendULEB(make([]byte, 0, len(r.B)+len(r.B)/8+8), uint64(n))
	for range n {
		flags, err := r.U32()
		if err != nil {
			return nil, err
		}
		if flags > 7 {
			return nil, r.Fail("element segment flags %d", flags)
		}
		body = append(body, byte(flags))
		if flags&1 == 0 { // active
			if flags&2 != 0 {
				start := r.Off
				if _, err := r.U32(); err != nil { // table index
					return nil, err
				}
				body = append(body, r.B[start:r.Off]...)
			}
			if body, err = in.constExpr(r, body); err != nil {
				return nil, err
			}
		}
		if flags&3 != 0 { // element kind (0x00, funcref) or reference type
			k, err := r.Byte()
			if err != nil {
				return nil, err
			}
			if flags&4 == 0 && k != 0x00 {
				return nil, r.Fail("element kind %#x", k)
			}
			if flags&4 != 0 && !wasmbin.IsRefType(k) {
				return nil, r.Fail("element reference type %#x", k)
			}
			body = append(body, k)
		}
		if flags&4 != 0 {
			k, err := r.Count(2)
			if err != nil {
				return nil, err
			}
			body = wasmbin.AppendULEB(body, uint64(k))
			for range k {
				if body, err = in.constExpr(r, body); err != nil {
					return nil, err
				}
			}
			continue
		}
		k, err := r.Count(1)
		if err != nil {
			return nil, err
		}
		body = wasmbin.AppendULEB(body, uint64(k))
		for range k {
			if body, err = in.funcIdx(r, body); err != nil {
				return nil, err
			}
		}
	}
	return body, nil
}

// droppedCustom reports whether a custom section describes code offsets, which the inserted
// checks invalidate.
func droppedCustom(name []byte) bool {
	return bytes.HasPrefix(name, []byte(".debug_")) || string(name) == "sourceMappingURL"
}

// custom appends a custom section: the "name" section with its function indices moved, a
// section describing code offsets not at all, any other as it is.
func (in *instrumenter) custom(out []byte, s section) ([]byte, error) {
	r := &reader{wasmbin.Reader{B: s.body}}
	name, err := r.Name()
	if err != nil {
		return nil, fmt.Errorf("custom section: %w", err)
	}
	switch {
	case droppedCustom(name):
		return out, nil
	case string(name) != "name":
		out = append(out, wasmbin.SecCustom)
		out = wasmbin.AppendULEB(out, uint64(len(s.body)))
		return append(out, s.body...), nil
	}
	body := make([]byte, 0, len(s.body)+32)
	body = append(body, s.body[:r.Off]...)
	if body, err = in.rewriteNames(r, body); err != nil {
		return nil, fmt.Errorf("name section: %w", err)
	}
	out = append(out, wasmbin.SecCustom)
	out = wasmbin.AppendULEB(out, uint64(len(body)))
	return append(out, body...), nil
}

// yieldName is the yield import's entry in the name section.
const yieldName = ImportModule + "." + ImportName

// rewriteNames rewrites the subsections of the "name" section keyed by function index:
// function names (1), local names (2) and label names (3). Others are kept as they are.
func (in *instrumenter) rewriteNames(r *reader, out []byte) ([]byte, error) {
	var sub []byte
	for !r.Done() {
		id, err := r.Byte()
		if err != nil {
			return nil, err
		}
		size, err := r.U32()
		if err != nil {
			return nil, err
		}
		payload, err := r.Bytes(size)
		if err != nil {
			return nil, err
		}
		sr := &reader{wasmbin.Reader{B: payload}}
		switch id {
		case 1:
			sub, err = in.rewriteFuncNames(sr, sub[:0])
		case 2, 3:
			sub, err = in.rewriteIndirectNames(sr, sub[:0])
		default:
			// A copy: sub is the next rewrite's buffer, and payload is the caller's input.
			sub, sr.Off = append(sub[:0], payload...), len(payload)
		}
		if err == nil && !sr.Done() {
			err = sr.Fail("%d trailing bytes", sr.Rest())
		}
		if err != nil {
			return nil, fmt.Errorf("subsection %d: %w", id, err)
		}
		out = append(out, id)
		out = wasmbin.AppendULEB(out, uint64(len(sub)))
		out = append(out, sub...)
	}
	return out, nil
}

// rewriteFuncNames moves the indices of a function name map and inserts the yield import's
// name in index order.
func (in *instrumenter) rewriteFuncNames(r *reader, out []byte) ([]byte, error) {
	n, err := r.Count(2)
	if err != nil {
		return nil, err
	}
	out = wasmbin.AppendULEB(out, uint64(n)+1)
	inserted := false
	for range n {
		start := r.Off
		idx, err := r.U32()
		if err != nil {
			return nil, err
		}
		if idx >= in.funcImports && !inserted {
			inserted = true
			out = wasmbin.AppendULEB(out, uint64(in.funcImports))
			out = wasmbin.AppendName(out, yieldName)
		}
		r.Off = start
		if out, err = in.funcIdx(r, out); err != nil {
			return nil, err
		}
		start = r.Off
		if _, err := r.Name(); err != nil {
			return nil, err
		}
		out = append(out, r.B[start:r.Off]...)
	}
	if !inserted {
		out = wasmbin.AppendULEB(out, uint64(in.funcImports))
		out = wasmbin.AppendName(out, yieldName)
	}
	return out, nil
}

// rewriteIndirectNames moves the function indices of an indirect name map (local or label
// names), keeping each inner name map as it is.
func (in *instrumenter) rewriteIndirectNames(r *reader, out []byte) ([]byte, error) {
	n, err := r.Count(2)
	if err != nil {
		return nil, err
	}
	out = wasmbin.AppendULEB(out, uint64(n))
	for range n {
		if out, err = in.funcIdx(r, out); err != nil {
			return nil, err
		}
		start := r.Off
		k, err := r.Count(2)
		if err != nil {
			return nil, err
		}
		for range k {
			if _, err := r.U32(); err != nil {
				return nil, err
			}
			if _, err := r.Name(); err != nil {
				return nil, err
			}
		}
		out = append(out, r.B[start:r.Off]...)
	}
	return out, nil
}
