// Command pi is loadout's Pi renderer plugin (render.pi), measured against
// @earendil-works/pi-coding-agent 1.6.0, whose native MCP support reads <agent-dir>/mcp.json
// (docs/FORMATS.md §3.3).
//
// It renders:
//   - {{loadout.root.config}}/mcp.json (mode 0600, Secret when a secret pair is in it):
//     {"mcpServers": {...}} in server order; stdio servers as type/command/args/env/cwd, http
//     servers as type/url/headers; description, timeout (seconds), enabled: false for a
//     disabled server, and the request's exposure and toolExposure. A server restricted to some
//     tools gets exposure "hidden" (every other tool is registered but unreachable) and one
//     exact toolExposure entry per allowed tool, with the exposure the request gives that tool
//     (its exact entry, else its first matching pattern, else the server's exposure) or
//     "direct" when the request gives none; the request's own patterns are not rendered for such
//     a server, since a pattern such as "*" would expose the tools the restriction removed.
//     An http server's OAuth goes into its oauth object (clientId, callbackPort, the scopes
//     as one space-separated scope string, authServerMetadataUrl where Pi takes it). Pi 1.6.0
//     has no per-server lifecycle or idle timeout: those are a warning (lifecycle_unsupported).
//   - env PI_CODING_AGENT_DIR={{loadout.root.config}} (the agent directory).
//   - skills natively under {{loadout.root.config}}/skills/<name>/.
//   - a prompt that names every enabled server and the tools it may use.
//
// Every stdio server is launched through /usr/bin/env -i (format.WrapSpawn, docs/SPAWN-ENV.md),
// because Pi passes its whole environment to the servers it spawns: the server gets exactly its
// spawn environment, whose values travel in alias variables of the entry's env map. Pi resolves
// $NAME, ${NAME} and a leading "!" (a shell command) in env and header values, so literal values
// are spelled with the profile's value syntax ("$" as "$$", a leading "!" as "$!"). A secret is a
// placeholder the plugin cannot see into: the host must apply the same spelling when it
// substitutes a secret into this file.
//
// Pi's server names must be unique after folding "-" and "_" together: the second of two such
// servers is not rendered and comes back as a warning, so the file stays valid.
//
// render is pure and deterministic; main.go registers it with the sdk for the wasm build.
package main

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
	"github.com/loadout-dev/loadout/sdk/profile"
)

//go:generate go run github.com/loadout-dev/loadout/sdk/cmd/profilegen

var manifest = abi.Manifest{
	Name:         "render.pi",
	Version:      "1.0.0",
	ABIVersion:   abi.Version,
	Harness:      "pi",
	Transports:   []string{abi.TransportStdio, abi.TransportHTTP},
	NativeSkills: true,
	Roots:        []string{abi.RootConfig},
}

const (
	configPath = "mcp.json"
	// maxTimeout is the largest timeout (seconds) a Node timer honours; a larger one fires at once.
	maxTimeout = 2147483
)

// Warning codes this plugin emits.
const (
	warnConflict    = "server_name_conflict"
	warnUnwrappable = format.WarnCommandUnwrappable
	warnEnvName     = format.WarnEnvNameUnsupported
	warnExposure    = "exposure_unsupported"
	warnTimeout     = abi.WarnTimeoutAdjusted
)

// exposures are the exposure values Pi 1.6.0 accepts; the alias codemode-deferred is rendered
// as codemode.
var exposures = map[string]string{
	"codemode": "codemode", "codemode-deferred": "codemode", "deferred": "deferred", "direct": "direct", "hidden": "hidden",
}

func render(req abi.Request) (abi.Plan, error) {
	skills, skillWarns, err := format.PrepareSkills(req.Skills)
	if err != nil {
		return abi.Plan{}, err
	}
	plan := abi.Plan{Files: []abi.File{}, Args: []string{}, Env: []abi.Pair{}, GitExclude: []string{}, Warnings: []abi.Warning{}}

	servers := format.NewObject()
	secret := false
	claimed := map[string]string{} // folded name → the id that claimed it
	var offered []abi.Server
	for _, s := range req.Servers {
		warn := func(code, msg string) {
			plan.Warnings = append(plan.Warnings, abi.Warning{Code: code, Server: s.ID, Message: msg})
		}
		if s.Transport != abi.TransportStdio && s.Transport != abi.TransportHTTP {
			warn(abi.WarnTransportUnsupported, fmt.Sprintf("transport %q is not supported by Pi; the server is not rendered", s.Transport))
			continue
		}
		if format.IsJSPrototypeName(s.ID) {
			warn(abi.WarnServerNameReserved, fmt.Sprintf("server name %q is a JavaScript built-in name; the server is not rendered", s.ID))
			continue
		}
		folded := strings.ReplaceAll(s.ID, "-", "_")
		if first, ok := claimed[folded]; ok {
			warn(warnConflict, fmt.Sprintf("Pi treats server names that differ only in \"-\" and \"_\" as one: %q conflicts with %q; the server is not rendered", s.ID, first))
			continue
		}
		entry, isSecret, warns, ok := renderServer(s)
		plan.Warnings = append(plan.Warnings, warns...)
		if !ok {
			continue
		}
		claimed[folded] = s.ID
		servers.Set(s.ID, entry)
		secret = secret || isSecret
		if s.Enabled {
			offered = append(offered, s)
		}
	}
	content, err := format.MarshalJSON(format.NewObject().Set("mcpServers", servers))
	if err != nil {
		return abi.Plan{}, fmt.Errorf("encode %s: %w", configPath, err)
	}
	plan.Files = append(plan.Files, format.ConfigFile(abi.RootConfig, configPath, abi.FormatJSON, content, secret))
	plan.Env = append(plan.Env, abi.Pair{Name: "PI_CODING_AGENT_DIR", Value: "{{loadout.root.config}}"})

	var prompt strings.Builder
	prompt.WriteString(format.ServersPrompt(offered, harnessProfile.PromptName()))
	plan.Prompt = prompt.String()

	plan.Warnings = append(plan.Warnings, skillWarns...)
	files, err := format.SkillFiles(abi.RootConfig, "skills", skills)
	if err != nil {
		return abi.Plan{}, err
	}
	plan.Files = append(plan.Files, files...)
	return plan, nil
}

