package readback

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// Kind is the type of a JSON value.
type Kind int

// The JSON value kinds.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "boolean"
	case Number:
		return "number"
	case String:
		return "string"
	case Array:
		return "array"
	case Object:
		return "object"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one node of a strictly parsed JSON document. Objects keep their members in document
// order. A Value is immutable once ParseJSON returns it and safe to read from several goroutines.
type Value struct {
	Kind    Kind
	Bool    bool
	Number  string // the number's literal text
	Str     string
	Items   []*Value
	Members []Member
}

// Member is one name/value pair of a JSON object.
type Member struct {
	Name  string
	Value *Value
}

// Get returns the value of the member named name (an exact, case-sensitive match).
func (v *Value) Get(name string) (*Value, bool) {
	for _, m := range v.Members {
		if m.Name == name {
			return m.Value, true
		}
	}
	return nil, false
}

// maxJSONDepth bounds nesting so that a hostile document cannot exhaust the stack.
const maxJSONDepth = 64

// SyntaxError is a JSON document that is not strictly valid: invalid UTF-8, a syntax error,
// a duplicate member name, nesting deeper than 64 levels, or data after the value.
type SyntaxError struct {
	Offset int64  // byte offset where the problem was found
	Path   string // JSON path of the value being read, e.g. files[2].mode
	Msg    string
}

func (e *SyntaxError) Error() string {
	where := "at offset " + strconv.FormatInt(e.Offset, 10)
	if e.Path != "" {
		where = "at " + e.Path + " (offset " + strconv.FormatInt(e.Offset, 10) + ")"
	}
	return "json " + where + ": " + e.Msg
}

// ParseJSON parses data as exactly one strict JSON value (RFC 8259 with no duplicate member
// names at any depth, after unescaping; valid UTF-8; nothing but whitespace after the value).
func ParseJSON(data []byte) (*Value, error) {
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, n := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return nil, &SyntaxError{Offset: int64(off), Msg: "invalid UTF-8"}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	p := &jsonParser{dec: dec}
	v, err := p.value("", 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &SyntaxError{Offset: dec.InputOffset(), Msg: "data after the top-level value"}
	}
	return v, nil
}

type jsonParser struct {
	dec *json.Decoder
}

func (p *jsonParser) fail(path string, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &SyntaxError{Offset: se.Offset, Path: path, Msg: se.Error()}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &SyntaxError{Offset: p.dec.InputOffset(), Path: path, Msg: "unexpected end of input"}
	}
	return &SyntaxError{Offset: p.dec.InputOffset(), Path: path, Msg: err.Error()}
}

func (p *jsonParser) value(path string, depth int) (*Value, error) {
	tok, err := p.dec.Token()
	if err != nil {
		return nil, p.fail(path, err)
	}
	return p.fromToken(tok, path, depth)
}

func (p *jsonParser) fromToken(tok json.Token, path string, depth int) (*Value, error) {
	switch t := tok.(type) {
	case nil:
		return &Value{Kind: Null}, nil
	case bool:
		return &Value{Kind: Bool, Bool: t}, nil
	case json.Number:
		return &Value{Kind: Number, Number: string(t)}, nil
	case string:
		return &Value{Kind: String, Str: t}, nil
	case json.Delim:
		if depth >= maxJSONDepth {
			return nil, &SyntaxError{Offset: p.dec.InputOffset(), Path: path, Msg: "nesting deeper than " + strconv.Itoa(maxJSONDepth)}
		}
		switch t {
		case '[':
			v := &Value{Kind: Array, Items: []*Value{}}
			for p.dec.More() {
				item, err := p.value(path+"["+strconv.Itoa(len(v.Items))+"]", depth+1)
				if err != nil {
					return nil, err
				}
				v.Items = append(v.Items, item)
			}
			if _, err := p.dec.Token(); err != nil {
				return nil, p.fail(path, err)
			}
			return v, nil
		case '{':
			v := &Value{Kind: Object, Members: []Member{}}
			seen := map[string]bool{}
			for p.dec.More() {
				off := p.dec.InputOffset()
				nt, err := p.dec.Token()
				if err != nil {
					return nil, p.fail(path, err)
				}
				name, ok := nt.(string)
				if !ok {
					return nil, &SyntaxError{Offset: off, Path: path, Msg: "object member name is not a string"}
				}
				if seen[name] {
					return nil, &SyntaxError{Offset: off, Path: path, Msg: fmt.Sprintf("duplicate member name %q", name)}
				}
				seen[name] = true
				child, err := p.value(JoinPath(path, name), depth+1)
				if err != nil {
					return nil, err
				}
				v.Members = append(v.Members, Member{Name: name, Value: child})
			}
			if _, err := p.dec.Token(); err != nil {
				return nil, p.fail(path, err)
			}
			return v, nil
		}
	}
	return nil, &SyntaxError{Offset: p.dec.InputOffset(), Path: path, Msg: fmt.Sprintf("unexpected token %v", tok)}
}

// JoinPath appends an object member to a JSON path, as SyntaxError.Path spells it: name, or
// ["name"] when it is not a plain identifier.
func JoinPath(path, name string) string {
	ident := name != ""
	for _, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			ident = false
			break
		}
	}
	seg := name
	if !ident {
		seg = "[" + strconv.Quote(name) + "]"
		return path + seg
	}
	if path == "" {
		return seg
	}
	return path + "." + seg
}

// Strings returns every member name and string value of v.
func (v *Value) Strings() []string {
	var out []string
	var walk func(*Value)
	walk = func(v *Value) {
		switch v.Kind {
		case String:
			out = append(out, v.Str)
		case Array:
			for _, it := range v.Items {
				walk(it)
			}
		case Object:
			for _, m := range v.Members {
				out = append(out, m.Name)
				walk(m.Value)
			}
		}
	}
	walk(v)
	return out
}
