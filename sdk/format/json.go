package format

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/loadout-dev/loadout/sdk/internal/ascii"
)

// Object is an ordered map from string keys to values, encoded with its keys in insertion
// order. The zero value is an empty object ready to use.
//
// Values may be nil, string, bool, int, int64, float64 (finite), []string, []any or *Object;
// MarshalJSON and the TOML writer report any other type as an error.
type Object struct {
	entries []entry
}

// entry is one key of an Object and its value.
type entry struct {
	key string
	val any
}

// NewObject returns an empty object.
func NewObject() *Object { return &Object{} }

// Set sets key to v. A new key is appended; an existing key keeps its position and takes the new
// value. Set returns o so that calls can be chained.
func (o *Object) Set(key string, v any) *Object {
	for i := range o.entries {
		if o.entries[i].key == key {
			o.entries[i].val = v
			return o
		}
	}
	if o.entries == nil {
		// Most objects a renderer builds have a handful of keys: one allocation for them.
		o.entries = make([]entry, 0, 4)
	}
	o.entries = append(o.entries, entry{key, v})
	return o
}

// Len returns the number of keys.
func (o *Object) Len() int { return len(o.entries) }

// Keys returns a copy of the keys in order.
func (o *Object) Keys() []string {
	keys := make([]string, len(o.entries))
	for i, e := range o.entries {
		keys[i] = e.key
	}
	return keys
}

// Get returns the value of key and whether it is present.
func (o *Object) Get(key string) (any, bool) {
	for _, e := range o.entries {
		if e.key == key {
			return e.val, true
		}
	}
	return nil, false
}

// ErrUnsupported is returned (wrapped) when a value has a type or a number value an encoder
// cannot represent.
var ErrUnsupported = errors.New("unsupported value")

// MarshalJSON encodes v the way json.MarshalIndent(v, "", "  ") would, with *Object keys in
// insertion order, followed by a newline. Strings are escaped exactly as encoding/json escapes
// them (including \u003c \u003e \u0026 \u2028 \u2029, and invalid UTF-8 as \ufffd).
func MarshalJSON(v any) ([]byte, error) {
	b, err := appendJSON(nil, v, 0)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func appendJSON(b []byte, v any, depth int) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return AppendJSONString(b, v), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case float64:
		return appendJSONFloat(b, v)
	case []string:
		if len(v) == 0 {
			return append(b, "[]"...), nil
		}
		b = append(b, '[')
		for i, s := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendIndent(b, depth+1)
			b = AppendJSONString(b, s)
		}
		b = appendIndent(b, depth)
		return append(b, ']'), nil
	case []any:
		if len(v) == 0 {
			return append(b, "[]"...), nil
		}
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendIndent(b, depth+1)
			var err error
			if b, err = appendJSON(b, e, depth+1); err != nil {
				return nil, fmt.Errorf("index %d: %w", i, err)
			}
		}
		b = appendIndent(b, depth)
		return append(b, ']'), nil
	case *Object:
		if v == nil {
			return append(b, "null"...), nil
		}
		if len(v.entries) == 0 {
			return append(b, "{}"...), nil
		}
		b = append(b, '{')
		for i, e := range v.entries {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendIndent(b, depth+1)
			b = AppendJSONString(b, e.key)
			b = append(b, ':', ' ')
			var err error
			if b, err = appendJSON(b, e.val, depth+1); err != nil {
				return nil, fmt.Errorf("key %q: %w", e.key, err)
			}
		}
		b = appendIndent(b, depth)
		return append(b, '}'), nil
	default:
		return nil, fmt.Errorf("json: %T: %w", v, ErrUnsupported)
	}
}

func appendIndent(b []byte, depth int) []byte {
	b = append(b, '\n')
	for range depth {
		b = append(b, ' ', ' ')
	}
	return b
}

// appendJSONFloat formats f as encoding/json does (ES6 number formatting).
func appendJSONFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, fmt.Errorf("json: number %v: %w", f, ErrUnsupported)
	}
	abs := math.Abs(f)
	fmtByte := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		fmtByte = 'e'
	}
	b = strconv.AppendFloat(b, f, fmtByte, -1, 64)
	if fmtByte == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s as a JSON string literal, escaped exactly as encoding/json escapes
// it with HTML escaping on (its default).
func AppendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			// Jump over plain bytes a word at a time, onto the next byte that needs care.
			w := ascii.Word(s, i)
			n := ascii.Plain(ascii.Special(w) | ascii.HTML(w))
			if i += n; n == 8 {
				continue
			}
		}
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
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
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// JSONStringBody is s as spelled inside a JSON string literal by AppendJSONString (without
// the quotes): the one spelling the host substitutes secrets with and redacts.
func JSONStringBody(s string) string {
	b := AppendJSONString(nil, s)
	return string(b[1 : len(b)-1])
}

// jsPrototypeNames are the names of JavaScript's Object.prototype members.
var jsPrototypeNames = map[string]bool{
	"constructor": true, "__proto__": true, "__defineGetter__": true, "__defineSetter__": true,
	"__lookupGetter__": true, "__lookupSetter__": true, "hasOwnProperty": true, "isPrototypeOf": true,
	"propertyIsEnumerable": true, "toLocaleString": true, "toString": true, "valueOf": true,
}

// IsJSPrototypeName reports whether name is an Object.prototype member: a JavaScript config
// loader (Claude Code, Pi) refuses it as a server name or confuses it with an inherited member
// (docs/FORMATS.md §4), so a renderer must not emit it as an object key.
func IsJSPrototypeName(name string) bool { return jsPrototypeNames[name] }
