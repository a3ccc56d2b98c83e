package exposure_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/exposure"
	"github.com/loadout-dev/loadout/sdk/abi"
)

func te(kv ...string) []abi.Pair {
	var out []abi.Pair
	for i := 0; i < len(kv); i += 2 {
		out = append(out, abi.Pair{Name: kv[i], Value: kv[i+1]})
	}
	return out
}

var (
	withDeny = exposure.Harness{Name: "codex", Deny: true}
	noDeny   = exposure.Harness{Name: "allowonly"}
)

func TestApply(t *testing.T) {
	tests := []struct {
		name string
		h    exposure.Harness
		s    exposure.Server
		want exposure.Effect
	}{
		{"no exposure: unchanged", withDeny, exposure.Server{},
			exposure.Effect{}},
		{"unrestricted, exact hidden tool: denied", withDeny,
			exposure.Server{ToolExposure: te("echo", "hidden", "get-sum", "direct")},
			exposure.Effect{Denied: []string{"echo"}}},
		{"restricted: a hidden allowed tool leaves the allow list and is denied", withDeny,
			exposure.Server{Restricted: true, Allowed: []string{"echo", "get-sum", "get-env"}, ToolExposure: te("get-*", "hidden", "get-sum", "direct")},
			exposure.Effect{Restricted: true, Allowed: []string{"echo", "get-sum"}, Denied: []string{"get-env"}}},
		{"restricted, hidden server: only the tools an entry exposes stay", withDeny,
			exposure.Server{Exposure: "hidden", Restricted: true, Allowed: []string{"echo", "get-sum"}, ToolExposure: te("get-*", "direct")},
			exposure.Effect{Restricted: true, Allowed: []string{"get-sum"}, Denied: []string{"echo"}}},
		{"unrestricted, hidden server: restricted to the exactly exposed tools", withDeny,
			exposure.Server{Exposure: "hidden", ToolExposure: te("echo", "direct", "get-env", "hidden", "get-sum", "deferred")},
			exposure.Effect{Restricted: true, Allowed: []string{"echo", "get-sum"}, Denied: []string{"get-env"}, Unsupported: []string{"deferred"}}},
		{"codemode and deferred warned once each, in order", withDeny,
			exposure.Server{Exposure: "codemode", ToolExposure: te("a", "deferred", "b", "codemode", "c", "deferred")},
			exposure.Effect{Unsupported: []string{"codemode", "deferred"}}},
		{"no deny list: a restricted server needs none", noDeny,
			exposure.Server{Restricted: true, Allowed: []string{"echo", "get-sum"}, ToolExposure: te("echo", "hidden")},
			exposure.Effect{Restricted: true, Allowed: []string{"get-sum"}}},
		{"restricted: an exposing entry outside the allowed tools lists nothing", withDeny,
			exposure.Server{Restricted: true, Allowed: []string{"echo"}, ToolExposure: te("weird name", "direct")},
			exposure.Effect{Restricted: true, Allowed: []string{"echo"}}},
		{"restricted to none, not hidden: kept as declared", withDeny,
			exposure.Server{Restricted: true},
			exposure.Effect{Restricted: true}},
	}
	for _, tc := range tests {
		got, ref := exposure.Apply(tc.h, tc.s)
		require.Nil(t, ref, "%s: Apply refused: %+v", tc.name, ref)
		assert.Equal(t, tc.want, got, tc.name)
	}
}

func TestApplyRefuses(t *testing.T) {
	tests := []struct {
		name        string
		h           exposure.Harness
		s           exposure.Server
		code, field string
	}{
		{"hidden, nothing exposed", withDeny, exposure.Server{Exposure: "hidden"},
			exposure.CodeAllHidden, "exposure"},
		{"hidden, only hidden entries", withDeny, exposure.Server{Exposure: "hidden", ToolExposure: te("echo", "hidden")},
			exposure.CodeAllHidden, "exposure"},
		{"restricted, every allowed tool hidden", withDeny,
			exposure.Server{Restricted: true, Allowed: []string{"echo", "get-sum"}, ToolExposure: te("*", "hidden")},
			exposure.CodeAllHidden, "toolExposure"},
		{"restricted to none, hidden", withDeny, exposure.Server{Exposure: "hidden", Restricted: true},
			exposure.CodeAllHidden, "exposure"},
		{"unrestricted, hidden pattern", withDeny,
			exposure.Server{ToolExposure: te("echo", "direct", "*", "hidden")},
			exposure.CodeUnenforceable, "toolExposure.*"},
		{"hidden server, exposing pattern", withDeny,
			exposure.Server{Exposure: "hidden", ToolExposure: te("echo", "direct", "get-*", "codemode")},
			exposure.CodeUnenforceable, "toolExposure.get-*"},
		{"a hidden name no tool list can hold", withDeny,
			exposure.Server{ToolExposure: te("x,Bash", "hidden")},
			exposure.CodeUnenforceable, "toolExposure.x,Bash"},
		{"an exposed name of a hidden server no allow list can hold", withDeny,
			exposure.Server{Exposure: "hidden", ToolExposure: te("echo", "direct", "get sum", "direct")},
			exposure.CodeUnenforceable, "toolExposure.get sum"},
		{"no deny list, unrestricted hidden tool", noDeny,
			exposure.Server{ToolExposure: te("echo", "hidden")},
			exposure.CodeUnenforceable, "toolExposure.echo"},
	}
	for _, tc := range tests {
		got, ref := exposure.Apply(tc.h, tc.s)
		if assert.NotNil(t, ref, "%s: want a refusal, got %+v", tc.name, got) {
			assert.Equal(t, tc.code, ref.Code, "%s: code", tc.name)
			assert.Equal(t, tc.field, ref.Field, "%s: field", tc.name)
			assert.NotEmpty(t, ref.Message, "%s: message", tc.name)
		}
	}
}

func TestApplyNative(t *testing.T) {
	s := exposure.Server{Exposure: "hidden", ToolExposure: te("*", "hidden")}
	got, ref := exposure.Apply(exposure.Harness{Name: "pi", Native: true}, s)
	assert.Nil(t, ref, "a native harness renders exposure itself: no refusal")
	assert.Equal(t, exposure.Effect{}, got, "a native harness: the restriction is left as it is")
}

func TestUnsupportedMessage(t *testing.T) {
	assert.Equal(t, `exposure "codemode" is not supported by claude; tools are exposed directly`,
		exposure.UnsupportedMessage("codemode", "claude"))
}

// TestApplyBoundsPatternWork: resolving many patterns against many allowed tools is refused
// past MaxPatternWork, and accepted up to it.
func TestApplyBoundsPatternWork(t *testing.T) {
	const n = 1024
	allowed := make([]string, n)
	var rules []abi.Pair
	for i := range allowed {
		allowed[i] = "tool" + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676))
	}
	for i := 0; i < exposure.MaxPatternWork/n; i++ {
		rules = append(rules, abi.Pair{Name: "zz*" + allowed[i%n], Value: "hidden"})
	}
	s := exposure.Server{Restricted: true, Allowed: allowed, ToolExposure: rules}
	got, ref := exposure.Apply(withDeny, s)
	require.Nil(t, ref, "exactly MaxPatternWork matches: resolved")
	assert.Len(t, got.Allowed, n, "no pattern matches: every tool stays allowed")

	s.ToolExposure = append(s.ToolExposure, abi.Pair{Name: "zz*", Value: "hidden"})
	_, ref = exposure.Apply(withDeny, s)
	if assert.NotNil(t, ref, "one pattern more: refused") {
		assert.Equal(t, exposure.CodeUnenforceable, ref.Code, "refusal code")
	}
}
