package sdk

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/internal/ascii"
)

// The request decoder is hand-written for abi.Request: one pass over the bytes, no reflection,
// no intermediate maps. Decoding is most of a Go plugin's time inside the sandbox, and
// encoding/json cannot reject duplicate keys or invalid UTF-8 on its own.
//
// It is strict: an unknown field, a duplicate key, a value of the wrong type, invalid UTF-8, a
// lone surrogate escape, a raw control character in a string or anything after the top-level
// value is an error. Keys match exactly (encoding/json would also accept other letter cases).
// null is accepted wherever encoding/json accepts it and leaves the zero value, because the host
// encodes nil slices as null.

// errSyntax is wrapped by every decoding error.
var errSyntax = errors.New("invalid request JSON")

type decoder struct {
	data []byte
	// text is data as one string: a string without escapes is a substring of it, so decoding
	// allocates once for all of them instead of once per string.
	text string
	pos  int
	// scratch holds an unescaped key; keys are compared without allocating.
	scratch []byte
	// strs and pairBuf collect the elements of the list being decoded.
	strs    []string
	pairBuf []abi.Pair
}

// decodeRequest decodes data strictly into an abi.Request.
func decodeRequest(data []byte) (abi.Request, error) {
	d := decoder{data: data, text: string(data)}
	var req abi.Request
	if err := d.request(&req); err != nil {
		return abi.Request{}, err
	}
	d.skipSpace()
	if d.pos != len(d.data) {
		return abi.Request{}, d.errorf("trailing data after the request")
	}
	return req, nil
}

func (d *decoder) errorf(format string, args ...any) error {
	return fmt.Errorf("%w at offset %d: %s", errSyntax, d.pos, fmt.Sprintf(format, args...))
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

// peek skips white space and returns the next byte, or 0 at the end of the input.
func (d *decoder) peek() byte {
	d.skipSpace()
	if d.pos < len(d.data) {
		return d.data[d.pos]
	}
	return 0
}

func (d *decoder) literal(word string) bool {
	if len(d.data)-d.pos >= len(word) && string(d.data[d.pos:d.pos+len(word)]) == word {
		d.pos += len(word)
		return true
	}
	return false
}

// null consumes a null literal if one is next.
func (d *decoder) null() bool {
	return d.peek() == 'n' && d.literal("null")
}

// object decodes an object (or null), calling field for each key with the key's unescaped bytes
// (valid only during the call). field reports the key's bit in *seen so duplicates are caught;
// it returns 0 for an unknown key.
func (d *decoder) object(what string, field func(key []byte) (uint64, error)) error {
	if d.null() {
		return nil
	}
	if d.peek() != '{' {
		return d.errorf("%s: want an object", what)
	}
	d.pos++
	var seen uint64
	if d.peek() == '}' {
		d.pos++
		return nil
	}
	for {
		if d.peek() != '"' {
			return d.errorf("%s: want a key", what)
		}
		keyStart := d.pos
		key, err := d.stringBytes()
		if err != nil {
			return err
		}
		if len(d.scratch) > 0 && len(key) > 0 && &key[0] == &d.scratch[0] {
			// An escaped key lives in scratch, which decoding the value reuses: copy it.
			// Real keys are never escaped, so this costs nothing on the host's output.
			key = append([]byte(nil), key...)
		}
		if d.peek() != ':' {
			return d.errorf("%s: want ':' after key %q", what, key)
		}
		d.pos++
		bit, err := field(key)
		if err != nil {
			return err
		}
		if bit == 0 {
			d.pos = keyStart
			return d.errorf("%s: unknown field %q", what, key)
		}
		if seen&bit != 0 {
			d.pos = keyStart
			return d.errorf("%s: duplicate field %q", what, key)
		}
		seen |= bit
		switch d.peek() {
		case ',':
			d.pos++
		case '}':
			d.pos++
			return nil
		default:
			return d.errorf("%s: want ',' or '}'", what)
		}
	}
}

// array decodes an array (or null), calling elem for each element.
func (d *decoder) array(what string, elem func() error) error {
	if d.null() {
		return nil
	}
	if d.peek() != '[' {
		return d.errorf("%s: want an array", what)
	}
	d.pos++
	if d.peek() == ']' {
		d.pos++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch d.peek() {
		case ',':
			d.pos++
		case ']':
			d.pos++
			return nil
		default:
			return d.errorf("%s: want ',' or ']'", what)
		}
	}
}

func (d *decoder) boolean(what string) (bool, error) {
	switch {
	case d.null():
		return false, nil
	case d.peek() == 't' && d.literal("true"):
		return true, nil
	case d.peek() == 'f' && d.literal("false"):
		return false, nil
	}
	return false, d.errorf("%s: want a boolean", what)
}

// number returns the text of a JSON number.
func (d *decoder) number(what string) (string, bool, error) {
	if d.null() {
		return "", false, nil
	}
	d.skipSpace()
	start := d.pos
	if d.pos < len(d.data) && d.data[d.pos] == '-' {
		d.pos++
	}
	switch {
	case d.pos < len(d.data) && d.data[d.pos] == '0':
		d.pos++
	case d.pos < len(d.data) && d.data[d.pos] >= '1' && d.data[d.pos] <= '9':
		d.digits()
	default:
		d.pos = start
		return "", false, d.errorf("%s: want a number", what)
	}
	if d.pos < len(d.data) && d.data[d.pos] == '.' {
		d.pos++
		if !d.digits() {
			return "", false, d.errorf("%s: want digits after '.'", what)
		}
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if !d.digits() {
			return "", false, d.errorf("%s: want digits in the exponent", what)
		}
	}
	return string(d.data[start:d.pos]), true, nil
}

func (d *decoder) digits() bool {
	start := d.pos
	for d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
		d.pos++
	}
	return d.pos > start
}

