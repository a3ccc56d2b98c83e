// Command codex is loadout's Codex CLI renderer plugin (render.codex), measured against Codex CLI
// 0.169.0 (docs/FORMATS.md §2).
//
// It renders:
//   - {{loadout.root.config}}/config.toml (mode 0600, Secret when a secret pair is in it) with
//     one [mcp_servers.<id>] table per server in order, holding only keys Codex knows, so the
//     file also loads under --strict-config. stdio: command, args, env, cwd. http (streamable
//     HTTP, inferred from url): url and http_headers; Codex 0.169.0 supports it (docs/FORMATS.md
//     §2.1), so an http server is rendered rather than dropped as the seed system did
//     (conformity case 070 expects it in the config). Codex has no inline bearer token (an
//     inline bearer_token is rejected) and bearer_token_env_var would put the secret in the
//     harness's environment, where every shell command the agent runs could read it; a secret
//     header, Authorization: Bearer included, is therefore rendered in http_headers inside this
//     0600 file, where the host substitutes it. enabled_tools for a restricted server (an empty
//     list when no tool survived), disabled_tools for the tools the host denies (the ones the
//     request's exposure hides), enabled = false for a disabled server, tool_timeout_sec from
//     the timeout; an http server's OAuth as scopes and an oauth table (client_id,
//     callback_port). Codex has no key for an authorization-server metadata URL, nor a
//     lifecycle setting: each is a warning (oauth_unsupported, lifecycle_unsupported).
//   - env CODEX_HOME={{loadout.root.config}}.
//   - skills natively under {{loadout.root.config}}/skills/<name>/ for an isolated run; for an
//     ambient-auth run the resources go under the checkout's .cat-context/skill/<name>/, the
//     instructions are folded into the prompt, and .cat-context/ is git-excluded. The manifest
//     declares nativeSkills.
//   - a prompt that names every enabled server and the tools it may use.
//
// Every stdio server is launched through /usr/bin/env -i (format.WrapSpawn, docs/SPAWN-ENV.md):
// Codex passes servers its own default variables and a PATH prefixed with its own directory, so
// only the wrapper gives a server exactly its spawn environment (the host environment the policy
// let through, then the server's own env). The values travel in alias variables of the table's
// env map, never on a command line. A server whose command holds "=" cannot be wrapped and comes
// back as a warning.
//
// render is pure and deterministic; main.go registers it with the sdk for the wasm build.
package main

