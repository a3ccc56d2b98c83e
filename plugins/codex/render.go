// Command codex is loadout's Codex CLI renderer plugin (render.codex), measured against Codex CLI
// 0.169.0 (docs/FORMATS.md §2). It is its profile (profile.yaml, as the Go literal
// profile_gen.go that go generate writes) rendered by the SDK's profile-driven renderer
// (sdk/harness); the profile states all of it:
//
//   - {{loadout.root.config}}/config.toml (mode 0600, Secret when a secret pair is in it) with
//     one [mcp_servers.<id>] table per server in order, holding only keys Codex knows, so the
//     file also loads under --strict-config. stdio: command, args, env, cwd (every server
//     through env -i: Codex passes servers its own default variables and a PATH prefixed with
//     its own directory). http (streamable HTTP, inferred from url): url and http_headers; a
//     secret header, Authorization: Bearer included, goes into http_headers inside this 0600
//     file (Codex has no inline bearer token, and bearer_token_env_var would put the secret in
//     the harness's environment, where every shell command the agent runs could read it).
//     enabled_tools for a restricted server, disabled_tools for the tools the host denies,
//     enabled = false for a disabled server, tool_timeout_sec from the timeout; an http
//     server's OAuth as scopes and an oauth table (client_id, callback_port). Codex has no key
//     for an authorization-server metadata URL, nor a lifecycle setting: each is a warning.
//   - env CODEX_HOME={{loadout.root.config}}.
//   - skills natively under {{loadout.root.config}}/skills/<name>/ for an isolated run; for an
//     ambient-auth run folded into the prompt and the checkout's .cat-context/ (git-excluded).
//
// render is pure and deterministic; main.go registers it with the sdk for the wasm build.
package main

import (
	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/harness"
)

//go:generate go run github.com/loadout-dev/loadout/sdk/cmd/profilegen

var manifest = abi.Manifest{
	Name:         "render.codex",
	Version:      "1.0.0",
	ABIVersion:   abi.Version,
	Harness:      "codex",
	Transports:   []string{abi.TransportStdio, abi.TransportHTTP},
	NativeSkills: true,
	Roots:        []string{abi.RootConfig, abi.RootCheckout},
}

var renderer = harness.MustNew(harness.Renderer{Manifest: manifest, Profile: harnessProfile, Name: "Codex CLI"})

func render(req abi.Request) (abi.Plan, error) { return renderer.Render(req) }
