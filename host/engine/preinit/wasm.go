package preinit

import (
	"encoding/binary"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/internal/wasmbin"
)

// sectionRank is the position a non-custom section must keep in a module (the data count
// section sits between the element and code sections).
var sectionRank = map[byte]int{
	wasmbin.SecType: 1, wasmbin.SecImport: 2, wasmbin.SecFunction: 3, wasmbin.SecTable: 4, wasmbin.SecMemory: 5, wasmbin.SecGlobal: 6,
	wasmbin.SecExport: 7, wasmbin.SecStart: 8, wasmbin.SecElement: 9, wasmbin.SecDataCount: 10, wasmbin.SecCode: 11, wasmbin.SecData: 12,
}

// reader is wasmbin's bounds-checked cursor, with preinit's own helpers (a UTF-8 name,
// constant expressions, limits, name maps). Every error of the binary reader wraps
// wasmbin.ErrMalformed, which matches engine.ErrABI, as an engine's compile error does.
type reader struct{ wasmbin.Reader }

func (r *reader) name() (string, error) {
	n, err := r.U32()
	if err != nil {
		return "", err
	}
	b, err := r.Bytes(n)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", r.Fail("name is not UTF-8")
	}
	return string(b), nil
}

// section is one section of a module, its body kept as it was read.
type section struct {
	id   byte
	body []byte
}

// global is one defined global.
type global struct {
	typ  byte
	mut  bool
	init []byte // the constant expression, "end" included
}

// export is one export entry.
type export struct {
	name string
	kind byte
	idx  uint32
}

// limits are a memory's page limits.
type limits struct {
	min, max uint32
	hasMax   bool
}

// module is a parsed module: its sections in order, and the parts Snapshot reads or rewrites.
type module struct {
	sections  []section
	globals   []global
	memory    *limits // nil when the module defines no memory
	exports   []export
	hasStart  bool
	dataCount bool
	passive   bool // some data segment is passive
	dataSegs  uint32
}

var magic = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

// parse reads a module's sections and decodes the ones Snapshot needs. It refuses what it does
// not understand and what Snapshot cannot carry over: imported memories, tables or globals,
// more than one memory, shared or 64-bit memories, and unknown sections.
func parse(b []byte) (*module, error) {
	if len(b) < len(magic) || string(b[:len(magic)]) != string(magic) {
		return nil, fmt.Errorf("not a WebAssembly 1.0 binary: %w", wasmbin.ErrMalformed)
	}
	r := &reader{wasmbin.Reader{B: b, Off: len(magic)}}
	m := &module{}
	last := 0
	for !r.Done() {
		id, err := r.Byte()
		if err != nil {
			return nil, err
		}
		size, err := r.U32()
		if err != nil {
			return nil, err
		}
		body, err := r.Bytes(size)
		if err != nil {
			return nil, err
		}
		if id != wasmbin.SecCustom {
			rank, ok := sectionRank[id]
			if !ok {
				return nil, r.Fail("unknown section id %d", id)
			}
			if rank <= last {
				return nil, r.Fail("section id %d out of order or repeated", id)
			}
			last = rank
		}
		m.sections = append(m.sections, section{id: id, body: body})
		sr := &reader{wasmbin.Reader{B: body}}
		switch id {
		case wasmbin.SecCustom:
			var name string
			if name, err = sr.name(); err == nil {
				if name == "name" {
					err = checkNames(sr)
				}
				sr.Off = len(body) // the payload is kept verbatim
			}
		case wasmbin.SecType:
			err = checkTypes(sr)
		case wasmbin.SecTable:
			err = checkTables(sr)
		case wasmbin.SecElement:
			err = checkElements(sr)
		case wasmbin.SecCode:
			err = checkCode(sr)
		case wasmbin.SecImport:
			err = m.parseImports(sr)
		case wasmbin.SecFunction:
			if _, err = sr.Count(1); err == nil {
				sr.Off = len(body) // type indices, checked by the runtime
			}
		case wasmbin.SecMemory:
			err = m.parseMemory(sr)
		case wasmbin.SecGlobal:
			err = m.parseGlobals(sr)
		case wasmbin.SecExport:
			err = m.parseExports(sr)
		case wasmbin.SecStart:
			m.hasStart = true
			_, err = sr.U32()
		case wasmbin.SecDataCount:
			m.dataCount = true
			_, err = sr.U32()
		case wasmbin.SecData:
			err = m.parseData(sr)
		default:
			sr.Off = len(body) // kept verbatim, checked by the runtime
		}
		if err != nil {
			return nil, fmt.Errorf("section %d: %w", id, err)
		}
		if !sr.Done() {
			return nil, fmt.Errorf("section %d: %w", id, sr.Fail("%d trailing bytes", len(body)-sr.Off))
		}
	}
	return m, nil
}

