package format_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
)

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"*", "", true}, {"*", "abc", true}, {"get-*", "get-sum", true}, {"get-*", "set-sum", false},
		{"*-sum", "get-sum", true}, {"a*b*c", "axxbyyc", true}, {"a*b*c", "acb", false}, {"a*a", "a", false},
		{"abc", "abc", true}, {"abc", "abcd", false}, {"a**b", "ab", true}, {"get-?", "get-s", false},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, format.GlobMatch(tc.pattern, tc.name), "GlobMatch(%q, %q)", tc.pattern, tc.name)
	}
}

func TestToolExposure(t *testing.T) {
	rules := []abi.Pair{{Name: "get-*", Value: "hidden"}, {Name: "*", Value: "deferred"}, {Name: "get-sum", Value: "direct"}}
	tests := []struct {
		tool, want string
		ok         bool
	}{
		{"get-sum", "direct", true}, // the exact entry wins over an earlier pattern
		{"get-env", "hidden", true}, // else the first matching pattern in order
		{"echo", "deferred", true},  // "*" matches what no earlier pattern did
		{"get-*", "hidden", true},   // a tool named like a pattern matches it exactly
	}
	for _, tc := range tests {
		got, ok := format.ToolExposure(rules, tc.tool)
		assert.Equal(t, tc.want, got, "ToolExposure(%q)", tc.tool)
		assert.Equal(t, tc.ok, ok, "ToolExposure(%q) ok", tc.tool)
	}
	got, ok := format.ToolExposure([]abi.Pair{{Name: "echo", Value: "hidden"}}, "get-sum")
	assert.Equal(t, "", got, "no entry applies")
	assert.False(t, ok, "no entry applies: ok false")
}
