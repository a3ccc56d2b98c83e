// Command gemini is loadout's Gemini CLI renderer plugin (render.gemini), measured against
// @google/gemini-cli 0.61.0, which reads MCP servers from the mcpServers object of
// $GEMINI_CLI_HOME/.gemini/settings.json (docs/FORMATS.md §5.1).
//
// It renders:
//   - {{loadout.root.config}}/.gemini/settings.json (mode 0600, Secret when a secret pair is in
//     it): security.auth.useExternal and advanced.ignoreLocalEnv true (together they keep Gemini
//     from reading the checkout's .gemini/.env and .env into its environment), then
//     {"mcpServers": {...}} in server order; stdio servers as command/args/env, http
//     servers as httpUrl (streamable HTTP) and headers; description, timeout (milliseconds) and,
//     for a server restricted to some tools, includeTools (empty when it may use none: Gemini
//     then registers no tool of it), excludeTools for the tools the host denies (the ones the
//     request's exposure hides), and an http server's oauth (clientId, scopes; Gemini has no
//     key for a callback port or a metadata URL: warning oauth_unsupported). Gemini has no
//     per-server enabled flag, so a disabled server is left out, and no lifecycle setting
//     (warning lifecycle_unsupported). trust is never written: every tool call keeps Gemini's
//     confirmation.
//   - env GEMINI_CLI_HOME={{loadout.root.config}}, GEMINI_CLI_TRUST_WORKSPACE=false (a caller's
//     GEMINI_CLI_TRUST_WORKSPACE=true would make Gemini trust the checkout when it loads its
//     settings, and so load the checkout's .gemini/settings.json and its servers; --skip-trust
//     trusts the folder only after that) and LOADOUT_SPAWN_DOLLAR=$.
//   - the arg --skip-trust: Gemini starts no stdio server in an untrusted folder.
//   - skills natively under {{loadout.root.config}}/.gemini/skills/<name>/.
//   - a prompt that names every enabled server and the tools it may use.
//
// Every stdio server is launched through /usr/bin/env -i (format.WrapSpawn with
// format.SpawnGemini, docs/SPAWN-ENV.md), because Gemini passes most of its environment to
// the servers it starts. Gemini expands $NAME, ${NAME} and ${NAME:-default} in every string of
// its settings, and env values and headers a second time, so every "$" is spelled
// ${LOADOUT_SPAWN_DOLLAR:-$} (format.GeminiLiteral), preceded by "\" in env values and headers
// (format.GeminiValueLiteral). A secret is a placeholder the plugin cannot see into: the host
// applies the same spelling when it substitutes it.
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
	Name:         "render.gemini",
	Version:      "1.0.0",
	ABIVersion:   abi.Version,
	Harness:      "gemini",
	Transports:   []string{abi.TransportStdio, abi.TransportHTTP},
	NativeSkills: true,
	Roots:        []string{abi.RootConfig},
}

