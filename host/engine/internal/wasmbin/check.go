package wasmbin

import (
	"fmt"
	"unicode/utf8"

	"github.com/loadout-dev/loadout/host/engine"
)

// sectionRank is the position a non-custom section must keep in a module (the data count
// section sits between the element and code sections).
var sectionRank = map[byte]int{
	SecType: 1, SecImport: 2, SecFunction: 3, SecTable: 4, SecMemory: 5, SecGlobal: 6,
	SecExport: 7, SecStart: 8, SecElement: 9, SecDataCount: 10, SecCode: 11, SecData: 12,
}

// reader is wasmbin's bounds-checked cursor, with the helpers Check needs (a UTF-8 name,
// constant expressions, limits, name maps). Every error of the binary reader wraps
// ErrMalformed, which matches engine.ErrABI, as an engine's compile error does.
type reader struct{ Reader }

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

var magic = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

// Check reads a whole module with the bounded Reader without running or compiling anything. It
// refuses a malformed binary, unknown or misordered sections, vector counts and sizes the input
// cannot hold, a function with more than MaxLocals locals, and what no engine links: imports
// other than functions, several memories, shared or 64-bit memories. Every engine calls it
// before its runtime decodes untrusted bytes: wazero v1.12 allocates a vector's declared length
// before reading it, so a 373-byte module declaring a function type with 2^31 parameters makes
// its CompileModule ask for 24 GiB and the Go runtime abort the whole process. Errors wrap
// ErrMalformed (which matches engine.ErrABI), engine.ErrABI or engine.ErrLink. Check is safe
// for concurrent use.
func Check(b []byte) error {
	if len(b) < len(magic) || string(b[:len(magic)]) != string(magic) {
		return fmt.Errorf("not a WebAssembly 1.0 binary: %w", ErrMalformed)
	}
	r := &reader{Reader{B: b, Off: len(magic)}}
	last := 0
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
		if id != SecCustom {
			rank, ok := sectionRank[id]
			if !ok {
				return r.Fail("unknown section id %d", id)
			}
			if rank <= last {
				return r.Fail("section id %d out of order or repeated", id)
			}
			last = rank
		}
		sr := &reader{Reader{B: body}}
		switch id {
		case SecCustom:
			var name string
			if name, err = sr.name(); err == nil {
				if name == "name" {
					err = checkNames(sr)
				}
				sr.Off = len(body) // the payload is kept verbatim
			}
		case SecType:
			err = checkTypes(sr)
		case SecTable:
			err = checkTables(sr)
		case SecElement:
			err = checkElements(sr)
		case SecCode:
			err = checkCode(sr)
		case SecImport:
			err = checkImports(sr)
		case SecFunction:
			if _, err = sr.Count(1); err == nil {
				sr.Off = len(body) // type indices, checked by the runtime
			}
		case SecMemory:
			err = checkMemory(sr)
		case SecGlobal:
			err = checkGlobals(sr)
		case SecExport:
			err = checkExports(sr)
		case SecStart:
			_, err = sr.U32()
		case SecDataCount:
			_, err = sr.U32()
		case SecData:
			err = checkData(sr)
		default:
			sr.Off = len(body) // kept verbatim, checked by the runtime
		}
		if err != nil {
			return fmt.Errorf("section %d: %w", id, err)
		}
		if !sr.Done() {
			return fmt.Errorf("section %d: %w", id, sr.Fail("%d trailing bytes", len(body)-sr.Off))
		}
	}
	return nil
}

func checkImports(r *reader) error {
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
		if kind != KindFunc {
			return fmt.Errorf("import %s.%s: only functions may be imported (kind %d): %w", mod, name, kind, engine.ErrLink)
		}
		if _, err := r.U32(); err != nil {
			return err
		}
	}
	return nil
}

func checkMemory(r *reader) error {
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
	var l struct {
		min, max uint32
		hasMax   bool
	}
	l.hasMax = flags == 1
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
	return nil
}

func checkGlobals(r *reader) error {
	n, err := r.Count(4)
	if err != nil {
		return err
	}
	for range n {
		var g struct {
			typ  byte
			mut  bool
			init []byte
		}
		if g.typ, err = r.Byte(); err != nil {
			return err
		}
		switch g.typ {
		case TypeI32, TypeI64, TypeF32, TypeF64, TypeV128, TypeFuncref, TypeExternref:
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

func checkExports(r *reader) error {
	n, err := r.Count(3)
	if err != nil {
		return err
	}
	seen := make(map[string]bool, n)
	for range n {
		var e struct {
			name string
			kind byte
			idx  uint32
		}
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
		if e.kind > KindGlobal {
			return r.Fail("export %q of unknown kind %d", e.name, e.kind)
		}
		if e.idx, err = r.U32(); err != nil {
			return err
		}
	}
	return nil
}

func checkData(r *reader) error {
	n, err := r.Count(3)
	if err != nil {
		return err
	}
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
				if !IsValueType(t) {
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
		if t != TypeFuncref && t != TypeExternref {
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
		br := &reader{Reader{B: body}}
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
			if !IsValueType(t) {
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
		sr := &reader{Reader{B: body}}
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
