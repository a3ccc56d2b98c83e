package readback

import (
	"fmt"

	"github.com/BurntSushi/toml"
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

// Strings returns every key and string value of d.
func (d *TOMLDoc) Strings() []string { return tomlStrings(d.Map) }

// tomlStrings returns every key and string value under v.
func tomlStrings(v any) []string {
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
	walk(v)
	return out
}
