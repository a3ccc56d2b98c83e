package sdk

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/internal/ascii"
)

// The encoders are hand-written for abi.Plan, abi.Manifest and abi.ErrorResponse: they append to
// one buffer in field order, without reflection. The output is what encoding/json would decode
// to the same value, with two deliberate differences: a nil slice is written as [] (never null),
// and a string holding invalid UTF-8 is an error instead of being silently replaced.

type encoder struct {
	buf []byte
	err error
}

func (e *encoder) raw(s string) { e.buf = append(e.buf, s...) }

// key writes `,"name":`.
func (e *encoder) key(name string) {
	e.buf = append(e.buf, ',', '"')
	e.buf = append(e.buf, name...)
	e.buf = append(e.buf, '"', ':')
}

func (e *encoder) boolean(v bool) {
	e.buf = strconv.AppendBool(e.buf, v)
}

const hexDigits = "0123456789abcdef"

// plainASCII[c] is true for the ASCII bytes written as themselves inside a JSON string.
var plainASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str writes a JSON string. It escapes '"', '\\', control characters, DEL and U+2028/U+2029
// (so the output is also safe inside JavaScript), and refuses invalid UTF-8.
func (e *encoder) str(what, s string) {
	buf := append(e.buf, '"') // a local slice: the loop appends often and stays in registers
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			// Jump over plain bytes a word at a time, onto the next byte that needs care.
			n := ascii.Plain(ascii.Special(ascii.Word(s, i)))
			if i += n; n == 8 {
				continue
			}
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if plainASCII[c] {
				i++
				continue
			}
			buf = append(buf, s[start:i]...)
			switch c {
			case '"', '\\':
				buf = append(buf, '\\', c)
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			if e.err == nil {
				e.err = fmt.Errorf("%s holds invalid UTF-8 at byte %d", what, i)
			}
		case r == '\u2028' || r == '\u2029':
			buf = append(buf, s[start:i]...)
			buf = append(buf, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			start = i + size
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	e.buf = append(buf, '"')
}

func (e *encoder) strs(what string, v []string) {
	e.buf = append(e.buf, '[')
	for i, s := range v {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.str(what, s)
	}
	e.buf = append(e.buf, ']')
}

func (e *encoder) pairs(what string, v []abi.Pair) {
	e.buf = append(e.buf, '[')
	for i, p := range v {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.raw(`{"name":`)
		e.str(what+".name", p.Name)
		e.key("value")
		e.str(what+".value", p.Value)
		if p.Secret {
			e.key("secret")
			e.boolean(true)
		}
		e.buf = append(e.buf, '}')
	}
	e.buf = append(e.buf, ']')
}

// encodePlan returns the JSON of p.
func encodePlan(p abi.Plan) ([]byte, error) {
	e := encoder{buf: make([]byte, 0, planSize(p))}
	e.raw(`{"files":[`)
	for i, f := range p.Files {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.raw(`{"root":`)
		e.str("file.root", f.Root)
		e.key("path")
		e.str("file.path", f.Path)
		e.key("mode")
		e.str("file.mode", f.Mode)
		e.key("format")
		e.str("file.format", f.Format)
		e.key("content")
		e.str("file.content", f.Content)
		e.key("secret")
		e.boolean(f.Secret)
		e.buf = append(e.buf, '}')
	}
	e.raw(`],"args":`)
	e.strs("args", p.Args)
	e.key("env")
	e.pairs("env", p.Env)
	e.key("prompt")
	e.str("prompt", p.Prompt)
	e.key("gitExclude")
	e.strs("gitExclude", p.GitExclude)
	e.raw(`,"warnings":[`)
	for i, w := range p.Warnings {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.raw(`{"code":`)
		e.str("warning.code", w.Code)
		e.key("message")
		e.str("warning.message", w.Message)
		if w.Server != "" {
			e.key("server")
			e.str("warning.server", w.Server)
		}
		if w.Skill != "" {
			e.key("skill")
			e.str("warning.skill", w.Skill)
		}
		e.buf = append(e.buf, '}')
	}
	e.raw(`]}`)
	if e.err != nil {
		return nil, fmt.Errorf("encode plan: %w", e.err)
	}
	return e.buf, nil
}

// planSize estimates the encoded size of p so the buffer grows at most once or twice.
func planSize(p abi.Plan) int {
	n := 128 + len(p.Prompt)
	for _, f := range p.Files {
		n += 96 + len(f.Root) + len(f.Path) + len(f.Content) + len(f.Content)/4
	}
	for _, a := range p.Args {
		n += 4 + len(a)
	}
	for _, v := range p.Env {
		n += 32 + len(v.Name) + len(v.Value)
	}
	for _, g := range p.GitExclude {
		n += 4 + len(g)
	}
	for _, w := range p.Warnings {
		n += 64 + len(w.Message) + len(w.Server) + len(w.Skill)
	}
	return n
}

// encodeManifest returns the JSON of m.
func encodeManifest(m abi.Manifest) ([]byte, error) {
	e := encoder{buf: make([]byte, 0, 256)}
	e.raw(`{"name":`)
	e.str("manifest.name", m.Name)
	e.key("version")
	e.str("manifest.version", m.Version)
	e.key("abiVersion")
	e.buf = strconv.AppendInt(e.buf, int64(m.ABIVersion), 10)
	e.key("harness")
	e.str("manifest.harness", m.Harness)
	e.key("transports")
	e.strs("manifest.transports", m.Transports)
	e.key("nativeSkills")
	e.boolean(m.NativeSkills)
	e.key("roots")
	e.strs("manifest.roots", m.Roots)
	e.buf = append(e.buf, '}')
	if e.err != nil {
		return nil, fmt.Errorf("encode manifest: %w", e.err)
	}
	return e.buf, nil
}

// encodeError returns the ErrorResponse JSON for code and message. A message with invalid UTF-8
// has each bad byte replaced by U+FFFD first, so an error can always be reported.
func encodeError(code, message string) []byte {
	if !utf8.ValidString(message) {
		message = toValidUTF8(message)
	}
	e := encoder{buf: make([]byte, 0, 48+len(code)+len(message))}
	e.raw(`{"error":{"code":`)
	e.str("error.code", code)
	e.key("message")
	e.str("error.message", message)
	e.raw(`}}`)
	return e.buf
}

func toValidUTF8(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		b = utf8.AppendRune(b, r)
		i += size
	}
	return string(b)
}
