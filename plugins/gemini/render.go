// Command gemini is loadout's Gemini CLI renderer plugin (render.gemini), measured against
// @google/gemini-cli 0.61.0 (docs/FORMATS.md §5.1). It is its profile (profile.yaml, as the Go literal profile_gen.go that go generate writes)
// rendered by the SDK's profile-driven renderer (sdk/harness), plus what the profile cannot say:
//
//   - an includeTools entry is left out (with a warning) when it holds "$" or "(": Gemini
//     expands every settings string and reads "t(…)" as tool t;
//   - excludeTools entries are spelled like the other settings strings, which Gemini expands.
//
// The profile gives the rest: $GEMINI_CLI_HOME/.gemini/settings.json with the pinned settings
// that keep Gemini from reading the checkout's .env files (security.auth.useExternal,
// advanced.ignoreLocalEnv), then mcpServers (stdio servers through env -i, http servers as
// httpUrl, description, timeout in milliseconds up to the largest Node timer, includeTools,
// excludeTools, oauth with clientId and scopes); no per-server enabled key, so a disabled
// server is left out; trust is never written. Then --skip-trust, GEMINI_CLI_HOME,
// GEMINI_CLI_TRUST_WORKSPACE=false and LOADOUT_SPAWN_DOLLAR=$, and the skills under
// .gemini/skills.
//
// render is pure and deterministic; main.go registers it with the sdk for the wasm build.
package main

import (
	"strings"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/harness"
)

//go:generate go run github.com/loadout-dev/loadout/sdk/cmd/profilegen

var manifest = abi.Manifest{
	Name:         "render.gemini",
	Version:      "1.0.0",
	ABIVersion:   abi.Version,
	Harness:      "gemini",
	Transports:   []string{abi.TransportStdio, abi.TransportHTTP},
	NativeSkills: true,
	Roots:        []string{abi.RootConfig},
}

var renderer = harness.MustNew(harness.Renderer{
	Manifest:       manifest,
	Profile:        harnessProfile,
	Name:           "Gemini CLI",
	SpellToolLists: true,
	ToolName: func(t string) string {
		if strings.ContainsAny(t, "$(") {
			return "cannot be spelled for includeTools"
		}
		return ""
	},
})

func render(req abi.Request) (abi.Plan, error) { return renderer.Render(req) }
