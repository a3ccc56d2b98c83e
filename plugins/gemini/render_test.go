package main

import (
	"encoding/json"
	"flag"
	"path/filepath"
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

// decodeServers parses mcp.json out of plan.
func decodeServers(t *testing.T, plan abi.Plan) (abi.File, map[string]map[string]any) {
	t.Helper()
	for _, f := range plan.Files {
		if f.Root == abi.RootConfig && f.Path == renderer.Profile.Config.Path {
			var doc struct {
				MCPServers map[string]map[string]any `json:"mcpServers"`
			}
			require.NoError(t, json.Unmarshal([]byte(f.Content), &doc), "parse settings.json:\n%s", f.Content)
			require.NotNil(t, doc.MCPServers, "settings.json must hold an mcpServers object:\n%s", f.Content)
			for id, s := range doc.MCPServers {
				_, hasURL := s["url"]
				_, hasCommand := s["command"]
				assert.False(t, hasURL && hasCommand, "server %s must not carry both url and command", id)
			}
			return f, doc.MCPServers
		}
	}
	require.FailNow(t, "plan has no config/.gemini/settings.json")
	return abi.File{}, nil
}

func TestGolden(t *testing.T) {
	formattest.CheckGoldens(t, "testdata", []string{"rich", "ambient", "edge", "empty"}, manifest, render, harnessProfile, *update)
}

func TestManifest(t *testing.T) {
	assert.Equal(t, abi.Manifest{
		Name: "render.gemini", Version: "1.0.0", ABIVersion: abi.Version, Harness: "gemini",
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
				"env": map[string]any{"LOADOUT_SPAWN_1": "/h", "LOADOUT_SPAWN_2": "{{loadout.secret.1}}"}, "description": "D", "timeout": 30000.0},
			true, nil, "- s: all tools"},
		{"http", abi.Server{ID: "h", Transport: "http", URL: "https://h/mcp?a=$b", Enabled: true, Timeout: 1.5, Headers: []abi.Pair{{Name: "X", Value: "y$z"}}},
			map[string]any{"httpUrl": "https://h/mcp?a=" + dollar + "b", "headers": map[string]any{"X": "y\\" + dollar + "z"}, "timeout": 1500.0}, false, nil, "- h: all tools"},
		{"dollars everywhere", abi.Server{ID: "x", Transport: "stdio", Command: "/bin/$x", Args: []string{"${HOME}"}, Description: "$HOME", Enabled: true,
			Env: []abi.Pair{{Name: "A", Value: `!$a \$ "'`}}},
			map[string]any{"command": "/usr/bin/env", "args": []any{"-i", "-S", "A=" + dollar + "{LOADOUT_SPAWN_1}", "/bin/" + dollar + "x", dollar + "{HOME}"},
				"env": map[string]any{"LOADOUT_SPAWN_1": `!\` + dollar + `a \\` + dollar + ` "'`}, "description": dollar + "HOME"}, false, nil, "- x: all tools"},
		{"restricted", abi.Server{ID: "r", Transport: "stdio", Command: "x", Enabled: true, ToolsRestricted: true, AllowedTools: []string{"a", "b$c", "d(e)"}},
			map[string]any{"command": "/usr/bin/env", "args": []any{"-i", "x"}, "includeTools": []any{"a"}}, false, []string{abi.WarnToolNameUnsupported, abi.WarnToolNameUnsupported}, "- r: only a"},
		{"restricted to nothing", abi.Server{ID: "r", Transport: "stdio", Command: "x", Enabled: true, ToolsRestricted: true},
			map[string]any{"command": "/usr/bin/env", "args": []any{"-i", "x"}, "includeTools": []any{}}, false, nil, "- r: no tools"},
		{"disabled", abi.Server{ID: "d", Transport: "stdio", Command: "x"}, nil, false, nil, ""},
		{"huge timeout", abi.Server{ID: "t", Transport: "stdio", Command: "x", Enabled: true, Timeout: 1e300},
			map[string]any{"command": "/usr/bin/env", "args": []any{"-i", "x"}, "timeout": renderer.Profile.Config.TimeoutMax}, false, []string{abi.WarnTimeoutAdjusted}, "- t: all tools"},
		{"command with =", abi.Server{ID: "x", Transport: "stdio", Command: "a=b", Enabled: true}, nil, false, []string{format.WarnCommandUnwrappable}, ""},
		{"bad env name", abi.Server{ID: "x", Transport: "stdio", Command: "x", Enabled: true, HostEnv: []abi.Pair{{Name: "1X", Value: "v"}}},
			map[string]any{"command": "/usr/bin/env", "args": []any{"-i", "x"}}, false, []string{format.WarnEnvNameUnsupported}, "- x: all tools"},
		{"reserved", abi.Server{ID: "constructor", Transport: "stdio", Command: "x", Enabled: true}, nil, false, []string{abi.WarnServerNameReserved}, ""},
		{"sse", abi.Server{ID: "x", Transport: "sse", URL: "https://x", Enabled: true}, nil, false, []string{abi.WarnTransportUnsupported}, ""},
		{"oauth", abi.Server{ID: "o", Transport: "http", URL: "https://x", Enabled: true, OAuth: &abi.OAuth{ClientID: "loadout", Scopes: []string{"read", "write"}}},
			map[string]any{"httpUrl": "https://x", "oauth": map[string]any{"clientId": "loadout", "scopes": []any{"read", "write"}}}, false, nil, "- o: all tools"},
		{"oauth port and metadata have no key", abi.Server{ID: "o", Transport: "http", URL: "https://x", Enabled: true, OAuth: &abi.OAuth{ClientID: "loadout", CallbackPort: 8765, Scopes: []string{"read", "write"}, AuthServerMetadataURL: "https://auth.example.com/meta"}},
			map[string]any{"httpUrl": "https://x", "oauth": map[string]any{"clientId": "loadout", "scopes": []any{"read", "write"}}}, false, []string{format.WarnOAuthUnsupported}, "- o: all tools"},
		{"lifecycle", abi.Server{ID: "l", Transport: "stdio", Command: "x", Enabled: true, Lifecycle: "eager"},
			map[string]any{"command": "/usr/bin/env", "args": []any{"-i", "x"}}, false, []string{format.WarnLifecycleUnsupported}, "- l: all tools"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan := mustRender(t, abi.Request{Servers: []abi.Server{tc.server}})
			formattest.CheckPlan(t, manifest, plan)
			f, servers := decodeServers(t, plan)
			assert.Equal(t, tc.wantSecret, f.Secret, "render(%s): settings.json Secret", tc.name)
			assert.Equal(t, "0600", f.Mode, "render(%s): settings.json mode", tc.name)
			if tc.want == nil {
				assert.NotContains(t, servers, tc.server.ID, "render(%s) must not render the server", tc.name)
			} else {
				assert.Equal(t, tc.want, servers[tc.server.ID], "render(%s): server entry", tc.name)
				assert.NotContains(t, servers[tc.server.ID], "trust", "render(%s): trust is never written", tc.name)
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
			assert.Equal(t, []abi.Pair{{Name: "GEMINI_CLI_HOME", Value: "{{loadout.root.config}}"}, {Name: "GEMINI_CLI_TRUST_WORKSPACE", Value: "false"}, {Name: "LOADOUT_SPAWN_DOLLAR", Value: "$"}}, plan.Env, "render(%s): env", tc.name)
			assert.Equal(t, []string{"--skip-trust"}, plan.Args, "render(%s): args", tc.name)
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
		assert.Equal(t, []string{"config/.gemini/settings.json", "config/.gemini/skills/s-1/SKILL.md"}, paths, "ambient=%t: files", ambient)
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
				assert.True(t, got.HasAllowTools, "a restricted server carries includeTools")
			}
		}
		if formattest.ServerByID(servers, strings.ToValidUTF8(id+"-h", "\uFFFD")) != nil {
			assert.True(t, formattest.ConfigFile(t, harnessProfile, plan).Secret, "a file holding a secret header is Secret")
		}
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "") == s }

// TestProfileGenerated: profile_gen.go is profile.yaml as the host reads it.
func TestProfileGenerated(t *testing.T) {
	formattest.CheckProfileGenerated(t, "profile.yaml", harnessProfile)
}
