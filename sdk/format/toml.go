package format

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// TOMLDocument is a TOML document built in order: top-level keys first, then each table in the
// order it was added. The zero value is an empty document ready to use.
//
// Values follow Object's rules; inside a document a *Object value is written as an inline table,
// []string and []any as arrays. Strings are TOML basic strings, escaped by AppendTOMLString.
type TOMLDocument struct {
	root   Object
	tables []tomlTable
}

type tomlTable struct {
	path []string
	body *Object
}

// Root returns the object holding the document's top-level keys.
func (d *TOMLDocument) Root() *Object { return &d.root }

// Table appends a table whose header is the dotted key path and returns its body to fill.
func (d *TOMLDocument) Table(path ...string) *Object {
	t := tomlTable{path: append([]string(nil), path...), body: NewObject()}
	d.tables = append(d.tables, t)
	return t.body
}

// AppendTable appends a table whose header is the dotted key path and whose body is body, which
// the document keeps (later changes to body show in the output).
func (d *TOMLDocument) AppendTable(body *Object, path ...string) {
	d.tables = append(d.tables, tomlTable{path: append([]string(nil), path...), body: body})
}

// Marshal encodes the document. It reports a table declared twice, an empty table path, a
// top-level key that a table header redefines, and unsupported values.
func (d *TOMLDocument) Marshal() ([]byte, error) {
	var b []byte
	var err error
	if b, err = appendTOMLBody(b, &d.root); err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(d.tables))
	for _, t := range d.tables {
		if len(t.path) == 0 {
			return nil, fmt.Errorf("toml: table with an empty path: %w", ErrUnsupported)
		}
		header := appendTOMLKeyPath(nil, t.path)
		if seen[string(header)] {
			return nil, fmt.Errorf("toml: table [%s] declared twice: %w", header, ErrUnsupported)
		}
		seen[string(header)] = true
		if _, ok := d.root.Get(t.path[0]); ok {
			return nil, fmt.Errorf("toml: table [%s] redefines a top-level key: %w", header, ErrUnsupported)
		}
		if len(b) > 0 {
			b = append(b, '\n')
		}
		b = append(b, '[')
		b = append(b, header...)
		b = append(b, ']', '\n')
		if b, err = appendTOMLBody(b, t.body); err != nil {
			return nil, fmt.Errorf("table [%s]: %w", header, err)
		}
	}
	return b, nil
}

func appendTOMLBody(b []byte, o *Object) ([]byte, error) {
	for _, e := range o.entries {
		b = AppendTOMLKey(b, e.key)
		b = append(b, " = "...)
		var err error
		if b, err = appendTOMLValue(b, e.val); err != nil {
			return nil, fmt.Errorf("key %q: %w", e.key, err)
		}
		b = append(b, '\n')
	}
	return b, nil
}

func appendTOMLValue(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case string:
		return AppendTOMLString(b, v), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case float64:
		return appendTOMLFloat(b, v)
	case []string:
		b = append(b, '[')
		for i, s := range v {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = AppendTOMLString(b, s)
		}
		return append(b, ']'), nil
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ", "...)
			}
			var err error
			if b, err = appendTOMLValue(b, e); err != nil {
				return nil, fmt.Errorf("index %d: %w", i, err)
			}
		}
		return append(b, ']'), nil
	case *Object:
		if v == nil || len(v.entries) == 0 {
			return append(b, "{}"...), nil
		}
		b = append(b, "{ "...)
		for i, e := range v.entries {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = AppendTOMLKey(b, e.key)
			b = append(b, " = "...)
			var err error
			if b, err = appendTOMLValue(b, e.val); err != nil {
				return nil, fmt.Errorf("key %q: %w", e.key, err)
			}
		}
		return append(b, " }"...), nil
	default:
		// nil included: TOML has no null.
		return nil, fmt.Errorf("toml: %T: %w", v, ErrUnsupported)
	}
}

// appendTOMLFloat writes f so that it always reads back as a TOML float (with a fraction or an
// exponent), never as an integer.
func appendTOMLFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, fmt.Errorf("toml: number %v: %w", f, ErrUnsupported)
	}
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		return strconv.AppendFloat(b, f, 'e', -1, 64), nil
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return append(b, s...), nil
}

// IsBareTOMLKey reports whether k may be written as a bare TOML key (^[A-Za-z0-9_-]+$).
func IsBareTOMLKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// AppendTOMLKey appends k as a bare key when IsBareTOMLKey allows it, else as a basic string.
func AppendTOMLKey(b []byte, k string) []byte {
	if IsBareTOMLKey(k) {
		return append(b, k...)
	}
	return AppendTOMLString(b, k)
}

func appendTOMLKeyPath(b []byte, path []string) []byte {
	for i, k := range path {
		if i > 0 {
			b = append(b, '.')
		}
		b = AppendTOMLKey(b, k)
	}
	return b
}

// AppendTOMLString appends s as a TOML basic string: `"` and `\` as \" and \\; backspace, tab,
// newline, form feed and carriage return as \b \t \n \f \r; every other control character and
// DEL as \u00XX (lowercase hex); invalid UTF-8 as \ufffd; everything else literal.
func AppendTOMLString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != 0x7f && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\t':
				b = append(b, '\\', 't')
			case '\n':
				b = append(b, '\\', 'n')
			case '\f':
				b = append(b, '\\', 'f')
			case '\r':
				b = append(b, '\\', 'r')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// TOMLStringBody is s as spelled inside a TOML basic string by AppendTOMLString (without the
// quotes): the one spelling the host substitutes secrets with and redacts.
func TOMLStringBody(s string) string {
	b := AppendTOMLString(nil, s)
	return string(b[1 : len(b)-1])
}
