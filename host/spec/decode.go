package spec

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/loadout-dev/loadout/sdk/abi"
)

// Limits of the strict decoder. A body over MaxRequestBytes, or nested deeper than MaxDepth,
// is refused before any sanitization rule runs.
const (
	MaxRequestBytes = 64 << 20
	MaxDepth        = 64
)

// kind is the JSON type of a decoded value.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// value is one node of the ordered tree the strict decoder builds. str holds a string's
// unescaped text or a number's literal; members keep object order.
type value struct {
	kind    kind
	b       bool
	str     string
	elems   []value
	members []member
}

type member struct {
	name string
	val  value
}

// get returns the value of the member called name (exact match) and whether it is present.
// Member names are unique: the decoder refuses duplicates.
func (v *value) get(name string) (*value, bool) {
	for i := range v.members {
		if v.members[i].name == name {
			return &v.members[i].val, true
		}
	}
	return nil, false
}

// present reports whether v is a member value that is there and not null.
func present(v *value, ok bool) bool { return ok && v.kind != kindNull }

// pathElem is one step of a JSON path: a member name, or an array index when isIndex.
type pathElem struct {
	name    string
	index   int
	isIndex bool
}

// decoder is a strict single-pass JSON scanner. It is used by one goroutine for one body.
// data is one private copy of the body: unescaped strings and number literals are substrings
// of it, so decoding allocates once for the text instead of once per string.
//
// Members and elements of the objects and arrays being decoded are collected on mstack and
// estack and copied out in one exactly sized slice when the object or array ends.
type decoder struct {
	data   string
	pos    int
	depth  int
	path   []pathElem
	mstack []member
	estack []value
}

// decode parses data into an ordered tree, refusing everything R11 refuses.
func decode(data []byte) (value, error) {
	if len(data) > MaxRequestBytes {
		return value{}, reject("", CodeTooLarge, "request body is "+strconv.Itoa(len(data))+
			" bytes, more than the limit of "+strconv.Itoa(MaxRequestBytes))
	}
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, n := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return value{}, reject("", CodeInvalidUTF8, "invalid UTF-8 at byte offset "+strconv.Itoa(off))
	}
	d := decoder{
		data:   string(data),
		path:   make([]pathElem, 0, 8),
		mstack: make([]member, 0, 32),
		estack: make([]value, 0, 32),
	}
	d.skipSpace()
	if d.pos >= len(d.data) {
		return value{}, reject("", CodeInvalidJSON, "empty request body")
	}
	v, err := d.value()
	if err != nil {
		return value{}, err
	}
	d.skipSpace()
	if d.pos < len(d.data) {
		return value{}, reject("", CodeTrailingData, "data after the top-level value at byte offset "+strconv.Itoa(d.pos))
	}
	return v, nil
}

