package plan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/BurntSushi/toml"
	"go.yaml.in/yaml/v3"
)

// TOMLDoc is a parsed TOML document: its values and its keys in document order.
type TOMLDoc struct {
	Map  map[string]any
	Keys []toml.Key
}

// ParseTOML parses a TOML document (github.com/BurntSushi/toml, which rejects duplicate keys).
func ParseTOML(s string) (doc *TOMLDoc, err error) {
	defer func() {
		if r := recover(); r != nil {
			doc, err = nil, fmt.Errorf("toml decoder panic: %v", r)
		}
	}()
	m := map[string]any{}
	md, err := toml.Decode(s, &m)
	if err != nil {
		return nil, err
	}
	return &TOMLDoc{Map: m, Keys: md.Keys()}, nil
}

// ErrFrontMatter is returned by FrontMatter for a front matter block that is not closed or not
// a YAML mapping.
var ErrFrontMatter = errors.New("invalid front matter")

// FrontMatter splits a markdown document. When it starts with "---\n", the front matter runs to
// the next line that is exactly "---"; it must parse as YAML (go.yaml.in/yaml/v3) and be a
// mapping, returned decoded. has is false when the document has no front matter.
func FrontMatter(s string) (fm string, value map[string]any, has bool, err error) {
	const fence = "---\n"
	if !strings.HasPrefix(s, fence) {
		return "", nil, false, nil
	}
	rest := s[len(fence):]
	end := -1
	switch {
	case strings.HasPrefix(rest, "---\n") || rest == "---":
		end = 0
	default:
		if i := strings.Index(rest, "\n---\n"); i >= 0 {
			end = i + 1
		} else if strings.HasSuffix(rest, "\n---") {
			end = len(rest) - 3
		}
	}
	if end < 0 {
		return "", nil, true, fmt.Errorf("%w: no closing ---", ErrFrontMatter)
	}
	fm = rest[:end]
	value, err = parseYAMLMapping(fm)
	if err != nil {
		return fm, nil, true, err
	}
	return fm, value, true, nil
}

func parseYAMLMapping(fm string) (m map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("%w: yaml decoder panic: %v", ErrFrontMatter, r)
		}
	}()
	var node yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader([]byte(fm)))
	if err := dec.Decode(&node); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: empty", ErrFrontMatter)
		}
		return nil, fmt.Errorf("%w: %w", ErrFrontMatter, err)
	}
	if len(node.Content) != 1 || node.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%w: not a mapping", ErrFrontMatter)
	}
	m = map[string]any{}
	if err := node.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFrontMatter, err)
	}
	return m, nil
}

// jsonStrings returns every member name and string value of v.
func jsonStrings(v *Value) []string {
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

// tomlStrings returns every key and string value of a TOML document.
func tomlStrings(d *TOMLDoc) []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch t := v.(type) {
		case string:
			out = append(out, t)
		case []any:
			for _, it := range t {
				walk(it)
			}
		case []map[string]any:
			for _, it := range t {
				walk(it)
			}
		case map[string]any:
			for k, it := range t {
				out = append(out, k)
				walk(it)
			}
		}
	}
	walk(d.Map)
	return out
}
