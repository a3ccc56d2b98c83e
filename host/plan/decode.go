package plan

import (
	"fmt"
	"strconv"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/profile/readback"
)

// DecodeError is a plan document that parsed as JSON but does not have the shape of an
// abi.Plan or an abi.ErrorResponse: an unknown member, a missing or mistyped value.
type DecodeError struct {
	Path string // JSON path of the offending value, e.g. files[2].mode; empty for the document
	Msg  string
}

func (e *DecodeError) Error() string {
	if e.Path == "" {
		return "plan: " + e.Msg
	}
	return "plan at " + e.Path + ": " + e.Msg
}

// PluginError is a plugin's own report of failure: the {"error":{"code","message"}} document
// it returned instead of a plan. Code is one of the abi.Code* constants or the plugin's own.
type PluginError struct {
	Code    string
	Message string
}

func (e *PluginError) Error() string {
	return "plugin error " + strconv.Quote(e.Code) + ": " + e.Message
}

// Decode strictly decodes a plugin's render output. It returns the plan, or a *PluginError when
// the document is a well-formed error response, or a *SyntaxError / *DecodeError saying what is
// wrong and where. Member names match exactly (no case folding); unknown members, duplicate
// members, wrong types, invalid UTF-8 and trailing data are errors. A null array is an empty one.
//
// Decode never panics on any input and is safe to call from several goroutines.
func Decode(data []byte) (*abi.Plan, error) {
	v, err := ParseJSON(data)
	if err != nil {
		return nil, fmt.Errorf("decode plan: %w", err)
	}
	if v.Kind != Object {
		return nil, &DecodeError{Msg: "document is a " + v.Kind.String() + ", want an object"}
	}
	if ev, ok := v.Get("error"); ok {
		if len(v.Members) != 1 {
			return nil, &DecodeError{Msg: "an error document has members besides \"error\""}
		}
		return nil, decodeErrorResponse(ev)
	}
	d := &decoder{}
	p := &abi.Plan{Files: []abi.File{}, Args: []string{}, Env: []abi.Pair{}, GitExclude: []string{}, Warnings: []abi.Warning{}}
	d.object(v, "", map[string]func(*Value, string){
		"files": func(x *Value, path string) {
			d.array(x, path, func(item *Value, ip string) {
				var f abi.File
				d.object(item, ip, map[string]func(*Value, string){
					"root":    d.str(&f.Root),
					"path":    d.str(&f.Path),
					"mode":    d.str(&f.Mode),
					"format":  d.str(&f.Format),
					"content": d.str(&f.Content),
					"secret":  d.boolean(&f.Secret),
				})
				p.Files = append(p.Files, f)
			})
		},
		"args": func(x *Value, path string) { p.Args = d.strings(x, path) },
		"env": func(x *Value, path string) {
			d.array(x, path, func(item *Value, ip string) {
				var e abi.Pair
				d.object(item, ip, map[string]func(*Value, string){
					"name":   d.str(&e.Name),
					"value":  d.str(&e.Value),
					"secret": d.boolean(&e.Secret),
				})
				p.Env = append(p.Env, e)
			})
		},
		"prompt":     d.str(&p.Prompt),
		"gitExclude": func(x *Value, path string) { p.GitExclude = d.strings(x, path) },
		"warnings": func(x *Value, path string) {
			d.array(x, path, func(item *Value, ip string) {
				var w abi.Warning
				d.object(item, ip, map[string]func(*Value, string){
					"code":    d.str(&w.Code),
					"message": d.str(&w.Message),
					"server":  d.str(&w.Server),
					"skill":   d.str(&w.Skill),
				})
				p.Warnings = append(p.Warnings, w)
			})
		},
	})
	if d.err != nil {
		return nil, d.err
	}
	return p, nil
}

func decodeErrorResponse(ev *Value) error {
	d := &decoder{}
	var e PluginError
	seen := 0
	d.object(ev, "error", map[string]func(*Value, string){
		"code":    func(x *Value, p string) { seen++; d.str(&e.Code)(x, p) },
		"message": func(x *Value, p string) { d.str(&e.Message)(x, p) },
	})
	if d.err != nil {
		return d.err
	}
	if seen == 0 || e.Code == "" {
		return &DecodeError{Path: "error.code", Msg: "missing or empty error code"}
	}
	return &e
}

// decoder records the first shape error; later calls are no-ops once it is set.
type decoder struct {
	err error
}

func (d *decoder) fail(path, format string, args ...any) {
	if d.err == nil {
		d.err = &DecodeError{Path: path, Msg: fmt.Sprintf(format, args...)}
	}
}

func (d *decoder) object(v *Value, path string, fields map[string]func(*Value, string)) {
	if d.err != nil {
		return
	}
	if v.Kind != Object {
		d.fail(path, "is a %s, want an object", v.Kind)
		return
	}
	for _, m := range v.Members {
		set, ok := fields[m.Name]
		if !ok {
			d.fail(readback.JoinPath(path, m.Name), "unknown member %q", m.Name)
			return
		}
		set(m.Value, readback.JoinPath(path, m.Name))
		if d.err != nil {
			return
		}
	}
}

func (d *decoder) array(v *Value, path string, item func(*Value, string)) {
	if d.err != nil || v.Kind == Null {
		return
	}
	if v.Kind != Array {
		d.fail(path, "is a %s, want an array", v.Kind)
		return
	}
	for i, it := range v.Items {
		item(it, path+"["+strconv.Itoa(i)+"]")
		if d.err != nil {
			return
		}
	}
}

func (d *decoder) strings(v *Value, path string) []string {
	out := []string{}
	d.array(v, path, func(item *Value, ip string) {
		var s string
		d.str(&s)(item, ip)
		out = append(out, s)
	})
	return out
}

func (d *decoder) str(dst *string) func(*Value, string) {
	return func(v *Value, path string) {
		if v.Kind != String {
			d.fail(path, "is a %s, want a string", v.Kind)
			return
		}
		*dst = v.Str
	}
}

func (d *decoder) boolean(dst *bool) func(*Value, string) {
	return func(v *Value, path string) {
		if v.Kind != Bool {
			d.fail(path, "is a %s, want a boolean", v.Kind)
			return
		}
		*dst = v.Bool
	}
}
