package abi_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/loadout-dev/loadout/sdk/abi"
)

// TestCloneIsDeep: changing every list of a clone leaves the original as it was.
func TestCloneIsDeep(t *testing.T) {
	t.Parallel()
	orig := abi.Request{Run: abi.Run{BuiltinTools: []string{"Read"}},
		Servers: []abi.Server{{ID: "s", Args: []string{"a"}, Env: []abi.Pair{{Name: "K", Value: "v"}}, HostEnv: []abi.Pair{{Name: "H", Value: "h"}},
			Headers: []abi.Pair{{Name: "X", Value: "x"}}, AllowedTools: []string{"t"}, DeniedTools: []string{"d"},
			ToolExposure: []abi.Pair{{Name: "t", Value: "direct"}}, OAuth: &abi.OAuth{Scopes: []string{"s"}}}},
		Skills: []abi.Skill{{Name: "k", Resources: []abi.Resource{{Path: "p", Content: "c"}}}}}
	want := orig.Clone()
	c := orig.Clone()
	c.Run.BuiltinTools[0] = "x"
	s := &c.Servers[0]
	s.Args[0], s.Env[0].Value, s.HostEnv[0].Value, s.Headers[0].Value = "x", "x", "x", "x"
	s.AllowedTools[0], s.DeniedTools[0], s.ToolExposure[0].Value, s.OAuth.Scopes[0] = "x", "x", "x", "x"
	c.Skills[0].Resources[0].Content = "x"
	assert.Equal(t, want, orig, "the original after its clone changed")
}
