// Command copilot is loadout's GitHub Copilot CLI renderer plugin (render.copilot), measured
// against @github/copilot 1.0.102, which reads MCP servers from the mcpServers object of
// $COPILOT_HOME/mcp-config.json (docs/FORMATS.md §5.2).
//
// It renders:
//   - {{loadout.root.config}}/mcp-config.json (mode 0600, Secret when a secret pair is in it):
//     {"mcpServers": {...}} in server order; stdio servers as command/args/env, http servers as
//     type "http", url and headers; timeout (milliseconds) and, for a server restricted to some
//     tools, tools (Copilot's include list; empty when it may use none: Copilot then offers no
//     tool of it), and excludeTools for the tools the host denies (the ones the request's
//     exposure hides). Copilot has no key for a description, and a disabled server is left out
//     (a server that is not there cannot be turned on, as --enable-mcp-server does for one
//     disabled in settings). An http server's oauth clientId and scopes are rendered as the
//     flat keys oauthClientId and oauthScopes (scopes only with a client id: Copilot drops an
//     entry whose scopes come without one); Copilot has no key for a callback port or a metadata
//     URL (warning oauth_unsupported). Lifecycle settings are left out with one warning
//     (lifecycle_unsupported).
//   - env COPILOT_HOME={{loadout.root.config}}, COPILOT_ALLOW_ALL=false (a caller's
//     COPILOT_ALLOW_ALL=true would make Copilot trust the checkout and load its .mcp.json) and
//     LOADOUT_SPAWN_DOLLAR=$.
//   - the args --disable-builtin-mcps (with a GitHub login Copilot would add its own GitHub MCP
//     server, which no policy vetted) and --no-auto-update (Copilot would otherwise fetch and
//     run a newer release than the one this renderer and its profile were measured on).
//   - skills natively under {{loadout.root.config}}/skills/<name>/.
//   - a prompt that names every enabled server and the tools it may use.
//
// Every stdio server is launched through /usr/bin/env -i (format.WrapSpawn with
// format.SpawnCopilot, docs/SPAWN-ENV.md), because Copilot passes its whole environment, less
// its own credentials, to the servers it starts. Copilot expands $NAME, ${NAME} and
// ${NAME:-default} once in the command, args, env values, cwd, url and headers, so every "$"
// there is spelled ${LOADOUT_SPAWN_DOLLAR:-$} (format.CopilotLiteral). A secret is a
// placeholder the plugin cannot see into: the host applies the same spelling when it
// substitutes it.
//
// render is pure and deterministic; main.go registers it with the sdk for the wasm build.
package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
)

var manifest = abi.Manifest{
	Name:         "render.copilot",
	Version:      "1.0.0",
	ABIVersion:   abi.Version,
	Harness:      "copilot",
	Transports:   []string{abi.TransportStdio, abi.TransportHTTP},
	NativeSkills: true,
	Roots:        []string{abi.RootConfig},
}

const (
	configPath = "mcp-config.json"
	skillsDir  = "skills"
	// maxTimeout is the largest timeout (milliseconds) rendered: Copilot takes any positive
	// integer, and a run never needs more than this (24.8 days).
	maxTimeout = math.MaxInt32
)

// Warning codes this plugin emits.
const (
	warnTransport   = "transport_unsupported"
	warnReserved    = "server_name_reserved"
	warnUnwrappable = format.WarnCommandUnwrappable
	warnEnvName     = format.WarnEnvNameUnsupported
	warnTimeout     = abi.WarnTimeoutAdjusted
	warnTool        = "tool_name_unsupported"
)

func render(req abi.Request) (abi.Plan, error) {
	skills, skillWarns, err := format.PrepareSkills(req.Skills)
	if err != nil {
		return abi.Plan{}, err
	}
	plan := abi.Plan{Files: []abi.File{}, Args: []string{"--disable-builtin-mcps", "--no-auto-update"}, Env: []abi.Pair{}, GitExclude: []string{}, Warnings: []abi.Warning{}}

	servers := format.NewObject()
	secret := false
	var offered []abi.Server
	for _, s := range req.Servers {
		warn := func(code, msg string) {
			plan.Warnings = append(plan.Warnings, abi.Warning{Code: code, Server: s.ID, Message: msg})
		}
		if s.Transport != abi.TransportStdio && s.Transport != abi.TransportHTTP {
			warn(warnTransport, fmt.Sprintf("transport %q is not supported by this renderer; the server is not rendered", s.Transport))
			continue
		}
		if format.IsJSPrototypeName(s.ID) {
			warn(warnReserved, fmt.Sprintf("server name %q is a JavaScript built-in name; the server is not rendered", s.ID))
			continue
		}
		if !s.Enabled {
			continue // left out, not written disabled: nothing can turn it on for a run
		}
		entry, isSecret, tools, warns, ok := renderServer(s)
		plan.Warnings = append(plan.Warnings, warns...)
		if !ok {
			continue
		}
		servers.Set(s.ID, entry)
		secret = secret || isSecret
		s.AllowedTools = tools
		offered = append(offered, s)
	}
	content, err := format.MarshalJSON(format.NewObject().Set("mcpServers", servers))
	if err != nil {
		return abi.Plan{}, fmt.Errorf("encode %s: %w", configPath, err)
	}
	plan.Files = append(plan.Files, format.ConfigFile(abi.RootConfig, configPath, abi.FormatJSON, content, secret))
	plan.Env = append(plan.Env,
		abi.Pair{Name: "COPILOT_HOME", Value: "{{loadout.root.config}}"},
		abi.Pair{Name: "COPILOT_ALLOW_ALL", Value: "false"},
		abi.Pair{Name: "LOADOUT_SPAWN_DOLLAR", Value: "$"})

	var prompt strings.Builder
	prompt.WriteString(format.ServersPrompt(offered, nil))
	plan.Prompt = prompt.String()

	plan.Warnings = append(plan.Warnings, skillWarns...)
	files, err := format.SkillFiles(abi.RootConfig, skillsDir, skills)
	if err != nil {
		return abi.Plan{}, err
	}
	plan.Files = append(plan.Files, files...)
	return plan, nil
}

