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
		if f.Root == abi.RootConfig && f.Path == "mcp.json" {
			var doc struct {
				MCPServers map[string]map[string]any `json:"mcpServers"`
			}
			require.NoError(t, json.Unmarshal([]byte(f.Content), &doc), "parse mcp.json:\n%s", f.Content)
			require.NotNil(t, doc.MCPServers, "mcp.json must hold an mcpServers object:\n%s", f.Content)
			for id, s := range doc.MCPServers {
				_, hasURL := s["url"]
				_, hasCommand := s["command"]
				assert.False(t, hasURL && hasCommand, "server %s must not carry both url and command", id)
			}
			return f, doc.MCPServers
		}
	}
	require.FailNow(t, "plan has no config/mcp.json")
	return abi.File{}, nil
}

func TestGolden(t *testing.T) {
	formattest.CheckGoldens(t, "testdata", []string{"rich", "ambient", "edge", "empty"}, manifest, render, harnessProfile, *update)
}

func TestManifest(t *testing.T) {
	assert.Equal(t, abi.Manifest{
		Name: "render.pi", Version: "1.0.0", ABIVersion: abi.Version, Harness: "pi",
		Transports: []string{"stdio", "http"}, NativeSkills: true, Roots: []string{"config"},
	}, manifest, "manifest")
}

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
			map[string]any{"type": "stdio", "command": "/usr/bin/env", "args": []any{"-i", "-S", "HOME=${LOADOUT_SPAWN_1} T=${LOADOUT_SPAWN_2}", "/bin/x", "a"},
				"env": map[string]any{"LOADOUT_SPAWN_1": "/h", "LOADOUT_SPAWN_2": "{{loadout.secret.1}}"}, "cwd": "/w", "description": "D", "timeout": 30.0},
			true, nil, "- s: all tools"},
		{"http", abi.Server{ID: "h", Transport: "http", URL: "https://h/mcp", Enabled: true, Timeout: 1.5, Headers: []abi.Pair{{Name: "X", Value: "y"}}},
			map[string]any{"type": "http", "url": "https://h/mcp", "headers": map[string]any{"X": "y"}, "timeout": 1.5}, false, nil, "- h: all tools"},
		{"exposure passed through", abi.Server{ID: "e", Transport: "stdio", Command: "x", Enabled: true, Exposure: "codemode-deferred",
			ToolExposure: []abi.Pair{{Name: "echo", Value: "direct"}, {Name: "get-*", Value: "hidden"}}},
			map[string]any{"type": "stdio", "command": "/usr/bin/env", "args": []any{"-i", "x"}, "exposure": "codemode", "toolExposure": map[string]any{"echo": "direct", "get-*": "hidden"}}, false, nil, "- e: all tools"},
		{"restricted defaults to direct", abi.Server{ID: "r", Transport: "stdio", Command: "x", Enabled: true, ToolsRestricted: true, AllowedTools: []string{"a", "b-c"}},
			map[string]any{"type": "stdio", "command": "/usr/bin/env", "args": []any{"-i", "x"}, "exposure": "hidden", "toolExposure": map[string]any{"a": "direct", "b-c": "direct"}}, false, nil,
			"- r: only a (mcp__r__a), b-c (mcp__r__b_c)"},
		{"restricted keeps the request's exposure per tool", abi.Server{ID: "r", Transport: "stdio", Command: "x", Enabled: true, ToolsRestricted: true,
			AllowedTools: []string{"echo", "get-sum", "other"}, Exposure: "deferred",
			ToolExposure: []abi.Pair{{Name: "get-*", Value: "codemode"}, {Name: "*", Value: "direct"}, {Name: "echo", Value: "hidden"}}},
			map[string]any{"type": "stdio", "command": "/usr/bin/env", "args": []any{"-i", "x"}, "exposure": "hidden", "toolExposure": map[string]any{"echo": "hidden", "get-sum": "codemode", "other": "direct"}}, false, nil, "- r: only echo"},
		{"restricted to nothing", abi.Server{ID: "r", Transport: "stdio", Command: "x", Enabled: true, ToolsRestricted: true, ToolExposure: []abi.Pair{{Name: "*", Value: "direct"}}},
			map[string]any{"type": "stdio", "command": "/usr/bin/env", "args": []any{"-i", "x"}, "exposure": "hidden"}, false, nil, "- r: no tools"},
		{"disabled", abi.Server{ID: "d", Transport: "stdio", Command: "x"},
			map[string]any{"type": "stdio", "command": "/usr/bin/env", "args": []any{"-i", "x"}, "enabled": false}, false, nil, ""},
		{"bad exposure", abi.Server{ID: "b", Transport: "stdio", Command: "x", Enabled: true, Exposure: "loud", ToolExposure: []abi.Pair{{Name: "t", Value: "nope"}}},
			map[string]any{"type": "stdio", "command": "/usr/bin/env", "args": []any{"-i", "x"}}, false, []string{warnExposure, warnExposure}, "- b: all tools"},
		{"huge timeout", abi.Server{ID: "t", Transport: "stdio", Command: "x", Enabled: true, Timeout: 1e300},
			map[string]any{"type": "stdio", "command": "/usr/bin/env", "args": []any{"-i", "x"}, "timeout": renderer.Profile.Config.TimeoutMax}, false, []string{abi.WarnTimeoutAdjusted}, "- t: all tools"},
		{"bang env escaped", abi.Server{ID: "x", Transport: "stdio", Command: "x", Enabled: true, Env: []abi.Pair{{Name: "A", Value: "!id $HOME"}}},
			map[string]any{"type": "stdio", "command": "/usr/bin/env", "args": []any{"-i", "-S", "A=${LOADOUT_SPAWN_1}", "x"}, "env": map[string]any{"LOADOUT_SPAWN_1": "$!id $$HOME"}},
			false, nil, "- x: all tools"},
		{"expansion header escaped", abi.Server{ID: "x", Transport: "http", URL: "https://x", Enabled: true, Headers: []abi.Pair{{Name: "A", Value: "a${B}"}, {Name: "C", Value: "!c"}}},
			map[string]any{"type": "http", "url": "https://x", "headers": map[string]any{"A": "a$${B}", "C": "$!c"}}, false, nil, "- x: all tools"},
		{"command with =", abi.Server{ID: "x", Transport: "stdio", Command: "a=b", Enabled: true}, nil, false, []string{format.WarnCommandUnwrappable}, ""},
		{"bad env name", abi.Server{ID: "x", Transport: "stdio", Command: "x", Enabled: true, HostEnv: []abi.Pair{{Name: "1X", Value: "v"}}},
			map[string]any{"type": "stdio", "command": "/usr/bin/env", "args": []any{"-i", "x"}}, false, []string{format.WarnEnvNameUnsupported}, "- x: all tools"},
		{"reserved", abi.Server{ID: "constructor", Transport: "stdio", Command: "x", Enabled: true}, nil, false, []string{abi.WarnServerNameReserved}, ""},
		{"sse", abi.Server{ID: "x", Transport: "sse", URL: "https://x", Enabled: true}, nil, false, []string{abi.WarnTransportUnsupported}, ""},
		{"oauth", abi.Server{ID: "o", Transport: "http", URL: "https://x", Enabled: true, OAuth: &abi.OAuth{ClientID: "loadout", CallbackPort: 8765,
			Scopes: []string{"read", "write"}, AuthServerMetadataURL: "http://[::1]:9000/meta"}},
			map[string]any{"type": "http", "url": "https://x", "oauth": map[string]any{"clientId": "loadout", "callbackPort": 8765.0, "scope": "read write",
				"authServerMetadataUrl": "http://[::1]:9000/meta"}}, false, nil, "- o: all tools"},
		{"oauth metadata Pi refuses", abi.Server{ID: "o", Transport: "http", URL: "https://x", Enabled: true, OAuth: &abi.OAuth{
			AuthServerMetadataURL: "http://host.docker.internal:9000/meta"}},
			map[string]any{"type": "http", "url": "https://x"}, false, []string{format.WarnOAuthUnsupported}, "- o: all tools"},
		{"lifecycle", abi.Server{ID: "l", Transport: "stdio", Command: "x", Enabled: true, Lifecycle: "keep-alive", IdleTimeout: 5},
			map[string]any{"type": "stdio", "command": "/usr/bin/env", "args": []any{"-i", "x"}}, false, []string{format.WarnLifecycleUnsupported}, "- l: all tools"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan := mustRender(t, abi.Request{Servers: []abi.Server{tc.server}})
			formattest.CheckPlan(t, manifest, plan)
			f, servers := decodeServers(t, plan)
			assert.Equal(t, tc.wantSecret, f.Secret, "render(%s): mcp.json Secret", tc.name)
			assert.Equal(t, "0600", f.Mode, "render(%s): mcp.json mode", tc.name)
			if tc.want == nil {
				assert.NotContains(t, servers, tc.server.ID, "render(%s) must not render the server", tc.name)
			} else {
				assert.Equal(t, tc.want, servers[tc.server.ID], "render(%s): server entry", tc.name)
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
			assert.Equal(t, []abi.Pair{{Name: "PI_CODING_AGENT_DIR", Value: "{{loadout.root.config}}"}}, plan.Env, "render(%s): env", tc.name)
		})
	}
}

