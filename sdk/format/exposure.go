package format

import (
	"strings"

	"github.com/loadout-dev/loadout/sdk/abi"
)

// ToolExposure returns the exposure that rules (a server's toolExposure, in request order)
// give tool: its exact entry wins, else the first entry whose "*" pattern matches it. ok is
// false when no entry applies, and the server's own exposure then does. The host resolves
// exposures with it for a harness that has no exposure of its own, and Pi's renderer for Pi's
// own lists, so both read a pattern the same way.
func ToolExposure(rules []abi.Pair, tool string) (string, bool) {
	for _, r := range rules {
		if r.Name == tool {
			return r.Value, true
		}
	}
	for _, r := range rules {
		if IsPattern(r.Name) && GlobMatch(r.Name, tool) {
			return r.Value, true
		}
	}
	return "", false
}

// IsPattern reports whether a toolExposure name is a "*" pattern rather than a tool name.
func IsPattern(name string) bool { return strings.Contains(name, "*") }

// GlobMatch reports whether name matches pattern, where "*" matches any run of characters
// (none included) and every other character only itself.
func GlobMatch(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	first, last := parts[0], parts[len(parts)-1]
	if len(name) < len(first)+len(last) || !strings.HasPrefix(name, first) || !strings.HasSuffix(name, last) {
		return false
	}
	middle := name[len(first) : len(name)-len(last)]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(middle, p)
		if i < 0 {
			return false
		}
		middle = middle[i+len(p):]
	}
	return true
}
