// Command qwen is loadout's Qwen Code renderer plugin (render.qwen), measured against
// @qwen-code/qwen-code 0.24.4 (docs/FORMATS.md §5.3). It is its profile (profile.yaml, as the Go
// literal profile_gen.go that go generate writes) rendered by the SDK's profile-driven renderer
// (sdk/harness), plus what the profile cannot say:
//
//   - an includeTools entry holding "(" is left out (with a warning): Qwen Code reads "t(…)" as
//     tool t.
//
// The profile gives the rest: the servers in <run>/mcp-servers.json, which Qwen Code reads
// through --mcp-config as written (stdio servers through env -i with their cwd under cwd,
// http servers as httpUrl, description, timeout in milliseconds up to the largest Node timer,
// includeTools, excludeTools; no OAuth keys); no per-server enabled key, so a disabled server
// is left out; trust is never written. Then --allowed-mcp-server-names with exactly those ids,
// --mcp-config and --bare, under which Qwen Code reads no settings, .env, hooks, extensions or
// skills; QWEN_HOME in an isolated run; and the skills folded into the prompt, their files
// under the checkout's .cat-context/skill/.
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
	Name:         "render.qwen",
	Version:      "1.0.0",
	ABIVersion:   abi.Version,
	Harness:      "qwen",
	Transports:   []string{abi.TransportStdio, abi.TransportHTTP},
	NativeSkills: false,
	Roots:        []string{abi.RootRun, abi.RootCheckout},
}

var renderer = harness.MustNew(harness.Renderer{
	Manifest: manifest,
	Profile:  harnessProfile,
	Name:     "Qwen Code",
	ToolName: func(t string) string {
		if strings.Contains(t, "(") {
			return "cannot be written into includeTools"
		}
		return ""
	},
})

func render(req abi.Request) (abi.Plan, error) { return renderer.Render(req) }
