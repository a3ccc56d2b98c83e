package main

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
	"github.com/loadout-dev/loadout/sdk/format/formattest"
	"github.com/loadout-dev/loadout/sdk/profile"
	"github.com/loadout-dev/loadout/sdk/sdktest"
)

var update = flag.Bool("update", false, "update golden files")

func loadRequest(t *testing.T, name string) abi.Request {
	t.Helper()
	return sdktest.LoadRequest(t, filepath.Join("testdata", "requests", name+".json"))
}

func mustRender(t *testing.T, req abi.Request) abi.Plan {
	t.Helper()
	return sdktest.Render(t, manifest, render, req)
}

// decodeServers parses mcp-config.json out of plan.
func decodeServers(t *testing.T, plan abi.Plan) (abi.File, map[string]map[string]any) {
	t.Helper()
	for _, f := range plan.Files {
		if f.Root == abi.RootConfig && f.Path == renderer.Profile.Config.Path {
			var doc struct {
				MCPServers map[string]map[string]any `json:"mcpServers"`
			}
			require.NoError(t, json.Unmarshal([]byte(f.Content), &doc), "parse mcp-config.json:\n%s", f.Content)
			require.NotNil(t, doc.MCPServers, "mcp-config.json must hold an mcpServers object:\n%s", f.Content)
			for id, s := range doc.MCPServers {
				_, hasURL := s["url"]
				_, hasCommand := s["command"]
				assert.False(t, hasURL && hasCommand, "server %s must not carry both url and command", id)
			}
			return f, doc.MCPServers
		}
	}
	require.FailNow(t, "plan has no config/mcp-config.json")
	return abi.File{}, nil
}

func TestGolden(t *testing.T) {
	formattest.CheckGoldens(t, "testdata", []string{"rich", "ambient", "edge", "empty"}, manifest, render, harnessProfile, *update)
}

func TestManifest(t *testing.T) {
	assert.Equal(t, abi.Manifest{
		Name: "render.copilot", Version: "1.0.0", ABIVersion: abi.Version, Harness: "copilot",
		Transports: []string{"stdio", "http"}, NativeSkills: true, Roots: []string{"config"},
	}, manifest, "manifest")
}

const dollar = "${LOADOUT_SPAWN_DOLLAR:-$}"

