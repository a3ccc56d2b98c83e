package plan_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// hiding is input(harness) whose unrestricted server alpha hides tool echo: the host denies it
// (host/exposure), and on a harness with exposure of its own alpha carries the rule itself.
func hiding(harness string) plan.Input {
	if harness == "pi-restricted" { // beta, restricted to search, hides it by pattern
		in := input("pi")
		in.Request.Servers[1].ToolExposure = []abi.Pair{{Name: "s*", Value: "hidden"}}
		return in
	}
	in := input(harness)
	if harness == "pi" {
		in.Request.Servers[0].ToolExposure = []abi.Pair{{Name: "echo", Value: "hidden"}}
	} else {
		in.Request.Servers[0].DeniedTools = []string{"echo"}
	}
	return in
}

// TestCheckDeniedTools: a plan must deny exactly the tools the vetted request denies, in the
// harness's deny list, and a harness with exposure of its own must carry the vetted exposure.
func TestCheckDeniedTools(t *testing.T) {
	t.Parallel()
	claudeArgs := func(deny ...string) func(*abi.Plan) {
		return func(p *abi.Plan) {
			end := len(p.Args) - 1 // --strict-mcp-config
			args := append([]string{}, p.Args[:end]...)
			if len(deny) > 0 {
				args = append(append(args, "--disallowedTools"), deny...)
			}
			p.Args = append(args, p.Args[end:]...)
		}
	}
	replace := func(from, to string) func(*abi.Plan) {
		return func(p *abi.Plan) {
			require.Contains(t, p.Files[0].Content, from, "fixture config holds %q", from)
			p.Files[0].Content = strings.Replace(p.Files[0].Content, from, to, 1)
		}
	}
	const codexAlpha = "LOADOUT_SPAWN_3 = \"test\" }\n"
	const piAlpha = `"LOADOUT_SPAWN_3":"test"}}`
	tests := []struct {
		name, harness string
		mutate        func(*abi.Plan)
		ok            bool
	}{
		{"claude denies the hidden tool", "claude", claudeArgs("mcp__alpha__echo"), true},
		{"claude without --disallowedTools", "claude", claudeArgs(), false},
		{"claude denies another tool", "claude", claudeArgs("mcp__alpha__echo", "mcp__alpha__other"), false},
		{"claude deny rule holding two rules", "claude", claudeArgs("mcp__alpha__echo,mcp__beta__search"), false},
		{"claude deny rule twice", "claude", claudeArgs("mcp__alpha__echo", "mcp__alpha__echo"), false},
		{"claude deny rule for an unknown server", "claude", claudeArgs("mcp__alpha__echo", "mcp__gamma__x"), false},
		{"codex disabled_tools", "codex", replace(codexAlpha, codexAlpha+"disabled_tools = [\"echo\"]\n"), true},
		{"codex without disabled_tools", "codex", func(*abi.Plan) {}, false},
		{"codex disabled_tools empty", "codex", replace(codexAlpha, codexAlpha+"disabled_tools = []\n"), false},
		{"codex disabled_tools another tool", "codex", replace(codexAlpha, codexAlpha+"disabled_tools = [\"echo\", \"x\"]\n"), false},
		{"codex denies on a server that hides nothing", "codex", func(p *abi.Plan) {
			replace(codexAlpha, codexAlpha+"disabled_tools = [\"echo\"]\n")(p)
			replace("enabled_tools = [\"search\"]\n", "enabled_tools = [\"search\"]\ndisabled_tools = [\"search\"]\n")(p)
		}, false},
		{"pi renders the hidden tool", "pi", replace(piAlpha, `"LOADOUT_SPAWN_3":"test"},"toolExposure":{"echo":"hidden"}}`), true},
		{"pi drops the hidden tool", "pi", func(*abi.Plan) {}, false},
		{"pi exposes it instead", "pi", replace(piAlpha, `"LOADOUT_SPAWN_3":"test"},"toolExposure":{"echo":"direct"}}`), false},
		{"pi adds a server exposure", "pi", replace(piAlpha, `"LOADOUT_SPAWN_3":"test"},"exposure":"direct","toolExposure":{"echo":"hidden"}}`), false},
		{"a profile without a deny list", "acme", func(*abi.Plan) {}, false},
		{"pi exposes an allowed tool the vetted exposure hides", "pi-restricted", func(*abi.Plan) {}, false},
		{"pi hides the allowed tool the vetted exposure hides", "pi-restricted",
			replace(`"toolExposure":{"search":"direct"}`, `"toolExposure":{"search":"hidden"}`), true},
	}
	base := map[string]func() *abi.Plan{"claude": claudePlan, "codex": codexPlan, "pi": piPlan, "pi-restricted": piPlan, "acme": acmePlan}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := base[tc.harness]()
			tc.mutate(p)
			err := checkPlan(p, hiding(tc.harness))
			if tc.ok {
				require.NoError(t, err, "Check(%s)", tc.name)
				return
			}
			require.Error(t, err, "Check(%s) = nil, want a %s violation", tc.name, plan.RuleToolRestrictions)
			assert.Contains(t, rules(err), plan.RuleToolRestrictions, "Check(%s) rules; error: %v", tc.name, err)
		})
	}
}