func TestNameConflicts(t *testing.T) {
	var servers []abi.Server
	for _, id := range []string{"a-b", "a_b", "c", "a-b_", "x_y", "x-y"} {
		servers = append(servers, abi.Server{ID: id, Transport: abi.TransportStdio, Command: "x", Enabled: true})
	}
	// A disabled server is still in the file, so it claims its name too.
	servers[4].Enabled = false
	plan := mustRender(t, abi.Request{Servers: servers})
	_, got := decodeServers(t, plan)
	var ids []string
	for id := range got {
		ids = append(ids, id)
	}
	assert.ElementsMatch(t, []string{"a-b", "c", "a-b_", "x_y"}, ids, "rendered servers")
	var conflicts []string
	for _, w := range plan.Warnings {
		if w.Code == abi.WarnServerNameConflict {
			conflicts = append(conflicts, w.Server)
		}
	}
	assert.Equal(t, []string{"a_b", "x-y"}, conflicts, "the second server of each conflicting pair is reported")
}

func TestSkillsAlwaysNative(t *testing.T) {
	for _, ambient := range []bool{false, true} {
		plan := mustRender(t, abi.Request{Run: abi.Run{AmbientAuth: ambient}, Skills: []abi.Skill{{Name: "S_1", Description: "d", Instructions: "i"}}})
		var paths []string
		for _, f := range plan.Files {
			paths = append(paths, f.Root+"/"+f.Path)
		}
		assert.Equal(t, []string{"config/mcp.json", "config/skills/s-1/SKILL.md"}, paths, "ambient=%t: files", ambient)
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
			assert.Equal(t, []string{"cmd", arg}, got.Args[len(got.Args)-2:], "command and args follow the wrapper")
			if restricted {
				assert.Equal(t, "hidden", formattest.Deref(got.Exposure), "a restricted server is hidden")
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