import (
	"fmt"
	"strings"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
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

const (
	configPath = "config.toml"
	// maxTimeout bounds tool_timeout_sec (seconds): Codex turns it into a Rust Duration, which
	// cannot hold arbitrarily large floats.
	maxTimeout = 1e9
)

// Warning codes this plugin emits.
const (
	warnTimeout     = abi.WarnTimeoutAdjusted
	warnUnwrappable = format.WarnCommandUnwrappable
	warnEnvName     = format.WarnEnvNameUnsupported
)

func render(req abi.Request) (abi.Plan, error) {
	skills, skillWarns, err := format.PrepareSkills(req.Skills)
	if err != nil {
		return abi.Plan{}, err
	}
	plan := abi.Plan{Files: []abi.File{}, Args: []string{}, Env: []abi.Pair{}, GitExclude: []string{}, Warnings: []abi.Warning{}}

	var doc format.TOMLDocument
	secret := false
	var offered []abi.Server
	for _, s := range req.Servers {
		if s.Transport != abi.TransportStdio && s.Transport != abi.TransportHTTP {
			plan.Warnings = append(plan.Warnings, abi.Warning{Code: abi.WarnTransportUnsupported, Server: s.ID,
				Message: fmt.Sprintf("transport %q is not supported by Codex; the server is not rendered", s.Transport)})
			continue
		}
		t := format.NewObject()
		isSecret, warns, ok := renderServer(t, s)
		plan.Warnings = append(plan.Warnings, warns...)
		if !ok {
			continue
		}
		doc.AppendTable(t, "mcp_servers", s.ID)
		secret = secret || isSecret
		if s.Enabled {
			offered = append(offered, s)
		}
	}
	content, err := doc.Marshal()
	if err != nil {
		return abi.Plan{}, fmt.Errorf("encode %s: %w", configPath, err)
	}
	plan.Files = append(plan.Files, format.ConfigFile(abi.RootConfig, configPath, abi.FormatTOML, content, secret))
	plan.Env = append(plan.Env, abi.Pair{Name: "CODEX_HOME", Value: "{{loadout.root.config}}"})

	var prompt strings.Builder
	prompt.WriteString(format.ServersPrompt(offered, nil))

	plan.Warnings = append(plan.Warnings, skillWarns...)
	if err := format.PlaceSkills(&plan, &prompt, skills, req.Run.AmbientAuth, "skills"); err != nil {
		return abi.Plan{}, err
	}
	plan.Prompt = prompt.String()
	return plan, nil
}

// renderServer fills the [mcp_servers.<id>] table t and returns whether it holds a secret, its
// warnings, and false when the server cannot be rendered (t is then left empty).
func renderServer(t *format.Object, s abi.Server) (bool, []abi.Warning, bool) {
	var warns []abi.Warning
	secret := false
	if s.Transport == abi.TransportStdio {
		// Codex adds its own default variables and prefixes PATH: only the wrapper pins the
		// server's environment to its spawn environment.
		sp, spawnWarns, ok := format.SpawnServer(harnessProfile.SpawnStyle(), s, "")
		if !ok {
			return false, spawnWarns, false
		}
		warns = append(warns, spawnWarns...)
		t.Set("command", sp.Command).Set("args", sp.Args)
		env, secretEnv := sp.EnvObject()
		secret = secret || secretEnv
		if env.Len() > 0 {
			t.Set("env", env)
		}
		if s.Cwd != "" {
			t.Set("cwd", s.Cwd)
		}
	} else {
		t.Set("url", s.URL)
		headers := format.NewObject()
		for _, p := range s.Headers {
			headers.Set(p.Name, p.Value)
			secret = secret || p.Secret
		}
		if headers.Len() > 0 {
			t.Set("http_headers", headers)
		}
	}
	if s.ToolsRestricted {
		t.Set("enabled_tools", append([]string{}, s.AllowedTools...))
	}
	if len(s.DeniedTools) > 0 {
		// The tools the host denies (exposure hidden): Codex applies this list after
		// enabled_tools and does not offer them.
		t.Set("disabled_tools", append([]string{}, s.DeniedTools...))
	}
	if !s.Enabled {
		t.Set("enabled", false)
	}
	switch {
	case s.Timeout < 0:
		warns = append(warns, abi.Warning{Code: warnTimeout, Server: s.ID, Message: fmt.Sprintf("timeout %gs is negative; the harness default is used", s.Timeout)})
	case s.Timeout > maxTimeout:
		t.Set("tool_timeout_sec", int64(maxTimeout))
		warns = append(warns, abi.Warning{Code: warnTimeout, Server: s.ID, Message: fmt.Sprintf("timeout %gs is too large for Codex; rendered as %gs", s.Timeout, float64(maxTimeout))})
	case s.Timeout > 0:
		t.Set("tool_timeout_sec", seconds(s.Timeout))
	}
	if o := s.OAuth; s.Transport == abi.TransportHTTP && o != nil {
		// Codex 0.169.0 reads the scopes from the server table and the client from its oauth
		// table; it has no key for an authorization-server metadata URL.
		if len(o.Scopes) > 0 {
			t.Set("scopes", append([]string{}, o.Scopes...))
		}
		oauth := format.NewObject()
		if o.ClientID != "" {
			oauth.Set("client_id", o.ClientID)
		}
		if o.CallbackPort != 0 {
			oauth.Set("callback_port", int64(o.CallbackPort))
		}
		if oauth.Len() > 0 {
			t.Set("oauth", oauth)
		}
		var left []string
		if o.AuthServerMetadataURL != "" {
			left = append(left, "authServerMetadataUrl")
		}
		if w := format.OAuthWarning(s, "Codex CLI", left); w != nil {
			warns = append(warns, *w)
		}
	}
	if w := format.LifecycleWarning(s, "Codex CLI"); w != nil {
		warns = append(warns, *w)
	}
	return secret, warns, true
}

// seconds returns a whole number of seconds as an integer, anything else as a float.
func seconds(f float64) any {
	if f == float64(int64(f)) {
		return int64(f)
	}
	return f
}