// renderServer returns the mcpServers entry of s, whether it holds a secret, its warnings, and
// false when the server cannot be rendered.
func renderServer(s abi.Server) (*format.Object, bool, []abi.Warning, bool) {
	var warns []abi.Warning
	warn := func(code, msg string) { warns = append(warns, abi.Warning{Code: code, Server: s.ID, Message: msg}) }
	entry := format.NewObject()
	secret := false
	if s.Transport == abi.TransportStdio {
		sp, spawnWarns, ok := format.SpawnServer(harnessProfile.SpawnStyle(), s, "")
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
		if s.Cwd != "" {
			entry.Set("cwd", s.Cwd)
		}
	} else {
		entry.Set("type", "http").Set("url", s.URL)
		headers, secretHeader := format.HeaderObject(s.Headers, func(v string) string { return harnessProfile.Spell(profile.PosHeaders, v) })
		secret = secret || secretHeader
		if headers.Len() > 0 {
			entry.Set("headers", headers)
		}
	}
	if s.Description != "" {
		entry.Set("description", s.Description)
	}
	switch {
	case s.Timeout < 0:
		warn(warnTimeout, fmt.Sprintf("timeout %gs is negative; the harness default is used", s.Timeout))
	case s.Timeout > maxTimeout:
		entry.Set("timeout", int64(maxTimeout))
		warn(warnTimeout, fmt.Sprintf("timeout %gs exceeds the largest timer Pi honours; rendered as %ds", s.Timeout, maxTimeout))
	case s.Timeout > 0:
		entry.Set("timeout", seconds(s.Timeout))
	}

	exposure, ok := exposures[s.Exposure]
	if s.Exposure != "" && !ok {
		warn(warnExposure, fmt.Sprintf("exposure %q is not one Pi accepts; the default is used", s.Exposure))
	}
	if s.ToolsRestricted {
		entry.Set("exposure", "hidden")
		te := format.NewObject()
		for _, tool := range s.AllowedTools {
			e := resolveExposure(s.ToolExposure, tool, exposure)
			if e == "" {
				e = "direct"
			}
			te.Set(tool, e)
		}
		if te.Len() > 0 {
			entry.Set("toolExposure", te)
		}
	} else {
		if exposure != "" {
			entry.Set("exposure", exposure)
		}
		te := format.NewObject()
		for _, p := range s.ToolExposure {
			e, ok := exposures[p.Value]
			if !ok {
				warn(warnExposure, fmt.Sprintf("tool exposure %q for %q is not one Pi accepts; the entry is not rendered", p.Value, p.Name))
				continue
			}
			te.Set(p.Name, e)
		}
		if te.Len() > 0 {
			entry.Set("toolExposure", te)
		}
	}
	if !s.Enabled {
		entry.Set("enabled", false)
	}
	if s.Transport == abi.TransportHTTP && s.OAuth != nil {
		oauth, left := renderOAuth(*s.OAuth)
		if oauth.Len() > 0 {
			entry.Set("oauth", oauth)
		}
		if w := format.OAuthWarning(s, "Pi", left); w != nil {
			warns = append(warns, *w)
		}
	}
	// Pi 1.6.0 connects every enabled server when a session starts and has no per-server
	// lifecycle or idle timeout (unknown keys are ignored).
	if w := format.LifecycleWarning(s, "Pi"); w != nil {
		warns = append(warns, *w)
	}
	return entry, secret, warns, true
}

// renderOAuth is Pi's oauth object for o (docs/FORMATS.md §3.3): the scopes as one
// space-separated string named scope, and the metadata URL only where Pi takes it (https, or
// plain http to localhost, 127.0.0.1 or [::1]: Pi refuses the whole entry otherwise). It also
// returns what it left out.
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
		obj.Set("scope", strings.Join(o.Scopes, " "))
	}
	if o.AuthServerMetadataURL != "" {
		if piMetadataURL(o.AuthServerMetadataURL) {
			obj.Set("authServerMetadataUrl", o.AuthServerMetadataURL)
		} else {
			left = append(left, "authServerMetadataUrl (Pi reads https, or http on localhost, 127.0.0.1 or [::1])")
		}
	}
	return obj, left
}

// piMetadataURL reports whether Pi 1.6.0 accepts raw as an authorization-server metadata URL.
func piMetadataURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return true
	case "http":
		switch strings.ToLower(u.Hostname()) {
		case "localhost", "127.0.0.1", "::1":
			return true
		}
	}
	return false
}

// resolveExposure returns the exposure rules give tool, Pi's way: an exact entry wins, else
// the first matching "*" pattern in order, else def.
func resolveExposure(rules []abi.Pair, tool, def string) string {
	for _, r := range rules {
		if r.Name == tool {
			if e, ok := exposures[r.Value]; ok {
				return e
			}
		}
	}
	for _, r := range rules {
		if format.IsPattern(r.Name) && format.GlobMatch(r.Name, tool) {
			if e, ok := exposures[r.Value]; ok {
				return e
			}
		}
	}
	return def
}

// seconds returns a whole number of seconds as an integer, anything else as a float.
func seconds(f float64) any {
	if f == float64(int64(f)) {
		return int64(f)
	}
	return f
}
