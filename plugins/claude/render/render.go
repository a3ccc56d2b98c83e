// Package render is loadout's Claude Code renderer (the render.claude plugin), measured against
// Claude Code 2.1.328 (docs/FORMATS.md §1). It is its profile (profile.yaml, as the Go literal
// profile_gen.go that go generate writes) rendered by the SDK's profile-driven renderer
// (sdk/harness), plus what the profile cannot say: a server is not offered when a tool it hides
// cannot be spelled as a --disallowedTools rule.
//
// It renders:
//   - {{loadout.root.run}}/mcp-servers.json (mode 0600, Secret when a secret pair is in it):
//     {"mcpServers": {...}} in server order; stdio servers as type/command/args/env, http
//     servers as type/url/headers (Claude needs "type": "http"), timeout in milliseconds,
//     and an http server's oauth (clientId, callbackPort, scopes as one space-separated
//     string, an https authServerMetadataUrl). Claude has no "enabled" key: a disabled server
//     is omitted with a warning; it has no lifecycle setting either (warning
//     lifecycle_unsupported).
//   - every stdio server launched through /usr/bin/env -i (format.WrapSpawn, docs/SPAWN-ENV.md),
//     because Claude passes its whole environment (its API key included) to the servers it
//     spawns: the server gets exactly its spawn environment (HostEnv, then its own env), the
//     values travel in alias variables of the config's env map, split at each "${", and a cwd
//     becomes env's -C, since Claude has no per-server working directory.
//   - args: --mcp-config <file> [--allowedTools <rule>...] [--disallowedTools <rule>...]
//     --strict-mcp-config; --allowedTools pre-approves exactly the run's built-in tools
//     (run.builtinTools, none by default) and, when a server is restricted, the servers' rules
//     (tools.rules); --disallowedTools names every tool the host denies (the ones the request's
//     exposure hides), which Claude then does not offer at all. --allowedTools is variadic in
//     Claude Code (docs/FORMATS.md §1.3): every rule is its own argv entry right after the
//     flag, and the boolean --strict-mcp-config closes the list, so a prompt or flag the
//     caller appends after these args is never read as a tool rule.
//   - skills: natively under {{loadout.root.config}}/skills/<name>/ with CLAUDE_CONFIG_DIR
//     pointing at the config root for an isolated run; for an ambient-auth run (the user's own
//     config home, which loadout must not write to) the resources go under the checkout's
//     .cat-context/skill/<name>/, the instructions are folded into the prompt, and
//     .cat-context/ is git-excluded.
//   - a prompt that names every rendered server and the tools it may use.
//
// Claude Code expands ${VAR} (and ${VAR:-default}) from its own environment in command, args,
// env, url and headers, and header values twice. Literal values are therefore spelled with
// the profile's value syntax, which Claude turns back into the literal text; the plan sets
// LOADOUT_SPAWN_DOLLAR=$ in the harness's env whenever the config refers to it, so that the
// rewrite cannot be redirected. A secret is a placeholder the plugin cannot see into: the host
// must refuse or encode a secret value holding "${".
//
// Render is pure and deterministic. The plugin's main package registers it with the sdk for the
// wasm build; it lives in a package of its own so that the engines' benchmarks can run the same
// render natively, side by side with the wasm build (host/engine/bench).
package render

import (
	"fmt"
	"strings"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/harness"
)

//go:generate go run github.com/loadout-dev/loadout/sdk/cmd/profilegen -in ../profile.yaml

// Manifest is the plugin's manifest.
var Manifest = abi.Manifest{
	Name:         "render.claude",
	Version:      "1.0.0",
	ABIVersion:   abi.Version,
	Harness:      "claude",
	Transports:   []string{abi.TransportStdio, abi.TransportHTTP},
	NativeSkills: true,
	Roots:        []string{abi.RootConfig, abi.RootRun, abi.RootCheckout},
}

// warnToolRule: a tool the server hides has no --disallowedTools rule; the server is left out.
const warnToolRule = "tool_rule_unsupported"

var renderer = harness.MustNew(harness.Renderer{
	Manifest:     Manifest,
	Profile:      harnessProfile,
	Name:         "Claude Code",
	TypeStdio:    true,
	SplitAliases: true,
	WarnDisabled: true,
	// The longest tool name the API accepts; Claude drops a tool whose name is longer.
	MaxToolName: 128,
	Admit:       admit,
})

// Render renders req for Claude Code.
func Render(req abi.Request) (abi.Plan, error) { return renderer.Render(req) }

// admit leaves s out when a tool it hides cannot be denied: Claude splits a rule at commas and
// whitespace and refuses parentheses in an MCP rule, so the server is not offered at all.
func admit(s abi.Server, _ []string) *abi.Warning {
	for _, t := range s.DeniedTools {
		if strings.ContainsAny(t, ", \t\n\r\v\f()") {
			return &abi.Warning{Code: warnToolRule, Server: s.ID,
				Message: fmt.Sprintf("hidden tool %q cannot be spelled as a --disallowedTools rule; the server is not rendered", t)}
		}
	}
	return nil
}
