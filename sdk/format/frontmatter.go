package format

import (
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/loadout-dev/loadout/sdk/internal/ascii"
)

// Field is one front-matter key and its string value.
type Field struct {
	Key   string
	Value string
}

// FrontMatter encodes fields as a YAML front-matter block: a "---" line, one `key: value` line
// per field in order, and a closing "---" line. A value that is a lowercase hyphenated word
// starting with a letter (a conforming skill name, say) and no YAML 1.1 or 1.2 keyword is
// written plain, as harness docs show it; every other value is a YAML double-quoted scalar
// written by AppendYAMLString, so no value can add a key, a line or a YAML construct. Keys are
// chosen by the caller, not by a request: they must match ^[A-Za-z][A-Za-z0-9_-]*$ and be
// unique, else FrontMatter returns an error wrapping ErrUnsupported.
func FrontMatter(fields ...Field) ([]byte, error) {
	return appendFrontMatter(nil, fields)
}

// appendFrontMatter appends FrontMatter(fields...) to b.
func appendFrontMatter(b []byte, fields []Field) ([]byte, error) {
	b = append(b, "---\n"...)
	for i, f := range fields {
		if !isFrontMatterKey(f.Key) {
			return nil, fmt.Errorf("front matter: key %q: %w", f.Key, ErrUnsupported)
		}
		// A block has a handful of keys: a scan finds a repeated one without a map.
		if slices.ContainsFunc(fields[:i], func(g Field) bool { return g.Key == f.Key }) {
			return nil, fmt.Errorf("front matter: key %q repeated: %w", f.Key, ErrUnsupported)
		}
		b = append(b, f.Key...)
		b = append(b, ':', ' ')
		if isPlainYAML(f.Value) {
			b = append(b, f.Value...)
		} else {
			b = AppendYAMLString(b, f.Value)
		}
		b = append(b, '\n')
	}
	return append(b, "---\n"...), nil
}

// Markdown returns a front-matter block for fields followed by body. The body is copied as is:
// it may be literal text or a blob placeholder the host replaces.
func Markdown(fields []Field, body string) ([]byte, error) {
	size := 16 + len(body)
	for _, f := range fields {
		size += len(f.Key) + len(f.Value) + 8
	}
	fm, err := appendFrontMatter(make([]byte, 0, size), fields)
	if err != nil {
		return nil, err
	}
	return append(fm, body...), nil
}

// yamlKeywords are plain scalars some YAML parser reads as something other than a string.
var yamlKeywords = map[string]bool{
	"y": true, "n": true, "yes": true, "no": true, "on": true, "off": true,
	"true": true, "false": true, "null": true, "nan": true, "inf": true,
}

// isPlainYAML reports whether v reads back as the same string when written as a plain scalar:
// ^[a-z][a-z0-9-]*$ (a leading letter rules out numbers, dates and hex) and no keyword.
func isPlainYAML(v string) bool {
	if v == "" || v[0] < 'a' || v[0] > 'z' || yamlKeywords[v] {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

func isFrontMatterKey(k string) bool {
	if k == "" || !(k[0] >= 'A' && k[0] <= 'Z' || k[0] >= 'a' && k[0] <= 'z') {
		return false
	}
	for i := 1; i < len(k); i++ {
		c := k[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// AppendYAMLString appends s as a YAML double-quoted scalar on one line. `"` and `\` become \"
// and \\; tab, newline and carriage return become \t \n \r; every other C0 control, DEL, every
// C1 control (including U+0085), U+2028, U+2029, U+FEFF, U+FFFE and U+FFFF become \u escapes
// (lowercase hex), and invalid UTF-8 becomes \ufffd. Everything else is literal.
func AppendYAMLString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0 // plain bytes from start to i are copied in one go
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			// Jump over plain bytes a word at a time, onto the next byte that needs care.
			n := ascii.Plain(ascii.Special(ascii.Word(s, i)))
			if i += n; n == 8 {
				continue
			}
		}
		if c := s[i]; c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			i++
			continue
		}
		b = append(b, s[start:i]...)
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\t':
			b = append(b, '\\', 't')
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f ||
			r == 0x2028 || r == 0x2029 || r == 0xfeff || r == 0xfffe || r == 0xffff:
			b = append(b, '\\', 'u',
				hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