func (m *module) parseImports(r *reader) error {
	n, err := r.Count(4)
	if err != nil {
		return err
	}
	for range n {
		mod, err := r.name()
		if err != nil {
			return err
		}
		name, err := r.name()
		if err != nil {
			return err
		}
		kind, err := r.Byte()
		if err != nil {
			return err
		}
		if kind != wasmbin.KindFunc {
			return fmt.Errorf("import %s.%s: only functions may be imported (kind %d): %w", mod, name, kind, engine.ErrLink)
		}
		if _, err := r.U32(); err != nil {
			return err
		}
	}
	return nil
}

func (m *module) parseMemory(r *reader) error {
	n, err := r.Count(2)
	if err != nil {
		return err
	}
	if n > 1 {
		return fmt.Errorf("%d memories, want at most one: %w", n, engine.ErrABI)
	}
	if n == 0 {
		return nil
	}
	flags, err := r.Byte()
	if err != nil {
		return err
	}
	if flags > 1 {
		return fmt.Errorf("memory limits flags %#x (shared or 64-bit memory): %w", flags, engine.ErrABI)
	}
	l := &limits{hasMax: flags == 1}
	if l.min, err = r.U32(); err != nil {
		return err
	}
	if l.hasMax {
		if l.max, err = r.U32(); err != nil {
			return err
		}
		if l.max < l.min {
			return r.Fail("memory maximum %d below its minimum %d", l.max, l.min)
		}
	}
	m.memory = l
	return nil
}

func (m *module) parseGlobals(r *reader) error {
	n, err := r.Count(4)
	if err != nil {
		return err
	}
	m.globals = make([]global, 0, n)
	for range n {
		var g global
		if g.typ, err = r.Byte(); err != nil {
			return err
		}
		switch g.typ {
		case wasmbin.TypeI32, wasmbin.TypeI64, wasmbin.TypeF32, wasmbin.TypeF64, wasmbin.TypeV128, wasmbin.TypeFuncref, wasmbin.TypeExternref:
		default:
			return r.Fail("global of unknown type %#x", g.typ)
		}
		mut, err := r.Byte()
		if err != nil {
			return err
		}
		if mut > 1 {
			return r.Fail("global mutability %d", mut)
		}
		g.mut = mut == 1
		if g.init, err = r.constExpr(); err != nil {
			return err
		}
		m.globals = append(m.globals, g)
	}
	return nil
}

// constExpr reads a constant expression up to and including its "end" and returns its bytes.
func (r *reader) constExpr() ([]byte, error) {
	start := r.Off
	for {
		op, err := r.ConstInstr()
		if err != nil {
			return nil, err
		}
		switch op {
		case 0x0b: // end
			return r.B[start:r.Off], nil
		case 0xd2: // ref.func
			if _, err := r.U32(); err != nil {
				return nil, err
			}
		}
	}
}

func (m *module) parseExports(r *reader) error {
	n, err := r.Count(3)
	if err != nil {
		return err
	}
	seen := make(map[string]bool, n)
	m.exports = make([]export, 0, n)
	for range n {
		var e export
		if e.name, err = r.name(); err != nil {
			return err
		}
		if seen[e.name] {
			return r.Fail("duplicate export %q", e.name)
		}
		seen[e.name] = true
		if e.kind, err = r.Byte(); err != nil {
			return err
		}
		if e.kind > wasmbin.KindGlobal {
			return r.Fail("export %q of unknown kind %d", e.name, e.kind)
		}
		if e.idx, err = r.U32(); err != nil {
			return err
		}
		m.exports = append(m.exports, e)
	}
	return nil
}

func (m *module) parseData(r *reader) error {
	n, err := r.Count(3)
	if err != nil {
		return err
	}
	m.dataSegs = n
	for range n {
		flags, err := r.U32()
		if err != nil {
			return err
		}
		switch flags {
		case 0: // active, memory 0
			if _, err := r.constExpr(); err != nil {
				return err
			}
		case 1: // passive
			m.passive = true
		case 2: // active, explicit memory
			if _, err := r.U32(); err != nil {
				return err
			}
			if _, err := r.constExpr(); err != nil {
				return err
			}
		default:
			return r.Fail("data segment flags %d", flags)
		}
		size, err := r.U32()
		if err != nil {
			return err
		}
		if _, err := r.Bytes(size); err != nil {
			return err
		}
	}
	return nil
}