func (d *decoder) float(what string) (float64, error) {
	text, ok, err := d.number(what)
	if err != nil || !ok {
		return 0, err
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return 0, d.errorf("%s: %v", what, err)
	}
	return f, nil
}

func (d *decoder) integer(what string) (int, error) {
	text, ok, err := d.number(what)
	if err != nil || !ok {
		return 0, err
	}
	n, err := strconv.ParseInt(text, 10, 32)
	if err != nil {
		return 0, d.errorf("%s: want a 32-bit integer, got %s", what, text)
	}
	return int(n), nil
}

// str decodes a string (or null) into a Go string: a substring of d.text when it holds no
// escape, a new string otherwise.
func (d *decoder) str(what string) (string, error) {
	if d.null() {
		return "", nil
	}
	if d.peek() != '"' {
		return "", d.errorf("%s: want a string", what)
	}
	// Fast path: printable ASCII with no escapes is one substring of the input.
	start := d.pos + 1
	for i := start; i < len(d.data); {
		if i+8 <= len(d.data) {
			n := ascii.Plain(ascii.Special(ascii.WordBytes(d.data, i)))
			if i += n; n == 8 {
				continue
			}
		}
		c := d.data[i]
		if c == '"' {
			d.pos = i + 1
			return d.text[start:i], nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		i++
	}
	b, err := d.stringBytes()
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// stringBytes decodes the string at d.pos and returns its unescaped bytes, either a view of
// the input (no escapes) or of d.scratch (valid until the next call).
func (d *decoder) stringBytes() ([]byte, error) {
	d.pos++ // opening quote
	start := d.pos
	for d.pos < len(d.data) {
		if d.pos+8 <= len(d.data) {
			n := ascii.Plain(ascii.Special(ascii.WordBytes(d.data, d.pos)))
			if d.pos += n; n == 8 {
				continue
			}
		}
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			return d.data[start : d.pos-1], nil
		case c == '\\':
			d.scratch = append(d.scratch[:0], d.data[start:d.pos]...)
			return d.escapedString()
		case c < 0x20:
			return nil, d.errorf("control character 0x%02x in a string", c)
		case c < utf8.RuneSelf:
			d.pos++
		default:
			r, size := utf8.DecodeRune(d.data[d.pos:])
			if r == utf8.RuneError && size == 1 {
				return nil, d.errorf("invalid UTF-8 in a string")
			}
			d.pos += size
		}
	}
	return nil, d.errorf("unterminated string")
}

// escapedString continues a string after its first escape, appending to d.scratch.
func (d *decoder) escapedString() ([]byte, error) {
	for d.pos < len(d.data) {
		// Copy a run of plain ASCII at once: per-byte appends are slow, above all in wasm.
		run := d.pos
		for run+8 <= len(d.data) {
			n := ascii.Plain(ascii.Special(ascii.WordBytes(d.data, run)))
			if run += n; n < 8 {
				break
			}
		}
		for run < len(d.data) && plainASCII[d.data[run]&0x7f] && d.data[run] < utf8.RuneSelf {
			run++
		}
		if run > d.pos {
			d.scratch = append(d.scratch, d.data[d.pos:run]...)
			d.pos = run
			if d.pos == len(d.data) {
				break
			}
		}
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			return d.scratch, nil
		case c == '\\':
			if d.pos+1 >= len(d.data) {
				return nil, d.errorf("unterminated escape")
			}
			e := d.data[d.pos+1]
			d.pos += 2
			switch e {
			case '"', '\\', '/':
				d.scratch = append(d.scratch, e)
			case 'b':
				d.scratch = append(d.scratch, '\b')
			case 'f':
				d.scratch = append(d.scratch, '\f')
			case 'n':
				d.scratch = append(d.scratch, '\n')
			case 'r':
				d.scratch = append(d.scratch, '\r')
			case 't':
				d.scratch = append(d.scratch, '\t')
			case 'u':
				r, err := d.hex4()
				if err != nil {
					return nil, err
				}
				if r >= 0xD800 && r < 0xDC00 {
					if !d.literal(`\u`) {
						return nil, d.errorf("lone surrogate escape")
					}
					lo, err := d.hex4()
					if err != nil {
						return nil, err
					}
					if lo < 0xDC00 || lo > 0xDFFF {
						return nil, d.errorf("lone surrogate escape")
					}
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				} else if r >= 0xDC00 && r <= 0xDFFF {
					return nil, d.errorf("lone surrogate escape")
				}
				d.scratch = utf8.AppendRune(d.scratch, r)
			default:
				d.pos -= 2
				return nil, d.errorf("invalid escape %q", string(e))
			}
		case c < 0x20:
			return nil, d.errorf("control character 0x%02x in a string", c)
		case c < utf8.RuneSelf:
			d.scratch = append(d.scratch, c)
			d.pos++
		default:
			r, size := utf8.DecodeRune(d.data[d.pos:])
			if r == utf8.RuneError && size == 1 {
				return nil, d.errorf("invalid UTF-8 in a string")
			}
			d.scratch = append(d.scratch, d.data[d.pos:d.pos+size]...)
			d.pos += size
		}
	}
	return nil, d.errorf("unterminated string")
}

