// Command pi is loadout's Pi renderer plugin (render.pi), measured against
// @earendil-works/pi-coding-agent 1.6.0, whose native MCP support reads <agent-dir>/mcp.json
// (docs/FORMATS.md §3.3). It is its profile (profile.yaml, as the Go literal profile_gen.go that
// go generate writes) rendered by the SDK's profile-driven renderer (sdk/harness), plus what the
// profile cannot say: the exposure and tool exposure Pi renders itself.
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
// Pi's server names must be unique after folding "-" and "_" together (config.namesFold): the
// second of two such servers is not rendered and comes back as a warning, so the file stays
// valid.
//
// render is pure and deterministic; main.go registers it with the sdk for the wasm build.
package main

import (
	"fmt"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
	"github.com/loadout-dev/loadout/sdk/harness"
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

// warnExposure: an exposure value Pi does not accept is left out.
const warnExposure = "exposure_unsupported"

var renderer = harness.MustNew(harness.Renderer{
	Manifest:  manifest,
	Profile:   harnessProfile,
	Name:      "Pi",
	TypeStdio: true,
	Exposure:  renderExposure,
})

func render(req abi.Request) (abi.Plan, error) { return renderer.Render(req) }

// exposures are the exposure values Pi 1.6.0 accepts; the alias codemode-deferred is rendered
// as codemode.
var exposures = map[string]string{
	"codemode": "codemode", "codemode-deferred": "codemode", "deferred": "deferred", "direct": "direct", "hidden": "hidden",
}

// renderExposure writes the exposure and tool exposure of s. A server restricted to some tools
// gets exposure "hidden" (every other tool is registered but unreachable) and one exact
// toolExposure entry per allowed tool, with the exposure the request gives that tool (its exact
// entry, else its first matching pattern, else the server's exposure) or "direct"; the request's
// own patterns are not rendered for such a server, since a pattern such as "*" would expose the
// tools the restriction removed.
func renderExposure(entry *format.Object, s abi.Server) []abi.Warning {
	var warns []abi.Warning
	warn := func(msg string) { warns = append(warns, abi.Warning{Code: warnExposure, Server: s.ID, Message: msg}) }
	exposure, ok := exposures[s.Exposure]
	if s.Exposure != "" && !ok {
		warn(fmt.Sprintf("exposure %q is not one Pi accepts; the default is used", s.Exposure))
	}
	te := format.NewObject()
	if s.ToolsRestricted {
		entry.Set("exposure", "hidden")
		for _, tool := range s.AllowedTools {
			e := resolveExposure(s.ToolExposure, tool, exposure)
			if e == "" {
				e = "direct"
			}
			te.Set(tool, e)
		}
	} else {
		if exposure != "" {
			entry.Set("exposure", exposure)
		}
		for _, p := range s.ToolExposure {
			e, ok := exposures[p.Value]
			if !ok {
				warn(fmt.Sprintf("tool exposure %q for %q is not one Pi accepts; the entry is not rendered", p.Value, p.Name))
				continue
			}
			te.Set(p.Name, e)
		}
	}
	if te.Len() > 0 {
		entry.Set("toolExposure", te)
	}
	return warns
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
