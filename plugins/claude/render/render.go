// Package render is loadout's Claude Code renderer (the render.claude plugin), measured against
// Claude Code 2.1.328 (docs/FORMATS.md §1).
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
//     values travel in alias variables of the config's env map, and a cwd becomes env's -C,
//     since Claude has no per-server working directory.
//   - args: --mcp-config <file> [--allowedTools <rule>...] [--disallowedTools <rule>...]
//     --strict-mcp-config; --allowedTools pre-approves exactly the run's built-in tools
//     (run.builtinTools, none by default) and, when a server is restricted, the servers' rules;
//     --disallowedTools names every tool the host denies (the ones the
//     request's exposure hides), which Claude then does not offer at all. --allowedTools
//     is variadic in Claude Code (docs/FORMATS.md §1.3): every rule is its own argv entry
//     right after the flag, and the boolean --strict-mcp-config closes the list, so a prompt or flag the
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
// the profile's value syntax (env values split at "${", header values spelled for both passes), which Claude turns back into the literal text; the plan sets
// LOADOUT_SPAWN_DOLLAR=$ in the harness's env so that the rewrite cannot be redirected. A secret
// is a placeholder the plugin cannot see into: the host must refuse or encode a secret value
// holding "${".
//
// Render is pure and deterministic. The plugin's main package registers it with the sdk for the
// wasm build; it lives in a package of its own so that the engines' benchmarks can run the same
// render natively, side by side with the wasm build (host/engine/bench).
package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
	"github.com/loadout-dev/loadout/sdk/profile"
	"github.com/loadout-dev/loadout/sdk/valuesyntax"
)

//go:generate go run github.com/loadout-dev/loadout/sdk/cmd/profilegen -in ../profile.yaml

// spawnStyle launches a stdio server as the profile says, its values split at "${" into several
// aliases rather than spelled.
var spawnStyle = func() format.SpawnStyle {
	st := harnessProfile.SpawnStyle()
	st.Split = true
	return st
}()

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

const (
	mcpConfigPath = "mcp-servers.json"
	// maxToolName is the longest tool name the API accepts; Claude drops longer ones.
	maxToolName = 128
	// maxTimeoutMS is the largest delay a Node timer honours; a larger one fires at once.
	maxTimeoutMS = 2147483647
)

// Warning codes this plugin emits.
const (
	warnDisabled    = "server_disabled"
	warnUnwrappable = format.WarnCommandUnwrappable
	warnEnvName     = format.WarnEnvNameUnsupported
	warnTimeout     = abi.WarnTimeoutAdjusted
	warnToolName    = "tool_name_too_long"
	warnToolRule    = "tool_rule_unsupported"
)

// Render renders req for Claude Code.
func Render(req abi.Request) (abi.Plan, error) {
	skills, skillWarns, err := format.PrepareSkills(req.Skills)
	if err != nil {
		return abi.Plan{}, err
	}
	plan := abi.Plan{Files: []abi.File{}, Args: []string{}, Env: []abi.Pair{}, GitExclude: []string{}, Warnings: []abi.Warning{}}

	servers := format.NewObject()
	secret := false
	var rendered []abi.Server
	for _, s := range req.Servers {
		entry, isSecret, warns, ok := renderServer(s)
		plan.Warnings = append(plan.Warnings, warns...)
		if !ok {
			continue
		}
		servers.Set(s.ID, entry)
		secret = secret || isSecret
		rendered = append(rendered, s)
	}
	content, err := format.MarshalJSON(format.NewObject().Set("mcpServers", servers))
	if err != nil {
		return abi.Plan{}, fmt.Errorf("encode %s: %w", mcpConfigPath, err)
	}
	plan.Files = append(plan.Files, format.ConfigFile(abi.RootRun, mcpConfigPath, abi.FormatJSON, content, secret))

	if strings.Contains(string(content), valuesyntax.DollarRefDefault) {
		// Claude rewrites the dollar reference to "$" only while this variable is unset or "$".
		plan.Env = append(plan.Env, abi.Pair{Name: "LOADOUT_SPAWN_DOLLAR", Value: "$"})
	}
	plan.Args = append(plan.Args, "--mcp-config", "{{loadout.root.run}}/"+mcpConfigPath)
	rules, warns, restricted := allowRules(rendered)
	if restricted || len(req.Run.BuiltinTools) > 0 {
		// Exactly the built-in tools the run pre-approves, and the servers' rules only when one
		// is restricted: restricting a server never pre-approves a built-in tool.
		plan.Args = append(plan.Args, "--allowedTools")
		plan.Args = append(plan.Args, req.Run.BuiltinTools...)
		if restricted {
			plan.Args = append(plan.Args, rules...)
			plan.Warnings = append(plan.Warnings, warns...)
		}
	}
	if deny := denyRules(rendered); len(deny) > 0 {
		plan.Args = append(plan.Args, "--disallowedTools")
		plan.Args = append(plan.Args, deny...)
	}
	plan.Args = append(plan.Args, "--strict-mcp-config")

	var prompt strings.Builder
	writeServerPrompt(&prompt, rendered)

	plan.Warnings = append(plan.Warnings, skillWarns...)
	if err := format.PlaceSkills(&plan, &prompt, skills, req.Run.AmbientAuth, "skills"); err != nil {
		return abi.Plan{}, err
	}
	if !req.Run.AmbientAuth {
		plan.Env = append(plan.Env, abi.Pair{Name: "CLAUDE_CONFIG_DIR", Value: "{{loadout.root.config}}"})
	}
	plan.Prompt = prompt.String()
	return plan, nil
}