func (d *decoder) hex4() (rune, error) {
	if len(d.data)-d.pos < 4 {
		return 0, d.errorf("short \\u escape")
	}
	var r rune
	for _, c := range d.data[d.pos : d.pos+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, d.errorf("invalid \\u escape")
		}
	}
	d.pos += 4
	return r, nil
}

func (d *decoder) strings(what string) ([]string, error) {
	// Elements collect in d.strs, reused across lists, and the list gets one exact copy.
	buf := d.strs[:0]
	err := d.array(what, func() error {
		s, err := d.str(what)
		buf = append(buf, s)
		return err
	})
	d.strs = buf
	if err != nil {
		return nil, err
	}
	if len(buf) == 0 {
		if d.data[d.pos-1] == ']' {
			return []string{}, nil
		}
		return nil, nil // null
	}
	return append([]string(nil), buf...), nil
}

// The typed decoders below mirror abi's structs field by field; a field's bit is its position.

func (d *decoder) request(r *abi.Request) error {
	return d.object("request", func(key []byte) (uint64, error) {
		var err error
		switch string(key) {
		case "abiVersion":
			r.ABIVersion, err = d.integer("abiVersion")
			return 1 << 0, err
		case "harness":
			r.Harness, err = d.str("harness")
			return 1 << 1, err
		case "run":
			return 1 << 2, d.run(&r.Run)
		case "servers":
			err = d.array("servers", func() error {
				r.Servers = append(r.Servers, abi.Server{})
				return d.server(&r.Servers[len(r.Servers)-1])
			})
			if err == nil && r.Servers == nil && d.data[d.pos-1] == ']' {
				r.Servers = []abi.Server{}
			}
			return 1 << 3, err
		case "skills":
			err = d.array("skills", func() error {
				r.Skills = append(r.Skills, abi.Skill{})
				return d.skill(&r.Skills[len(r.Skills)-1])
			})
			if err == nil && r.Skills == nil && d.data[d.pos-1] == ']' {
				r.Skills = []abi.Skill{}
			}
			return 1 << 4, err
		}
		return 0, nil
	})
}