// renderServer returns the mcpServers entry of s, whether it holds a secret, the tools it
// includes, its warnings, and false when the server cannot be rendered.
func renderServer(s abi.Server) (*format.Object, bool, []string, []abi.Warning, bool) {
	var warns []abi.Warning
	warn := func(code, msg string) { warns = append(warns, abi.Warning{Code: code, Server: s.ID, Message: msg}) }
	entry := format.NewObject()
	secret := false
	if s.Transport == abi.TransportStdio {
		// The working directory travels as env -C, spelled like the args: Copilot would expand
		// "$" and a leading "~" in a cwd key.
		sp, spawnWarns, ok := format.SpawnServer(format.SpawnCopilot, s, s.Cwd)
		if !ok {
			return nil, false, nil, spawnWarns, false
		}
		warns = append(warns, spawnWarns...)
		entry.Set("command", sp.Command).Set("args", sp.Args)
		env, secretEnv := sp.EnvObject()
		secret = secret || secretEnv
		if env.Len() > 0 {
			entry.Set("env", env)
		}
	} else {
		entry.Set("type", "http").Set("url", format.CopilotLiteral(s.URL))
		headers, secretHeader := format.HeaderObject(s.Headers, format.CopilotLiteral)
		secret = secret || secretHeader
		if headers.Len() > 0 {
			entry.Set("headers", headers)
		}
	}
	switch ms := math.Round(s.Timeout * 1000); {
	case s.Timeout < 0:
		warn(warnTimeout, fmt.Sprintf("timeout %gs is negative; the harness default is used", s.Timeout))
	case ms > maxTimeout:
		entry.Set("timeout", int64(maxTimeout))
		warn(warnTimeout, fmt.Sprintf("timeout %gs exceeds the largest timeout rendered for Copilot; rendered as %dms", s.Timeout, maxTimeout))
	case s.Timeout > 0:
		entry.Set("timeout", max(int64(ms), 1))
	}
	var tools []string
	if s.ToolsRestricted {
		include := []string{}
		for _, t := range s.AllowedTools {
			// Copilot matches tools entries by exact name, except "*", which keeps every
			// tool: only MCP tool-name characters are written.
			if !isToolName(t) {
				warn(warnTool, fmt.Sprintf("tool name %q holds a character outside [A-Za-z0-9_.-]; the tool is not offered", t))
				continue
			}
			include = append(include, t)
		}
		entry.Set("tools", include)
		tools = include
	}
	if len(s.DeniedTools) > 0 {
		// The tools the host denies (the request's exposure hides them): excludeTools removes
		// them after tools, by exact name, and Copilot expands no tool entry.
		entry.Set("excludeTools", append([]string{}, s.DeniedTools...))
	}
	if s.Transport == abi.TransportHTTP && s.OAuth != nil {
		if w := renderOAuth(entry, s); w != nil {
			warns = append(warns, *w)
		}
	}
	if w := format.LifecycleWarning(s, "GitHub Copilot CLI"); w != nil {
		warns = append(warns, *w)
	}
	return entry, secret, tools, warns, true
}

// renderOAuth writes the OAuth members of http server s that Copilot CLI 1.0.102 has a key for,
// as flat keys of its entry (docs/FORMATS.md §5.2): oauthClientId, a string, and oauthScopes, a
// non-empty list of scope tokens. Copilot drops the whole entry without a word when
// oauthScopes comes without oauthClientId, so scopes are written only with a client id. It has
// no key for a callback port or an authorization-server metadata URL. What is left out is
// named by one oauth_unsupported warning, or nil when nothing is. The values are written as
// they are: the parser admits no "$", so there is nothing for Copilot to expand.
func renderOAuth(entry *format.Object, s abi.Server) *abi.Warning {
	o := s.OAuth
	if o.ClientID != "" {
		entry.Set("oauthClientId", o.ClientID)
		if len(o.Scopes) > 0 {
			entry.Set("oauthScopes", append([]string{}, o.Scopes...))
		}
	}
	var left []string
	if o.CallbackPort != 0 {
		left = append(left, "callbackPort")
	}
	if o.AuthServerMetadataURL != "" {
		left = append(left, "authServerMetadataUrl")
	}
	if o.ClientID == "" && len(o.Scopes) > 0 {
		why := "reads oauth scopes only with a client id (without one it drops the whole server)"
		if len(left) > 0 {
			why = "has no place for oauth " + strings.Join(left, ", ") + " and " + why
		}
		return &abi.Warning{Code: format.WarnOAuthUnsupported, Server: s.ID,
			Message: "GitHub Copilot CLI " + why + "; " + strings.Join(append(left, "scopes"), ", ") + " left out, the rest of the server is rendered"}
	}
	return format.OAuthWarning(s, "GitHub Copilot CLI", left)
}

// isToolName reports whether t is a non-empty run of [A-Za-z0-9_.-], the characters of an MCP
// tool name, none of which Copilot reads as a pattern.
func isToolName(t string) bool {
	if t == "" {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}