func (d *decoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// syntax returns the refusal for malformed JSON at the current offset.
func (d *decoder) syntax(what string) error {
	return reject(pathString(d.path), CodeInvalidJSON, what+" at byte offset "+strconv.Itoa(d.pos))
}

func (d *decoder) value() (value, error) {
	if d.pos >= len(d.data) {
		return value{}, d.syntax("unexpected end of input")
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object()
	case c == '[':
		return d.array()
	case c == '"':
		s, err := d.str()
		if err != nil {
			return value{}, err
		}
		if strings.Contains(s, abi.PlaceholderPrefix) {
			return value{}, reservedPlaceholder(d.path, "string")
		}
		return value{kind: kindString, str: s}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	case c == 't':
		return d.literal("true", value{kind: kindBool, b: true})
	case c == 'f':
		return d.literal("false", value{kind: kindBool})
	case c == 'n':
		return d.literal("null", value{kind: kindNull})
	default:
		return value{}, d.syntax("unexpected character " + strconv.QuoteRune(rune(c)))
	}
}

func (d *decoder) literal(word string, v value) (value, error) {
	if len(d.data)-d.pos < len(word) || d.data[d.pos:d.pos+len(word)] != word {
		return value{}, d.syntax("invalid literal")
	}
	d.pos += len(word)
	return v, nil
}

func (d *decoder) enter() error {
	d.depth++
	if d.depth > MaxDepth {
		return reject(pathString(d.path), CodeTooDeep, "values nested deeper than "+strconv.Itoa(MaxDepth)+" levels")
	}
	return nil
}

func (d *decoder) object() (value, error) {
	if err := d.enter(); err != nil {
		return value{}, err
	}
	d.pos++ // '{'
	v := value{kind: kindObject}
	var seen map[string]struct{}
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		d.depth--
		return v, nil
	}
	base := len(d.mstack)
	for {
		d.skipSpace()
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return value{}, d.syntax("expected a member name")
		}
		name, err := d.str()
		if err != nil {
			return value{}, err
		}
		if dup := isDuplicate(d.mstack[base:], name, &seen); dup {
			return value{}, reject(pathString(append(d.path, pathElem{name: name})), CodeDuplicateMember,
				"member name "+strconv.Quote(name)+" appears more than once in one object")
		}
		d.skipSpace()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return value{}, d.syntax("expected ':' after a member name")
		}
		d.pos++
		d.skipSpace()
		d.path = append(d.path, pathElem{name: name})
		if strings.Contains(name, abi.PlaceholderPrefix) {
			return value{}, reservedPlaceholder(d.path, "member name")
		}
		mv, err := d.value()
		if err != nil {
			return value{}, err
		}
		d.path = d.path[:len(d.path)-1]
		d.mstack = append(d.mstack, member{name: name, val: mv})
		d.skipSpace()
		if d.pos >= len(d.data) {
			return value{}, d.syntax("unexpected end of input in an object")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case '}':
			d.pos++
			d.depth--
			v.members = make([]member, len(d.mstack)-base)
			copy(v.members, d.mstack[base:])
			clear(d.mstack[base:])
			d.mstack = d.mstack[:base]
			return v, nil
		default:
			return value{}, d.syntax("expected ',' or '}' in an object")
		}
	}
}

// isDuplicate reports whether name is already a member. Small objects are scanned; from 16
// members on, a set is built once and kept up to date.
func isDuplicate(members []member, name string, seen *map[string]struct{}) bool {
	const scanLimit = 16
	if len(members) < scanLimit {
		for i := range members {
			if members[i].name == name {
				return true
			}
		}
		return false
	}
	if *seen == nil {
		*seen = make(map[string]struct{}, 2*len(members))
		for i := range members {
			(*seen)[members[i].name] = struct{}{}
		}
	}
	if _, ok := (*seen)[name]; ok {
		return true
	}
	(*seen)[name] = struct{}{}
	return false
}

func (d *decoder) array() (value, error) {
	if err := d.enter(); err != nil {
		return value{}, err
	}
	d.pos++ // '['
	v := value{kind: kindArray}
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		d.depth--
		return v, nil
	}
	base := len(d.estack)
	for i := 0; ; i++ {
		d.skipSpace()
		d.path = append(d.path, pathElem{index: i, isIndex: true})
		ev, err := d.value()
		if err != nil {
			return value{}, err
		}
		d.path = d.path[:len(d.path)-1]
		d.estack = append(d.estack, ev)
		d.skipSpace()
		if d.pos >= len(d.data) {
			return value{}, d.syntax("unexpected end of input in an array")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case ']':
			d.pos++
			d.depth--
			v.elems = make([]value, len(d.estack)-base)
			copy(v.elems, d.estack[base:])
			clear(d.estack[base:])
			d.estack = d.estack[:base]
			return v, nil
		default:
			return value{}, d.syntax("expected ',' or ']' in an array")
		}
	}
}