func (d *decoder) run(r *abi.Run) error {
	return d.object("run", func(key []byte) (uint64, error) {
		var err error
		switch string(key) {
		case "ambientAuth":
			r.AmbientAuth, err = d.boolean("run.ambientAuth")
			return 1 << 0, err
		case "user":
			r.User, err = d.str("run.user")
			return 1 << 1, err
		case "builtinTools":
			r.BuiltinTools, err = d.strings("run.builtinTools")
			return 1 << 2, err
		}
		return 0, nil
	})
}

// pairField names a list of pairs and its fields in errors; constant, so decoding builds no
// string.
type pairField struct{ list, name, value, secret string }

var (
	envField          = pairField{"server.env", "server.env.name", "server.env.value", "server.env.secret"}
	hostEnvField      = pairField{"server.hostEnv", "server.hostEnv.name", "server.hostEnv.value", "server.hostEnv.secret"}
	headersField      = pairField{"server.headers", "server.headers.name", "server.headers.value", "server.headers.secret"}
	toolExposureField = pairField{"server.toolExposure", "server.toolExposure.name", "server.toolExposure.value", "server.toolExposure.secret"}
)

func (d *decoder) pairs(f *pairField) ([]abi.Pair, error) {
	// Pairs collect in d.pairBuf, reused across lists, and the list gets one exact copy.
	buf := d.pairBuf[:0]
	err := d.array(f.list, func() error {
		buf = append(buf, abi.Pair{})
		p := &buf[len(buf)-1]
		return d.object(f.list, func(key []byte) (uint64, error) {
			var err error
			switch string(key) {
			case "name":
				p.Name, err = d.str(f.name)
				return 1 << 0, err
			case "value":
				p.Value, err = d.str(f.value)
				return 1 << 1, err
			case "secret":
				p.Secret, err = d.boolean(f.secret)
				return 1 << 2, err
			}
			return 0, nil
		})
	})
	d.pairBuf = buf
	if err != nil {
		return nil, err
	}
	if len(buf) == 0 {
		if d.data[d.pos-1] == ']' {
			return []abi.Pair{}, nil
		}
		return nil, nil // null
	}
	return append([]abi.Pair(nil), buf...), nil
}

