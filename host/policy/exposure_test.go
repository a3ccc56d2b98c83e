package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/exposure"
	"github.com/loadout-dev/loadout/host/spec"
)

// TestVetExposure: with the rendering harness's exposure, Vet hands the plugin the tool lists
// the harness enforces, reports a refused server in dropped (it claims no id) and warns once
// per server and unsupported value.
func TestVetExposure(t *testing.T) {
	t.Parallel()
	req := &spec.Request{
		Harness: "codex",
		Servers: []spec.Server{
			{Index: 0, ID: "keeper", Transport: "stdio", Command: "npx", Enabled: true, Exposure: "codemode",
				ToolExposure: []spec.Pair{{Name: "echo", Value: "hidden"}, {Name: "get-sum", Value: "deferred"}, {Name: "x", Value: "codemode"}}},
			{Index: 1, ID: "dup", Transport: "stdio", Command: "first", Enabled: true, Exposure: "hidden"},
			{Index: 2, ID: "dup", Transport: "stdio", Command: "second", Enabled: true,
				ToolsDeclared: true, AllowedTools: []string{"echo", "get-sum", "get-env"}, ToolExposure: []spec.Pair{{Name: "get-*", Value: "hidden"}}},
			{Index: 3, ID: "pattern", Transport: "stdio", Command: "npx", Enabled: true, ToolExposure: []spec.Pair{{Name: "trigger-*", Value: "hidden"}}},
		},
	}
	h := &exposure.Harness{Name: "codex", Deny: true}
	v := vet(t, req, nil, VetOptions{Exposure: h})
	got := v.Request()
	require.Len(t, got.Servers, 2, "kept servers: keeper and the second dup")
	keeper, dup := got.Servers[0], got.Servers[1]
	assert.False(t, keeper.ToolsRestricted, "keeper stays unrestricted")
	assert.Equal(t, []string{"echo"}, keeper.DeniedTools, "keeper denies its hidden tool")
	assert.Equal(t, "second", dup.Command, "the refused first dup claims no id")
	assert.True(t, dup.ToolsRestricted, "dup stays restricted")
	assert.Equal(t, []string{"echo"}, dup.AllowedTools, "the tools the pattern hides leave the allow list")
	assert.Equal(t, []string{"get-sum", "get-env"}, dup.DeniedTools, "and are denied")

	var codes, fields []string
	for _, d := range v.Dropped() {
		codes, fields = append(codes, d.Code), append(fields, d.Field)
		assert.Equal(t, "profile codex", d.Rule, "drop %s: rule", d.Code)
	}
	assert.Equal(t, []string{exposure.CodeAllHidden, exposure.CodeUnenforceable}, codes, "dropped codes")
	assert.Equal(t, []string{"mcpServers[1].exposure", "mcpServers[3].toolExposure.trigger-*"}, fields, "dropped fields")

	var warned []string
	for _, w := range v.Warnings() {
		if w.Code == exposure.CodeUnsupported {
			warned = append(warned, w.Server+": "+w.Message)
		}
	}
	assert.Equal(t, []string{
		`keeper: exposure "codemode" is not supported by codex; tools are exposed directly`,
		`keeper: exposure "deferred" is not supported by codex; tools are exposed directly`,
	}, warned, "one warning per server and value")

	// Without a harness (policy eval) the request's restriction is handed on as it is.
	plain := vet(t, req, nil, VetOptions{}).Request()
	require.Len(t, plain.Servers, 3, "no harness: nothing refused for exposure")
	assert.Nil(t, plain.Servers[0].DeniedTools, "no harness: no deny list")
}