func (d *decoder) number() (value, error) {
	start := d.pos
	data := d.data
	if data[d.pos] == '-' {
		d.pos++
	}
	switch {
	case d.pos < len(data) && data[d.pos] == '0':
		d.pos++
	case d.pos < len(data) && data[d.pos] >= '1' && data[d.pos] <= '9':
		for d.pos < len(data) && data[d.pos] >= '0' && data[d.pos] <= '9' {
			d.pos++
		}
	default:
		return value{}, d.syntax("invalid number")
	}
	if d.pos < len(data) && data[d.pos] == '.' {
		d.pos++
		if d.pos >= len(data) || data[d.pos] < '0' || data[d.pos] > '9' {
			return value{}, d.syntax("invalid number")
		}
		for d.pos < len(data) && data[d.pos] >= '0' && data[d.pos] <= '9' {
			d.pos++
		}
	}
	if d.pos < len(data) && (data[d.pos] == 'e' || data[d.pos] == 'E') {
		d.pos++
		if d.pos < len(data) && (data[d.pos] == '+' || data[d.pos] == '-') {
			d.pos++
		}
		if d.pos >= len(data) || data[d.pos] < '0' || data[d.pos] > '9' {
			return value{}, d.syntax("invalid number")
		}
		for d.pos < len(data) && data[d.pos] >= '0' && data[d.pos] <= '9' {
			d.pos++
		}
	}
	return value{kind: kindNumber, str: data[start:d.pos]}, nil
}

// str decodes the string starting at the opening quote. The body is known to be valid UTF-8;
// an escaped lone surrogate cannot be represented faithfully and is refused.
func (d *decoder) str() (string, error) {
	d.pos++ // opening quote
	start := d.pos
	data := d.data
	// Fast path: no escapes.
	for d.pos < len(data) {
		c := data[d.pos]
		if c == '"' {
			s := data[start:d.pos]
			d.pos++
			return s, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", d.syntax("control character in a string")
		}
		d.pos++
	}
	if d.pos >= len(data) {
		return "", d.syntax("unterminated string")
	}
	buf := make([]byte, 0, d.pos-start+16)
	buf = append(buf, data[start:d.pos]...)
	for d.pos < len(data) {
		c := data[d.pos]
		switch {
		case c == '"':
			d.pos++
			return string(buf), nil
		case c < 0x20:
			return "", d.syntax("control character in a string")
		case c != '\\':
			buf = append(buf, c)
			d.pos++
			continue
		}
		// escape
		d.pos++
		if d.pos >= len(data) {
			return "", d.syntax("unterminated escape")
		}
		e := data[d.pos]
		d.pos++
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return "", d.syntax("invalid \\u escape")
			}
			if utf16.IsSurrogate(r) {
				if r >= 0xdc00 || d.pos+1 >= len(data) || data[d.pos] != '\\' || data[d.pos+1] != 'u' {
					return "", d.syntax("unpaired UTF-16 surrogate escape")
				}
				d.pos += 2
				r2, ok := d.hex4()
				if !ok {
					return "", d.syntax("invalid \\u escape")
				}
				r = utf16.DecodeRune(r, r2)
				if r == utf8.RuneError {
					return "", d.syntax("unpaired UTF-16 surrogate escape")
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", d.syntax("invalid escape character " + strconv.QuoteRune(rune(e)))
		}
	}
	return "", d.syntax("unterminated string")
}

func (d *decoder) hex4() (rune, bool) {
	if len(d.data)-d.pos < 4 {
		return 0, false
	}
	var r rune
	for i := d.pos; i < d.pos+4; i++ {
		c := d.data[i]
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	d.pos += 4
	return r, true
}

func reservedPlaceholder(path []pathElem, what string) error {
	return reject(pathString(path), CodeReservedPlaceholder,
		what+" contains the reserved placeholder prefix "+strconv.Quote(abi.PlaceholderPrefix))
}

// pathString renders a JSON path: members as .name (or ["name"] when the name is not a plain
// identifier), indexes as [i]. The root is "".
func pathString(path []pathElem) string {
	var b strings.Builder
	for _, e := range path {
		appendElem(&b, e, b.Len() == 0)
	}
	return b.String()
}

func appendElem(b *strings.Builder, e pathElem, first bool) {
	if e.isIndex {
		b.WriteByte('[')
		b.WriteString(strconv.Itoa(e.index))
		b.WriteByte(']')
		return
	}
	if !isIdentifier(e.name) {
		b.WriteByte('[')
		b.WriteString(strconv.Quote(e.name))
		b.WriteByte(']')
		return
	}
	if !first {
		b.WriteByte('.')
	}
	b.WriteString(e.name)
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9') {
			continue
		}
		return false
	}
	return true
}