// TestCheckAllowListRequired: on a harness whose tool lists live in its config, a restricted
// server without its allow list would offer every tool.
func TestCheckAllowListRequired(t *testing.T) {
	t.Parallel()
	p := acmePlan()
	p.Files[0].Content = strings.Replace(p.Files[0].Content, `,"allowedTools":["search"]`, "", 1)
	err := checkPlan(p, input("acme"))
	require.Error(t, err, "Check(acme plan without beta's allow list) = nil")
	assert.Contains(t, rules(err), plan.RuleToolRestrictions, "rules; error: %v", err)
}

// TestCheckSpellsToolNamesAsTheHarness: a rule names a tool as the harness's rules match it
// (tools.names): Claude Code replaces a "." by "_", so a hidden admin.delete is denied as
// mcp__alpha__admin_delete and a deny rule spelled with the "." (which matches nothing) is
// refused; Codex matches the server's own names, so its deny list keeps the ".".
func TestCheckSpellsToolNamesAsTheHarness(t *testing.T) {
	t.Parallel()
	claude := func(deny ...string) *abi.Plan {
		p := claudePlan()
		end := len(p.Args) - 1
		args := append(append([]string{}, p.Args[:end]...), "--disallowedTools")
		p.Args = append(append(args, deny...), p.Args[end:]...)
		return p
	}
	in := input("claude")
	in.Request.Servers[0].DeniedTools = []string{"admin.delete"}
	require.NoError(t, checkPlan(claude("mcp__alpha__admin_delete"), in), "claude: the hidden tool as Claude names it")
	err := checkPlan(claude("mcp__alpha__admin.delete"), in)
	require.Error(t, err, "claude: a deny rule with the tool's own spelling matches nothing")
	assert.Contains(t, rules(err), plan.RuleToolRestrictions, "rules; error: %v", err)

	in = input("claude")
	in.Request.Servers[1].AllowedTools = []string{"read.all"}
	p := claudePlan()
	p.Prompt = promptHead + "- alpha: all tools\n- beta: only read.all (mcp__beta__read_all)\n"
	p.Args[6] = "mcp__beta__read_all"
	require.NoError(t, checkPlan(p, in), "claude: an allowed dotted tool as Claude names it")
	p.Args[6] = "mcp__beta__read.all"
	assert.Error(t, checkPlan(p, in), "claude: an allow rule with the tool's own spelling")

	const codexAlpha = "LOADOUT_SPAWN_3 = \"test\" }\n"
	in = input("codex")
	in.Request.Servers[0].DeniedTools = []string{"admin.delete"}
	for deny, ok := range map[string]bool{`["admin.delete"]`: true, `["admin_delete"]`: false} {
		p := codexPlan()
		p.Files[0].Content = strings.Replace(p.Files[0].Content, codexAlpha, codexAlpha+"disabled_tools = "+deny+"\n", 1)
		if err := checkPlan(p, in); ok {
			assert.NoError(t, err, "codex disabled_tools = %s", deny)
		} else {
			assert.Error(t, err, "codex disabled_tools = %s", deny)
		}
	}
	prof := profileOf("claude")
	assert.Equal(t, "admin_delete_x-y", prof.RuleToolName("admin.delete x-y"), "claude keeps [A-Za-z0-9_-]")
	assert.Equal(t, "admin.delete", profileOf("codex").RuleToolName("admin.delete"), "codex is exact")
}
