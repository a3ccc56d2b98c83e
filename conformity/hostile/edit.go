package hostile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
)

// editor sets keys of one server entry of a rendered config. A value is a string, a bool, a
// []string or a []abi.Pair (an object of strings).
type editor interface {
	set(key string, v any)
}

// editServer edits server id of the plan's config file in place, keeping everything else.
func (l *layout) editServer(p *abi.Plan, id string, edit func(editor)) error {
	f, err := l.configFile(p)
	if err != nil {
		return err
	}
	var content string
	if l.toml {
		content, err = editTOML(f.Content, l.servers, id, edit)
	} else {
		content, err = editJSON(f.Content, l.servers, id, edit)
	}
	if err != nil {
		return fmt.Errorf("%w: edit %s: %v", errNoTarget, f.Path, err)
	}
	f.Content = content
	return nil
}

// jsonEntry edits a decoded server object.
type jsonEntry struct{ o *format.Object }

func (e jsonEntry) set(key string, v any) {
	if ps, ok := v.([]abi.Pair); ok {
		obj := format.NewObject()
		for _, p := range ps {
			obj.Set(p.Name, p.Value)
		}
		v = obj
	}
	e.o.Set(key, v)
}

func editJSON(content, servers, id string, edit func(editor)) (string, error) {
	dec := json.NewDecoder(strings.NewReader(content))
	dec.UseNumber()
	v, err := decodeJSON(dec)
	if err != nil {
		return "", err
	}
	root, _ := v.(*format.Object)
	if root == nil {
		return "", fmt.Errorf("not an object")
	}
	all, _ := root.Get(servers)
	list, _ := all.(*format.Object)
	if list == nil {
		return "", fmt.Errorf("no %s object", servers)
	}
	entry, _ := list.Get(id)
	obj, _ := entry.(*format.Object)
	if obj == nil {
		return "", fmt.Errorf("no server %s", id)
	}
	edit(jsonEntry{obj})
	b, err := format.MarshalJSON(root)
	return string(b), err
}

// decodeJSON decodes one JSON value keeping the order of object members.
func decodeJSON(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch x := tok.(type) {
	case json.Delim:
		if x == '[' {
			out := []any{}
			for dec.More() {
				v, err := decodeJSON(dec)
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			}
			_, err := dec.Token()
			return out, err
		}
		obj := format.NewObject()
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeJSON(dec)
			if err != nil {
				return nil, err
			}
			obj.Set(k.(string), v)
		}
		_, err := dec.Token()
		return obj, err
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n, nil
		}
		return x.Float64()
	default:
		return x, nil // string, bool, nil
	}
}

// tomlEntry edits the lines of one [servers.id] table written with one key = value line per
// key (a table written otherwise is not found, and the attack reports it).
type tomlEntry struct{ lines *[]string }

func (e tomlEntry) set(key string, v any) {
	var b []byte
	switch x := v.(type) {
	case string:
		b = format.AppendTOMLString(nil, x)
	case bool:
		b = strconv.AppendBool(nil, x)
	case []string:
		b = append(b, '[')
		for i, s := range x {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = format.AppendTOMLString(b, s)
		}
		b = append(b, ']')
	case []abi.Pair:
		b = append(b, "{ "...)
		for i, p := range x {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = format.AppendTOMLKey(b, p.Name)
			b = append(b, " = "...)
			b = format.AppendTOMLString(b, p.Value)
		}
		b = append(b, " }"...)
	default:
		panic(fmt.Sprintf("hostile: cannot write %T to TOML", v)) // the attacks set no other type
	}
	line := key + " = " + string(b)
	for i, l := range *e.lines {
		if strings.HasPrefix(l, key+" = ") {
			(*e.lines)[i] = line
			return
		}
	}
	*e.lines = append(*e.lines, line)
}

func editTOML(content, servers, id string, edit func(editor)) (string, error) {
	lines := strings.Split(content, "\n")
	var key []byte
	key = format.AppendTOMLKey(key, servers)
	key = append(key, '.')
	key = format.AppendTOMLKey(key, id)
	header := "[" + string(key) + "]"
	start := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == header {
			start = i + 1
			break
		}
	}
	if start < 0 {
		return "", fmt.Errorf("no table %s", header)
	}
	end := start
	for end < len(lines) && lines[end] != "" && !strings.HasPrefix(lines[end], "[") {
		end++
	}
	body := append([]string(nil), lines[start:end]...)
	edit(tomlEntry{&body})
	var out bytes.Buffer
	for _, l := range lines[:start] {
		out.WriteString(l + "\n")
	}
	for _, l := range body {
		out.WriteString(l + "\n")
	}
	out.WriteString(strings.Join(lines[end:], "\n"))
	return out.String(), nil
}