// The check* functions walk sections Snapshot keeps verbatim, only to refuse vector counts and
// sizes the rest of the input cannot hold before the bytes reach a runtime's decoder (wazero
// v1.12 allocates a vector's declared length before reading it: a 400-byte module declaring a
// function type with 2^31 parameters, or a function with 2^32 locals, exhausts the host's
// memory).

// MaxLocals is the most locals one function may declare, as in the wasm-tools validator and
// the web embedding.
const MaxLocals = 50000

func checkTypes(r *reader) error {
	n, err := r.Count(3)
	if err != nil {
		return err
	}
	for range n {
		form, err := r.Byte()
		if err != nil {
			return err
		}
		if form != 0x60 {
			return r.Fail("type form %#x, want a function type", form)
		}
		for range 2 { // parameters, then results
			k, err := r.Count(1)
			if err != nil {
				return err
			}
			for range k {
				t, err := r.Byte()
				if err != nil {
					return err
				}
				if !wasmbin.IsValueType(t) {
					return r.Fail("value type %#x", t)
				}
			}
		}
	}
	return nil
}

func (r *reader) limits() error {
	flags, err := r.Byte()
	if err != nil {
		return err
	}
	if flags > 1 {
		return r.Fail("limits flags %#x", flags)
	}
	if _, err := r.U32(); err != nil {
		return err
	}
	if flags == 1 {
		_, err = r.U32()
	}
	return err
}

func checkTables(r *reader) error {
	n, err := r.Count(3)
	if err != nil {
		return err
	}
	for range n {
		t, err := r.Byte()
		if err != nil {
			return err
		}
		if t != wasmbin.TypeFuncref && t != wasmbin.TypeExternref {
			return r.Fail("table of type %#x", t)
		}
		if err := r.limits(); err != nil {
			return err
		}
	}
	return nil
}

