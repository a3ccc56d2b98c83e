package plan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

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
