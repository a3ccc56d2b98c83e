// Command copilot is loadout's GitHub Copilot CLI renderer plugin (render.copilot), measured
// against @github/copilot 1.0.102 (docs/FORMATS.md §5.2). It is its profile (profile.yaml,
// as the Go literal profile_gen.go that go generate writes) rendered by the SDK's profile-driven renderer (sdk/harness), plus what the profile
// cannot say:
//
//   - a tools (include list) entry is left out (with a warning) when it holds a character
//     outside [A-Za-z0-9_.-]: Copilot matches entries by exact name, except "*";
//   - excludeTools entries are written as they are: Copilot expands no tool entry;
//   - an http server's OAuth goes into the flat keys oauthClientId and oauthScopes, scopes only
//     with a client id (Copilot drops an entry whose scopes come without one).
//
// The profile gives the rest: $COPILOT_HOME/mcp-config.json with mcpServers (stdio servers
// through env -i, http servers as type "http", url and headers, timeout in milliseconds,
// tools, excludeTools; no description key, and no enabled key, so a disabled server is left
// out), the args --disable-builtin-mcps and --no-auto-update, env COPILOT_HOME,
// COPILOT_ALLOW_ALL=false and LOADOUT_SPAWN_DOLLAR=$, and the skills under skills/.
//
// render is pure and deterministic; main.go registers it with the sdk for the wasm build.
package main

import (
	"strings"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
	"github.com/loadout-dev/loadout/sdk/harness"
)

//go:generate go run github.com/loadout-dev/loadout/sdk/cmd/profilegen

var manifest = abi.Manifest{
	Name:         "render.copilot",
	Version:      "1.0.0",
	ABIVersion:   abi.Version,
	Harness:      "copilot",
	Transports:   []string{abi.TransportStdio, abi.TransportHTTP},
	NativeSkills: true,
	Roots:        []string{abi.RootConfig},
}

var renderer = harness.MustNew(harness.Renderer{
	Manifest: manifest,
	Profile:  harnessProfile,
	Name:     "GitHub Copilot CLI",
	ToolName: func(t string) string {
		if !isToolName(t) {
			return "holds a character outside [A-Za-z0-9_.-]"
		}
		return ""
	},
	OAuth: renderOAuth,
})

func render(req abi.Request) (abi.Plan, error) { return renderer.Render(req) }

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