func (d *decoder) server(s *abi.Server) error {
	return d.object("server", func(key []byte) (uint64, error) {
		var err error
		switch string(key) {
		case "id":
			s.ID, err = d.str("server.id")
			return 1 << 0, err
		case "transport":
			s.Transport, err = d.str("server.transport")
			return 1 << 1, err
		case "command":
			s.Command, err = d.str("server.command")
			return 1 << 2, err
		case "args":
			s.Args, err = d.strings("server.args")
			return 1 << 3, err
		case "env":
			s.Env, err = d.pairs(&envField)
			return 1 << 4, err
		case "hostEnv":
			s.HostEnv, err = d.pairs(&hostEnvField)
			return 1 << 5, err
		case "cwd":
			s.Cwd, err = d.str("server.cwd")
			return 1 << 6, err
		case "url":
			s.URL, err = d.str("server.url")
			return 1 << 7, err
		case "headers":
			s.Headers, err = d.pairs(&headersField)
			return 1 << 8, err
		case "toolsRestricted":
			s.ToolsRestricted, err = d.boolean("server.toolsRestricted")
			return 1 << 9, err
		case "allowedTools":
			s.AllowedTools, err = d.strings("server.allowedTools")
			return 1 << 10, err
		case "description":
			s.Description, err = d.str("server.description")
			return 1 << 11, err
		case "enabled":
			s.Enabled, err = d.boolean("server.enabled")
			return 1 << 12, err
		case "timeout":
			s.Timeout, err = d.float("server.timeout")
			if err == nil && (math.IsInf(s.Timeout, 0) || math.IsNaN(s.Timeout)) {
				err = d.errorf("server.timeout out of range")
			}
			return 1 << 13, err
		case "exposure":
			s.Exposure, err = d.str("server.exposure")
			return 1 << 14, err
		case "toolExposure":
			s.ToolExposure, err = d.pairs(&toolExposureField)
			return 1 << 15, err
		case "deniedTools":
			s.DeniedTools, err = d.strings("server.deniedTools")
			return 1 << 16, err
		case "oauth":
			if d.null() {
				return 1 << 17, nil
			}
			s.OAuth = &abi.OAuth{}
			return 1 << 17, d.oauth(s.OAuth)
		case "lifecycle":
			s.Lifecycle, err = d.str("server.lifecycle")
			return 1 << 18, err
		case "idleTimeout":
			s.IdleTimeout, err = d.float("server.idleTimeout")
			if err == nil && (math.IsInf(s.IdleTimeout, 0) || math.IsNaN(s.IdleTimeout)) {
				err = d.errorf("server.idleTimeout out of range")
			}
			return 1 << 19, err
		}
		return 0, nil
	})
}

func (d *decoder) oauth(o *abi.OAuth) error {
	return d.object("server.oauth", func(key []byte) (uint64, error) {
		var err error
		switch string(key) {
		case "clientId":
			o.ClientID, err = d.str("server.oauth.clientId")
			return 1 << 0, err
		case "callbackPort":
			o.CallbackPort, err = d.integer("server.oauth.callbackPort")
			return 1 << 1, err
		case "scopes":
			o.Scopes, err = d.strings("server.oauth.scopes")
			return 1 << 2, err
		case "authServerMetadataUrl":
			o.AuthServerMetadataURL, err = d.str("server.oauth.authServerMetadataUrl")
			return 1 << 3, err
		}
		return 0, nil
	})
}

func (d *decoder) skill(s *abi.Skill) error {
	return d.object("skill", func(key []byte) (uint64, error) {
		var err error
		switch string(key) {
		case "name":
			s.Name, err = d.str("skill.name")
			return 1 << 0, err
		case "description":
			s.Description, err = d.str("skill.description")
			return 1 << 1, err
		case "instructions":
			s.Instructions, err = d.str("skill.instructions")
			return 1 << 2, err
		case "resources":
			err = d.array("skill.resources", func() error {
				s.Resources = append(s.Resources, abi.Resource{})
				return d.resource(&s.Resources[len(s.Resources)-1])
			})
			if err == nil && s.Resources == nil && d.data[d.pos-1] == ']' {
				s.Resources = []abi.Resource{}
			}
			return 1 << 3, err
		}
		return 0, nil
	})
}

func (d *decoder) resource(r *abi.Resource) error {
	return d.object("resource", func(key []byte) (uint64, error) {
		var err error
		switch string(key) {
		case "path":
			r.Path, err = d.str("resource.path")
			return 1 << 0, err
		case "content":
			r.Content, err = d.str("resource.content")
			return 1 << 1, err
		}
		return 0, nil
	})
}