// renderServer returns the mcpServers entry of s, whether it holds a secret, the warnings, and
// false when the server is not rendered.
func renderServer(s abi.Server) (*format.Object, bool, []abi.Warning, bool) {
	warn := func(code, msg string) abi.Warning { return abi.Warning{Code: code, Server: s.ID, Message: msg} }
	switch {
	case s.Transport != abi.TransportStdio && s.Transport != abi.TransportHTTP:
		return nil, false, []abi.Warning{warn(abi.WarnTransportUnsupported, fmt.Sprintf("transport %q is not supported by Claude Code; the server is not rendered", s.Transport))}, false
	case !s.Enabled:
		return nil, false, []abi.Warning{warn(warnDisabled, "Claude Code has no way to configure a disabled server; the server is not rendered")}, false
	case format.IsJSPrototypeName(s.ID):
		return nil, false, []abi.Warning{warn(abi.WarnServerNameReserved, fmt.Sprintf("Claude Code reserves the server name %q; the server is not rendered", s.ID))}, false
	}
	for _, t := range s.DeniedTools {
		if strings.ContainsAny(t, ", \t\n\r\v\f()") {
			// Claude splits a rule at commas and whitespace and refuses parentheses in an MCP
			// rule: the tool could not be denied, so the server is not offered at all.
			return nil, false, []abi.Warning{warn(warnToolRule, fmt.Sprintf("hidden tool %q cannot be spelled as a --disallowedTools rule; the server is not rendered", t))}, false
		}
	}
	var warns []abi.Warning
	entry := format.NewObject()
	secret := false
	if s.Transport == abi.TransportStdio {
		sp, spawnWarns, ok := format.SpawnServer(spawnStyle, s, s.Cwd)
		if !ok {
			return nil, false, spawnWarns, false
		}
		warns = append(warns, spawnWarns...)
		entry.Set("type", "stdio").Set("command", sp.Command).Set("args", sp.Args)
		env, secretEnv := sp.EnvObject()
		secret = secret || secretEnv
		if env.Len() > 0 {
			entry.Set("env", env)
		}
	} else {
		entry.Set("type", "http").Set("url", harnessProfile.Spell(profile.PosURL, s.URL))
		headers, secretHeader := format.HeaderObject(s.Headers, func(v string) string { return harnessProfile.Spell(profile.PosHeaders, v) })
		secret = secret || secretHeader
		if headers.Len() > 0 {
			entry.Set("headers", headers)
		}
	}
	if ms, w, ok := timeoutMS(s.Timeout); ok {
		entry.Set("timeout", ms)
		if w != "" {
			warns = append(warns, warn(warnTimeout, w))
		}
	} else if w != "" {
		warns = append(warns, warn(warnTimeout, w))
	}
	if s.Transport == abi.TransportHTTP && s.OAuth != nil {
		oauth, left := renderOAuth(*s.OAuth)
		if oauth.Len() > 0 {
			entry.Set("oauth", oauth)
		}
		if w := format.OAuthWarning(s, "Claude Code", left); w != nil {
			warns = append(warns, *w)
		}
	}
	if w := format.LifecycleWarning(s, "Claude Code"); w != nil {
		warns = append(warns, *w)
	}
	return entry, secret, warns, true
}