func checkElements(r *reader) error {
	n, err := r.Count(3)
	if err != nil {
		return err
	}
	for range n {
		flags, err := r.U32()
		if err != nil {
			return err
		}
		if flags > 7 {
			return r.Fail("element segment flags %d", flags)
		}
		if flags&1 == 0 { // active
			if flags&2 != 0 {
				if _, err := r.U32(); err != nil { // table index
					return err
				}
			}
			if _, err := r.constExpr(); err != nil {
				return err
			}
		}
		exprs := flags&4 != 0
		if flags&3 != 0 { // element kind or reference type
			if _, err := r.Byte(); err != nil {
				return err
			}
		}
		if exprs {
			k, err := r.Count(2)
			if err != nil {
				return err
			}
			for range k {
				if _, err := r.constExpr(); err != nil {
					return err
				}
			}
			continue
		}
		k, err := r.Count(1)
		if err != nil {
			return err
		}
		for range k {
			if _, err := r.U32(); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkCode(r *reader) error {
	n, err := r.Count(2)
	if err != nil {
		return err
	}
	for range n {
		size, err := r.U32()
		if err != nil {
			return err
		}
		body, err := r.Bytes(size)
		if err != nil {
			return err
		}
		br := &reader{wasmbin.Reader{B: body}}
		k, err := br.Count(2)
		if err != nil {
			return err
		}
		var locals uint64
		for range k {
			c, err := br.U32()
			if err != nil {
				return err
			}
			locals += uint64(c)
			if locals > MaxLocals {
				return br.Fail("more than %d locals", MaxLocals)
			}
			t, err := br.Byte()
			if err != nil {
				return err
			}
			if !wasmbin.IsValueType(t) {
				return br.Fail("local of type %#x", t)
			}
		}
	}
	return nil
}

// checkNames walks the "name" custom section: module name (0), function names (1) and local
// names (2); other subsections are skipped by their size.
func checkNames(r *reader) error {
	for !r.Done() {
		id, err := r.Byte()
		if err != nil {
			return err
		}
		size, err := r.U32()
		if err != nil {
			return err
		}
		body, err := r.Bytes(size)
		if err != nil {
			return err
		}
		sr := &reader{wasmbin.Reader{B: body}}
		switch id {
		case 0:
			_, err = sr.name()
		case 1:
			err = sr.nameMap()
		case 2:
			var k uint32
			if k, err = sr.Count(2); err == nil {
				for range k {
					if _, err = sr.U32(); err != nil {
						break
					}
					if err = sr.nameMap(); err != nil {
						break
					}
				}
			}
		default:
			sr.Off = len(body)
		}
		if err != nil {
			return fmt.Errorf("name subsection %d: %w", id, err)
		}
		if !sr.Done() {
			return fmt.Errorf("name subsection %d: %w", id, sr.Fail("%d trailing bytes", len(body)-sr.Off))
		}
	}
	return nil
}

func (r *reader) nameMap() error {
	k, err := r.Count(2)
	if err != nil {
		return err
	}
	for range k {
		if _, err := r.U32(); err != nil {
			return err
		}
		if _, err := r.name(); err != nil {
			return err
		}
	}
	return nil
}

// Encoding.

// constFor returns the constant expression that yields raw, a value as wazero reports it (the
// bits of the value, zero-extended to 64 bits), for a global of type typ.
func constFor(typ byte, raw uint64) []byte {
	switch typ {
	case wasmbin.TypeI32:
		return append(wasmbin.AppendSLEB([]byte{0x41}, int64(int32(uint32(raw)))), 0x0b)
	case wasmbin.TypeI64:
		return append(wasmbin.AppendSLEB([]byte{0x42}, int64(raw)), 0x0b)
	case wasmbin.TypeF32:
		b := binary.LittleEndian.AppendUint32([]byte{0x43}, uint32(raw))
		return append(b, 0x0b)
	case wasmbin.TypeF64:
		b := binary.LittleEndian.AppendUint64([]byte{0x44}, raw)
		return append(b, 0x0b)
	}
	panic(fmt.Sprintf("preinit: no constant for type %#x", typ))
}

func encodeGlobals(gs []global) []byte {
	b := wasmbin.AppendULEB(nil, uint64(len(gs)))
	for _, g := range gs {
		mut := byte(0)
		if g.mut {
			mut = 1
		}
		b = append(b, g.typ, mut)
		b = append(b, g.init...)
	}
	return b
}

func encodeExports(es []export) []byte {
	b := wasmbin.AppendULEB(nil, uint64(len(es)))
	for _, e := range es {
		b = wasmbin.AppendName(b, e.name)
		b = append(b, e.kind)
		b = wasmbin.AppendULEB(b, uint64(e.idx))
	}
	return b
}

func encodeMemory(l limits) []byte {
	b := []byte{1}
	if l.hasMax {
		b = append(b, 1)
		b = wasmbin.AppendULEB(b, uint64(l.min))
		return wasmbin.AppendULEB(b, uint64(l.max))
	}
	b = append(b, 0)
	return wasmbin.AppendULEB(b, uint64(l.min))
}

// segment is an active data segment of memory 0.
type segment struct {
	off  uint32
	data []byte
}

func encodeData(segs []segment) []byte {
	n := 8
	for _, s := range segs {
		n += len(s.data) + 16
	}
	b := make([]byte, 0, n)
	b = wasmbin.AppendULEB(b, uint64(len(segs)))
	for _, s := range segs {
		b = append(b, 0x00, 0x41)
		b = wasmbin.AppendSLEB(b, int64(int32(s.off)))
		b = append(b, 0x0b)
		b = wasmbin.AppendULEB(b, uint64(len(s.data)))
		b = append(b, s.data...)
	}
	return b
}

// encode writes a module from its sections: a section whose id is in replace gets that body
// instead (and is dropped when the body is nil); a replacement for a section the module lacks
// is inserted at its rank.
func encode(sections []section, replace map[byte][]byte) []byte {
	size := len(magic)
	for _, s := range sections {
		size += len(s.body) + 6
	}
	for _, b := range replace {
		size += len(b) + 6
	}
	out := make([]byte, 0, size)
	out = append(out, magic...)
	put := func(id byte, body []byte) {
		out = append(out, id)
		out = wasmbin.AppendULEB(out, uint64(len(body)))
		out = append(out, body...)
	}
	done := map[byte]bool{}
	// insertBefore emits the pending replacements that rank before rank.
	insertBefore := func(rank int) {
		for id := byte(1); id <= wasmbin.SecDataCount; id++ {
			body, ok := replace[id]
			if ok && !done[id] && body != nil && sectionRank[id] < rank {
				done[id] = true
				put(id, body)
			}
		}
	}
	// A replacement for a missing section goes right after the last section ranked before it,
	// so it lands before any custom section that follows (such as "name").
	lastRank := 0
	for _, s := range sections {
		if s.id != wasmbin.SecCustom {
			lastRank = max(lastRank, sectionRank[s.id])
		}
	}
	for _, s := range sections {
		if s.id != wasmbin.SecCustom {
			insertBefore(sectionRank[s.id])
			if body, ok := replace[s.id]; ok {
				done[s.id] = true
				if body != nil {
					put(s.id, body)
				}
			} else {
				put(s.id, s.body)
			}
			if sectionRank[s.id] == lastRank {
				insertBefore(math.MaxInt)
			}
			continue
		}
		put(s.id, s.body)
	}
	insertBefore(math.MaxInt)
	return out
}