func TestServerEntries(t *testing.T) {
	tests := []struct {
		name       string
		server     abi.Server
		want       map[string]any // nil: not rendered
		wantSecret bool
		wantWarn   []string
		wantPrompt string
	}{
		{"stdio", abi.Server{ID: "s", Transport: "stdio", Command: "/bin/x", Args: []string{"a"}, Cwd: "/w", Description: "D", Timeout: 30, Enabled: true,
			HostEnv: []abi.Pair{{Name: "HOME", Value: "/h"}}, Env: []abi.Pair{{Name: "T", Value: "{{loadout.secret.1}}", Secret: true}}},
			map[string]any{"command": "/usr/bin/env", "args": []any{"-i", "-C", "/w", "-S", "HOME=" + dollar + "{LOADOUT_SPAWN_1} T=" + dollar + "{LOADOUT_SPAWN_2}", "/bin/x", "a"},
				"env": map[string]any{"LOADOUT_SPAWN_1": "/h", "LOADOUT_SPAWN_2": "{{loadout.secret.1}}"}, "timeout": 30000.0},
			true, nil, "- s: all tools"},
		{"http", abi.Server{ID: "h", Transport: "http", URL: "https://h/mcp?a=$b", Enabled: true, Timeout: 1.5, Headers: []abi.Pair{{Name: "X", Value: "y$z"}}},
			map[string]any{"type": "http", "url": "https://h/mcp?a=" + dollar + "b", "headers": map[string]any{"X": "y" + dollar + "z"}, "timeout": 1500.0}, false, nil, "- h: all tools"},
		{"dollars everywhere", abi.Server{ID: "x", Transport: "stdio", Command: "/bin/$x", Args: []string{"${HOME}"}, Cwd: "~/$w", Description: "$HOME", Enabled: true,
			Env: []abi.Pair{{Name: "A", Value: `!$a \$ "'`}}},
			map[string]any{"command": "/usr/bin/env", "args": []any{"-i", "-C", "~/" + dollar + "w", "-S", "A=" + dollar + "{LOADOUT_SPAWN_1}", "/bin/" + dollar + "x", dollar + "{HOME}"},
				"env": map[string]any{"LOADOUT_SPAWN_1": `!` + dollar + `a \` + dollar + ` "'`}}, false, nil, "- x: all tools"},
		{"restricted", abi.Server{ID: "r", Transport: "stdio", Command: "x", Enabled: true, ToolsRestricted: true, AllowedTools: []string{"a", "get.item", "x-y", "*", "b$c", "d(e)", ""}},
			map[string]any{"command": "/usr/bin/env", "args": []any{"-i", "x"}, "tools": []any{"a", "get.item", "x-y"}}, false, []string{abi.WarnToolNameUnsupported, abi.WarnToolNameUnsupported, abi.WarnToolNameUnsupported, abi.WarnToolNameUnsupported}, "- r: only a, get.item, x-y"},
		{"restricted to nothing", abi.Server{ID: "r", Transport: "stdio", Command: "x", Enabled: true, ToolsRestricted: true},
			map[string]any{"command": "/usr/bin/env", "args": []any{"-i", "x"}, "tools": []any{}}, false, nil, "- r: no tools"},
		{"disabled", abi.Server{ID: "d", Transport: "stdio", Command: "x"}, nil, false, nil, ""},
		{"huge timeout", abi.Server{ID: "t", Transport: "stdio", Command: "x", Enabled: true, Timeout: 1e300},
			map[string]any{"command": "/usr/bin/env", "args": []any{"-i", "x"}, "timeout": renderer.Profile.Config.TimeoutMax}, false, []string{abi.WarnTimeoutAdjusted}, "- t: all tools"},
		{"command with =", abi.Server{ID: "x", Transport: "stdio", Command: "a=b", Enabled: true}, nil, false, []string{format.WarnCommandUnwrappable}, ""},
		{"bad env name", abi.Server{ID: "x", Transport: "stdio", Command: "x", Enabled: true, HostEnv: []abi.Pair{{Name: "1X", Value: "v"}}},
			map[string]any{"command": "/usr/bin/env", "args": []any{"-i", "x"}}, false, []string{format.WarnEnvNameUnsupported}, "- x: all tools"},
		{"reserved", abi.Server{ID: "constructor", Transport: "stdio", Command: "x", Enabled: true}, nil, false, []string{abi.WarnServerNameReserved}, ""},
		{"sse", abi.Server{ID: "x", Transport: "sse", URL: "https://x", Enabled: true}, nil, false, []string{abi.WarnTransportUnsupported}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan := mustRender(t, abi.Request{Servers: []abi.Server{tc.server}})
			formattest.CheckPlan(t, manifest, plan)
			f, servers := decodeServers(t, plan)
			assert.Equal(t, tc.wantSecret, f.Secret, "render(%s): mcp-config.json Secret", tc.name)
			assert.Equal(t, "0600", f.Mode, "render(%s): mcp-config.json mode", tc.name)
			if tc.want == nil {
				assert.NotContains(t, servers, tc.server.ID, "render(%s) must not render the server", tc.name)
			} else {
				assert.Equal(t, tc.want, servers[tc.server.ID], "render(%s): server entry", tc.name)
				for _, key := range []string{"disabled", "enabled", "description", "cwd"} {
					assert.NotContains(t, servers[tc.server.ID], key, "render(%s): %s is never written", tc.name, key)
				}
			}
			if tc.wantPrompt == "" {
				assert.NotContains(t, plan.Prompt, "- "+tc.server.ID+":", "render(%s): the prompt must not offer the server", tc.name)
			} else {
				assert.Contains(t, plan.Prompt, tc.wantPrompt, "render(%s): the prompt states the tools", tc.name)
			}
			var codes []string
			for _, w := range plan.Warnings {
				codes = append(codes, w.Code)
			}
			assert.Equal(t, tc.wantWarn, codes, "render(%s): warnings", tc.name)
			assert.Equal(t, []abi.Pair{{Name: "COPILOT_HOME", Value: "{{loadout.root.config}}"}, {Name: "COPILOT_ALLOW_ALL", Value: "false"}, {Name: "LOADOUT_SPAWN_DOLLAR", Value: "$"}}, plan.Env, "render(%s): env", tc.name)
			assert.Equal(t, []string{"--disable-builtin-mcps", "--no-auto-update"}, plan.Args, "render(%s): args", tc.name)
		})
	}
}

func TestSkillsAlwaysNative(t *testing.T) {
	for _, ambient := range []bool{false, true} {
		plan := mustRender(t, abi.Request{Run: abi.Run{AmbientAuth: ambient}, Skills: []abi.Skill{{Name: "S_1", Description: "d", Instructions: "i"}}})
		var paths []string
		for _, f := range plan.Files {
			paths = append(paths, f.Root+"/"+f.Path)
		}
		assert.Equal(t, []string{"config/mcp-config.json", "config/skills/s-1/SKILL.md"}, paths, "ambient=%t: files", ambient)
		assert.Empty(t, plan.GitExclude, "ambient=%t: nothing in the checkout", ambient)
	}
}

// FuzzRender checks the plan properties and the JSON round trip on requests built from fuzzed
// strings.
func FuzzRender(f *testing.F) {
	f.Add("id", "arg\n\"x\"", "K", "v\u2028<&>", "tool", "My_Skill", "desc\nmore", "deferred", false)
	f.Add("a_b", "${HOME}", "HOME", "!x", "", "..", "", "hidden", true)
	f.Fuzz(func(t *testing.T, id, arg, key, val, tool, skill, desc, exposure string, restricted bool) {
		// The host sends valid UTF-8 only (JSON on the wire): normalize as its encoder would.
		id, arg, key, val, tool, skill, desc, exposure = formattest.ValidRunes(id), formattest.ValidRunes(arg), formattest.ValidRunes(key), formattest.ValidRunes(val), formattest.ValidRunes(tool), formattest.ValidRunes(skill), formattest.ValidRunes(desc), formattest.ValidRunes(exposure)
		req := abi.Request{ABIVersion: abi.Version,
			Servers: []abi.Server{
				{ID: id, Transport: abi.TransportStdio, Command: "cmd", Args: []string{arg}, Env: []abi.Pair{{Name: key, Value: val}}, Enabled: true,
					ToolsRestricted: restricted, AllowedTools: []string{tool}, Exposure: exposure, ToolExposure: []abi.Pair{{Name: tool, Value: exposure}}},
				{ID: id + "-h", Transport: abi.TransportHTTP, URL: arg, Headers: []abi.Pair{{Name: key, Value: "{{loadout.secret.1}}", Secret: true}}, Enabled: true},
			},
			Skills: []abi.Skill{{Name: skill, Description: desc, Instructions: arg}},
		}
		if formattest.AnyHoldsSecret(arg, skill, desc) {
			e := sdktest.RenderError(t, manifest, render, req)
			assert.Equal(t, abi.CodeInvalidInput, e.Code, "error code of a request whose skills hold a secret placeholder")
			return
		}
		plan := mustRender(t, req)
		formattest.CheckPlan(t, manifest, plan)
		assert.Equal(t, string(formattest.Archive(plan)), string(formattest.Archive(mustRender(t, req))), "render must be deterministic")
		servers := formattest.CheckServers(t, harnessProfile, req, plan)
		if got := formattest.ServerByID(servers, strings.ToValidUTF8(id, "\uFFFD")); got != nil && utf8Valid(id+arg) {
			require.GreaterOrEqual(t, len(got.Args), 3, "wrapped args %q", got.Args)
			assert.Equal(t, []string{"cmd", harnessProfile.Spell(profile.PosArgs, arg)}, got.Args[len(got.Args)-2:], "command and args follow the wrapper")
			if restricted {
				assert.True(t, got.HasAllowTools, "a restricted server carries tools")
			}
		}
		if formattest.ServerByID(servers, strings.ToValidUTF8(id+"-h", "\uFFFD")) != nil {
			assert.True(t, formattest.ConfigFile(t, harnessProfile, plan).Secret, "a file holding a secret header is Secret")
		}
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "") == s }

// TestOAuth: an http server's client id and scopes become the flat keys oauthClientId and
// oauthScopes (docs/FORMATS.md §5.2); one oauth_unsupported warning names exactly what is left
// out: the callback port and metadata URL (no key), and scopes without a client id (Copilot
// would drop the whole server).
func TestOAuth(t *testing.T) {
	const metadata = "https://auth.example.com/.well-known/oauth-authorization-server"
	tests := []struct {
		name     string
		oauth    abi.OAuth
		want     map[string]any // the OAuth keys of the entry
		wantLeft []string       // the members the warning names; nil: no warning
	}{
		{"every member", abi.OAuth{ClientID: "cid", CallbackPort: 8765, Scopes: []string{"docs:read", "docs:search"}, AuthServerMetadataURL: metadata},
			map[string]any{"oauthClientId": "cid", "oauthScopes": []any{"docs:read", "docs:search"}}, []string{"callbackPort", "authServerMetadataUrl"}},
		{"client id and scopes", abi.OAuth{ClientID: "cid", Scopes: []string{"read"}},
			map[string]any{"oauthClientId": "cid", "oauthScopes": []any{"read"}}, nil},
		{"client id only", abi.OAuth{ClientID: "cid"}, map[string]any{"oauthClientId": "cid"}, nil},
		{"scopes without a client id", abi.OAuth{Scopes: []string{"read"}}, map[string]any{}, []string{"scopes"}},
		{"scopes and a port without a client id", abi.OAuth{CallbackPort: 1, Scopes: []string{"read"}}, map[string]any{}, []string{"scopes", "callbackPort"}},
		{"metadata URL only", abi.OAuth{AuthServerMetadataURL: metadata}, map[string]any{}, []string{"authServerMetadataUrl"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.oauth
			plan := mustRender(t, abi.Request{Servers: []abi.Server{{ID: "h", Transport: "http", URL: "https://h/mcp", Enabled: true, OAuth: &o}}})
			formattest.CheckPlan(t, manifest, plan)
			_, servers := decodeServers(t, plan)
			got := map[string]any{}
			for k, v := range servers["h"] {
				if strings.HasPrefix(strings.ToLower(k), "oauth") {
					got[k] = v
				}
			}
			assert.Equal(t, tc.want, got, "render(%s): the entry's OAuth keys", tc.name)
			if tc.wantLeft == nil {
				assert.Empty(t, plan.Warnings, "render(%s): nothing is left out", tc.name)
				return
			}
			require.Len(t, plan.Warnings, 1, "render(%s): one warning", tc.name)
			w := plan.Warnings[0]
			assert.Equal(t, abi.Warning{Code: abi.WarnOAuthUnsupported, Server: "h", Message: w.Message}, w, "render(%s): warning", tc.name)
			for _, m := range []string{"clientId", "callbackPort", "scopes", "authServerMetadataUrl"} {
				named := strings.Contains(w.Message, "oauth "+m) || strings.Contains(w.Message, ", "+m) || m == "scopes" && strings.Contains(w.Message, "scopes left out")
				assert.Equal(t, slices.Contains(tc.wantLeft, m), named, "render(%s): the warning names %s: %q", tc.name, m, w.Message)
			}
		})
	}
	// OAuth on a stdio server has no meaning (the parser ignores it): nothing is written.
	plan := mustRender(t, abi.Request{Servers: []abi.Server{{ID: "s", Transport: "stdio", Command: "x", Enabled: true, OAuth: &abi.OAuth{ClientID: "cid"}}}})
	_, servers := decodeServers(t, plan)
	assert.NotContains(t, servers["s"], "oauthClientId", "stdio: no OAuth key")
}

// TestProfileGenerated: profile_gen.go is profile.yaml as the host reads it.
func TestProfileGenerated(t *testing.T) {
	formattest.CheckProfileGenerated(t, "profile.yaml", harnessProfile)
}