// renderOAuth is Claude Code's oauth object for o (docs/FORMATS.md §1.1): the scopes as one
// space-separated string, and the metadata URL only when it is https, since Claude skips an
// entry whose metadata URL is anything else. It also returns what it left out.
func renderOAuth(o abi.OAuth) (*format.Object, []string) {
	obj := format.NewObject()
	var left []string
	if o.ClientID != "" {
		obj.Set("clientId", o.ClientID)
	}
	if o.CallbackPort != 0 {
		obj.Set("callbackPort", int64(o.CallbackPort))
	}
	if len(o.Scopes) > 0 {
		obj.Set("scopes", strings.Join(o.Scopes, " "))
	}
	switch {
	case o.AuthServerMetadataURL == "":
	case strings.HasPrefix(o.AuthServerMetadataURL, "https://"):
		obj.Set("authServerMetadataUrl", o.AuthServerMetadataURL)
	default:
		left = append(left, "authServerMetadataUrl (Claude Code reads only an https:// one)")
	}
	return obj, left
}

// timeoutMS converts a timeout in seconds to Claude's milliseconds. It returns false when no
// timeout is set, and a warning text when the value had to be adjusted.
func timeoutMS(seconds float64) (int64, string, bool) {
	switch {
	case seconds == 0:
		return 0, "", false
	case seconds < 0:
		return 0, fmt.Sprintf("timeout %gs is negative; the harness default is used", seconds), false
	case seconds*1000 < 1000:
		return 1000, fmt.Sprintf("timeout %gs is below Claude Code's 1s minimum; rendered as 1s", seconds), true
	case seconds*1000 > maxTimeoutMS:
		return maxTimeoutMS, fmt.Sprintf("timeout %gs exceeds the largest timer Claude Code honours; rendered as %dms", seconds, maxTimeoutMS), true
	}
	return int64(seconds*1000 + 0.5), "", true
}

// allowRules returns the rules of --allowedTools (the profile's tools.rules) for the rendered servers, in server
// order, with a warning per rule Claude would drop, and whether any server is restricted (only
// then is --allowedTools rendered at all).
func allowRules(servers []abi.Server) ([]string, []abi.Warning, bool) {
	restricted := false
	rules := []string{}
	var warns []abi.Warning
	for _, s := range servers {
		if !s.ToolsRestricted {
			rules = append(rules, harnessProfile.ServerRule(s.ID))
			continue
		}
		restricted = true
		for _, tool := range s.AllowedTools {
			rule := harnessProfile.ToolRule(s.ID, tool)
			if slices.Contains(rules, rule) {
				continue // another allowed tool Claude names the same
			}
			if len(rule) > maxToolName {
				warns = append(warns, abi.Warning{Code: warnToolName, Server: s.ID,
					Message: fmt.Sprintf("tool name %q has %d characters; Claude Code drops tools whose name exceeds %d", rule, len(rule), maxToolName)})
			}
			rules = append(rules, rule)
		}
	}
	return rules, warns, restricted
}

// denyRules returns the --disallowedTools rules of the rendered servers: the name Claude gives
// every tool a server denies (the ones its exposure hides), once each, in server order. A denied
// tool is not offered to the model at all (docs/FORMATS.md §1.3, §4.1).
func denyRules(servers []abi.Server) []string {
	var rules []string
	for _, s := range servers {
		for _, t := range s.DeniedTools {
			if rule := harnessProfile.ToolRule(s.ID, t); !slices.Contains(rules, rule) {
				rules = append(rules, rule)
			}
		}
	}
	return rules
}

// writeServerPrompt states each rendered server's permitted tools.
func writeServerPrompt(b *strings.Builder, servers []abi.Server) {
	b.WriteString(format.ServersPrompt(servers, harnessProfile.PromptName()))
}