const (
	configPath = ".gemini/settings.json"
	skillsDir  = ".gemini/skills"
	// maxTimeout is the largest timeout (milliseconds) a Node timer honours.
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
	plan := abi.Plan{Files: []abi.File{}, Args: []string{"--skip-trust"}, Env: []abi.Pair{}, GitExclude: []string{}, Warnings: []abi.Warning{}}

	servers := format.NewObject()
	secret := false
	var offered []abi.Server
	for _, s := range req.Servers {
		warn := func(code, msg string) {
			plan.Warnings = append(plan.Warnings, abi.Warning{Code: code, Server: s.ID, Message: msg})
		}
		if s.Transport != abi.TransportStdio && s.Transport != abi.TransportHTTP {
			warn(warnTransport, fmt.Sprintf("transport %q is not supported by Gemini CLI; the server is not rendered", s.Transport))
			continue
		}
		if format.IsJSPrototypeName(s.ID) {
			warn(warnReserved, fmt.Sprintf("server name %q is a JavaScript built-in name; the server is not rendered", s.ID))
			continue
		}
		if !s.Enabled {
			continue // Gemini has no per-server enabled flag: a disabled server is left out
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
	// The two settings the profile pins keep Gemini from reading the checkout's .env files:
	// useExternal skips the auth validation that loads .gemini/.env once --skip-trust trusts the
	// folder, and ignoreLocalEnv every .env but the home one (the config root).
	content, err := format.MarshalJSON(format.NewObject().
		Set("security", format.NewObject().Set("auth", format.NewObject().Set("useExternal", true))).
		Set("advanced", format.NewObject().Set("ignoreLocalEnv", true)).
		Set("mcpServers", servers))
	if err != nil {
		return abi.Plan{}, fmt.Errorf("encode %s: %w", configPath, err)
	}
	plan.Files = append(plan.Files, format.ConfigFile(abi.RootConfig, configPath, abi.FormatJSON, content, secret))
	plan.Env = append(plan.Env,
		abi.Pair{Name: "GEMINI_CLI_HOME", Value: "{{loadout.root.config}}"},
		abi.Pair{Name: "GEMINI_CLI_TRUST_WORKSPACE", Value: "false"},
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
		// The working directory travels as env -C, spelled like the args: Gemini would expand a
		// "$" in a cwd key too, and the host compares that key verbatim.
		sp, spawnWarns, ok := format.SpawnServer(format.SpawnGemini, s, s.Cwd)
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
		entry.Set("httpUrl", format.GeminiLiteral(s.URL))
		headers, secretHeader := format.HeaderObject(s.Headers, format.GeminiValueLiteral)
		secret = secret || secretHeader
		if headers.Len() > 0 {
			entry.Set("headers", headers)
		}
	}
	if s.Description != "" {
		entry.Set("description", format.GeminiLiteral(s.Description))
	}
	switch ms := math.Round(s.Timeout * 1000); {
	case s.Timeout < 0:
		warn(warnTimeout, fmt.Sprintf("timeout %gs is negative; the harness default is used", s.Timeout))
	case ms > maxTimeout:
		entry.Set("timeout", int64(maxTimeout))
		warn(warnTimeout, fmt.Sprintf("timeout %gs exceeds the largest timer Gemini honours; rendered as %dms", s.Timeout, maxTimeout))
	case s.Timeout > 0:
		entry.Set("timeout", max(int64(ms), 1))
	}
	var tools []string
	if s.ToolsRestricted {
		include := []string{}
		for _, t := range s.AllowedTools {
			// Gemini expands includeTools entries like every settings string, and reads an
			// entry "t(…)" as tool t: such names are left out (the tool is not offered).
			if strings.ContainsAny(t, "$(") {
				warn(warnTool, fmt.Sprintf("tool name %q cannot be spelled for includeTools; the tool is not offered", t))
				continue
			}
			include = append(include, t)
		}
		entry.Set("includeTools", include)
		tools = include
	}
	if len(s.DeniedTools) > 0 {
		// The tools the host denies (exposure hidden): Gemini registers none of them, and
		// expands the entries like every settings string, so each is spelled literally.
		exclude := make([]string, len(s.DeniedTools))
		for i, t := range s.DeniedTools {
			exclude[i] = format.GeminiLiteral(t)
		}
		entry.Set("excludeTools", exclude)
	}
	if o := s.OAuth; s.Transport == abi.TransportHTTP && o != nil {
		// Gemini CLI 0.61.0's oauth object takes clientId and a list of scopes; a callback
		// port only as part of a whole redirectUri, and no authorization-server metadata URL.
		oauth := format.NewObject()
		if o.ClientID != "" {
			oauth.Set("clientId", o.ClientID)
		}
		if len(o.Scopes) > 0 {
			oauth.Set("scopes", append([]string{}, o.Scopes...))
		}
		if oauth.Len() > 0 {
			entry.Set("oauth", oauth)
		}
		var left []string
		if o.CallbackPort != 0 {
			left = append(left, "callbackPort")
		}
		if o.AuthServerMetadataURL != "" {
			left = append(left, "authServerMetadataUrl")
		}
		if w := format.OAuthWarning(s, "Gemini CLI", left); w != nil {
			warns = append(warns, *w)
		}
	}
	if w := format.LifecycleWarning(s, "Gemini CLI"); w != nil {
		warns = append(warns, *w)
	}
	return entry, secret, tools, warns, true
}
