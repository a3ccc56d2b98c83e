package main

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
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

// knownKeys are the [mcp_servers.<id>] keys Codex 0.169.0 accepts under --strict-config for
// each transport (docs/FORMATS.md §2.1) that this renderer may emit.
var knownKeys = map[string]map[string]bool{
	"stdio": {"command": true, "args": true, "env": true, "cwd": true, "enabled_tools": true, "disabled_tools": true, "enabled": true, "tool_timeout_sec": true},
	// oauth on a stdio server fails the whole config ("oauth is not supported for stdio").
	"http": {"url": true, "http_headers": true, "enabled_tools": true, "disabled_tools": true, "enabled": true, "tool_timeout_sec": true, "scopes": true, "oauth": true},
}

// decodeConfig parses config.toml out of plan and checks every table holds only known keys.
func decodeConfig(t *testing.T, plan abi.Plan) (abi.File, []string, map[string]map[string]any) {
	t.Helper()
	for _, f := range plan.Files {
		if f.Root != abi.RootConfig || f.Path != "config.toml" {
			continue
		}
		var doc struct {
			MCPServers map[string]map[string]any `toml:"mcp_servers"`
		}
		md, err := toml.Decode(f.Content, &doc)
		require.NoError(t, err, "parse config.toml:\n%s", f.Content)
		var order []string
		for _, k := range md.Keys() {
			if len(k) == 2 && k[0] == "mcp_servers" {
				order = append(order, k[1])
			}
		}
		for id, tbl := range doc.MCPServers {
			transport := "stdio"
			if _, ok := tbl["url"]; ok {
				transport = "http"
				assert.NotContains(t, tbl, "command", "server %s must not carry both url and command", id)
			}
			for k := range tbl {
				assert.True(t, knownKeys[transport][k], "server %s (%s): key %q is unknown to Codex and fails --strict-config", id, transport, k)
			}
		}
		return f, order, doc.MCPServers
	}
	require.FailNow(t, "plan has no config/config.toml")
	return abi.File{}, nil, nil
}

func TestGolden(t *testing.T) {
	formattest.CheckGoldens(t, "testdata", []string{"rich", "ambient", "edge", "empty"}, manifest, render, harnessProfile, *update, decodeConfigCheck)
}

// decodeConfigCheck holds a golden plan's config.toml to the keys each table may hold (decodeConfig).
func decodeConfigCheck(t *testing.T, plan abi.Plan) { decodeConfig(t, plan) }

func TestManifest(t *testing.T) {
	assert.Equal(t, abi.Manifest{
		Name: "render.codex", Version: "1.0.0", ABIVersion: abi.Version, Harness: "codex",
		Transports: []string{"stdio", "http"}, NativeSkills: true, Roots: []string{"config", "checkout"},
	}, manifest, "manifest")
}

func TestServerTables(t *testing.T) {
	tests := []struct {
		name       string
		server     abi.Server
		want       map[string]any // nil: no table
		wantSecret bool
		wantWarn   string
		wantPrompt string
	}{
		{"stdio pinned env", abi.Server{ID: "s", Transport: "stdio", Command: "/bin/x", Args: []string{"a\"b", "c\\d"}, Cwd: "/w", Enabled: true,
			HostEnv: []abi.Pair{{Name: "HOME", Value: "/h"}, {Name: "PATH", Value: "/bin"}}, Env: []abi.Pair{{Name: "HOME", Value: "/own"}}},
			map[string]any{"command": "/usr/bin/env", "args": []any{"-i", "-S", "HOME=${LOADOUT_SPAWN_1} PATH=${LOADOUT_SPAWN_2}", "/bin/x", "a\"b", "c\\d"}, "cwd": "/w",
				"env": map[string]any{"LOADOUT_SPAWN_1": "/own", "LOADOUT_SPAWN_2": "/bin"}}, false, "", "- s: all tools"},
		{"stdio secret env", abi.Server{ID: "s", Transport: "stdio", Command: "x", Enabled: true, Env: []abi.Pair{{Name: "MCP_ACCESS_TOKEN", Value: "{{loadout.secret.1}}", Secret: true}}},
			map[string]any{"command": "/usr/bin/env", "args": []any{"-i", "-S", "MCP_ACCESS_TOKEN=${LOADOUT_SPAWN_1}", "x"},
				"env": map[string]any{"LOADOUT_SPAWN_1": "{{loadout.secret.1}}"}}, true, "", "- s: all tools"},
		{"command with =", abi.Server{ID: "s", Transport: "stdio", Command: "a=b", Enabled: true}, nil, false, format.WarnCommandUnwrappable, ""},
		{"http bearer in headers", abi.Server{ID: "h", Transport: "http", URL: "https://h.example/mcp", Enabled: true,
			Headers: []abi.Pair{{Name: "Authorization", Value: "Bearer {{loadout.secret.1}}", Secret: true}, {Name: "X-A", Value: "b"}}},
			map[string]any{"url": "https://h.example/mcp", "http_headers": map[string]any{"Authorization": "Bearer {{loadout.secret.1}}", "X-A": "b"}}, true, "", "- h: all tools"},
		{"restricted to nothing", abi.Server{ID: "r", Transport: "stdio", Command: "x", Enabled: true, ToolsRestricted: true},
			map[string]any{"command": "/usr/bin/env", "args": []any{"-i", "x"}, "enabled_tools": []any{}}, false, "", "- r: no tools"},
		{"restricted", abi.Server{ID: "r", Transport: "stdio", Command: "x", Enabled: true, ToolsRestricted: true, AllowedTools: []string{"a", "b.c"}},
			map[string]any{"command": "/usr/bin/env", "args": []any{"-i", "x"}, "enabled_tools": []any{"a", "b.c"}}, false, "", "- r: only a, b.c"},
		{"disabled", abi.Server{ID: "d", Transport: "stdio", Command: "x"},
			map[string]any{"command": "/usr/bin/env", "args": []any{"-i", "x"}, "enabled": false}, false, "", ""},
		{"timeout int", abi.Server{ID: "t", Transport: "http", URL: "https://x", Enabled: true, Timeout: 60},
			map[string]any{"url": "https://x", "tool_timeout_sec": int64(60)}, false, "", "- t: all tools"},
		{"timeout float", abi.Server{ID: "t", Transport: "http", URL: "https://x", Enabled: true, Timeout: 2.5},
			map[string]any{"url": "https://x", "tool_timeout_sec": 2.5}, false, "", "- t: all tools"},
		{"timeout huge", abi.Server{ID: "t", Transport: "http", URL: "https://x", Enabled: true, Timeout: 1e300},
			map[string]any{"url": "https://x", "tool_timeout_sec": int64(1e9)}, false, abi.WarnTimeoutAdjusted, "- t: all tools"},
		{"sse", abi.Server{ID: "x", Transport: "sse", URL: "https://x", Enabled: true}, nil, false, abi.WarnTransportUnsupported, ""},
		{"oauth", abi.Server{ID: "o", Transport: "http", URL: "https://x", Enabled: true, OAuth: &abi.OAuth{ClientID: "loadout", CallbackPort: 8765, Scopes: []string{"read", "write"}}},
			map[string]any{"url": "https://x", "scopes": []any{"read", "write"}, "oauth": map[string]any{"client_id": "loadout", "callback_port": int64(8765)}}, false, "", "- o: all tools"},
		{"oauth metadata has no key", abi.Server{ID: "o", Transport: "http", URL: "https://x", Enabled: true, OAuth: &abi.OAuth{ClientID: "loadout", CallbackPort: 8765, Scopes: []string{"read", "write"}, AuthServerMetadataURL: "https://auth.example.com/meta"}},
			map[string]any{"url": "https://x", "scopes": []any{"read", "write"}, "oauth": map[string]any{"client_id": "loadout", "callback_port": int64(8765)}},
			false, format.WarnOAuthUnsupported, "- o: all tools"},
		{"lifecycle", abi.Server{ID: "l", Transport: "stdio", Command: "x", Enabled: true, IdleTimeout: 10},
			map[string]any{"command": "/usr/bin/env", "args": []any{"-i", "x"}}, false, format.WarnLifecycleUnsupported, "- l: all tools"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan := mustRender(t, abi.Request{Servers: []abi.Server{tc.server}})
			formattest.CheckPlan(t, manifest, plan)
			f, _, servers := decodeConfig(t, plan)
			assert.Equal(t, tc.wantSecret, f.Secret, "render(%s): config.toml Secret", tc.name)
			assert.Equal(t, "0600", f.Mode, "render(%s): config.toml mode", tc.name)
			if tc.want == nil {
				assert.NotContains(t, servers, tc.server.ID, "render(%s) must not render the server", tc.name)
			} else {
				assert.Equal(t, tc.want, servers[tc.server.ID], "render(%s): server table", tc.name)
			}
			if tc.wantPrompt == "" {
				assert.NotContains(t, plan.Prompt, "- "+tc.server.ID+":", "render(%s): the prompt must not offer the server", tc.name)
			} else {
				assert.Contains(t, plan.Prompt, tc.wantPrompt+"\n", "render(%s): the prompt states the tools", tc.name)
			}
			var codes []string
			for _, w := range plan.Warnings {
				codes = append(codes, w.Code)
			}
			if tc.wantWarn == "" {
				assert.Empty(t, codes, "render(%s): warnings", tc.name)
			} else {
				assert.Equal(t, []string{tc.wantWarn}, codes, "render(%s): warnings", tc.name)
			}
			assert.Equal(t, []abi.Pair{{Name: "CODEX_HOME", Value: "{{loadout.root.config}}"}}, plan.Env, "render(%s): env", tc.name)
			assert.Empty(t, plan.Args, "render(%s): args", tc.name)
		})
	}
}

func TestServerOrder(t *testing.T) {
	var servers []abi.Server
	for _, id := range []string{"zeta", "alpha", "a-b", "a_b", "m"} {
		servers = append(servers, abi.Server{ID: id, Transport: abi.TransportStdio, Command: "x", Enabled: true})
	}
	plan := mustRender(t, abi.Request{Servers: servers})
	_, order, _ := decodeConfig(t, plan)
	assert.Equal(t, []string{"zeta", "alpha", "a-b", "a_b", "m"}, order, "tables keep request order")
}

func TestSkillsPlacement(t *testing.T) {
	skills := []abi.Skill{{Name: "a.b", Description: "D", Instructions: "do", Resources: []abi.Resource{{Path: "x.md", Content: "X"}}}}
	plan := mustRender(t, abi.Request{Skills: skills})
	var paths []string
	for _, f := range plan.Files {
		paths = append(paths, f.Root+"/"+f.Path)
	}
	assert.Equal(t, []string{"config/config.toml", "config/skills/a-b/SKILL.md", "config/skills/a-b/x.md"}, paths, "isolated run: native skills")

	plan = mustRender(t, abi.Request{Run: abi.Run{AmbientAuth: true}, Skills: skills})
	paths = nil
	for _, f := range plan.Files {
		paths = append(paths, f.Root+"/"+f.Path)
	}
	assert.Equal(t, []string{"config/config.toml", "checkout/.cat-context/skill/a-b/x.md"}, paths, "ambient run: skills in the checkout")
	assert.Equal(t, []string{".cat-context/"}, plan.GitExclude, "ambient run: gitExclude")
	assert.Contains(t, plan.Prompt, "### Skill: a-b", "ambient run: instructions folded into the prompt")
}

// FuzzRender checks the plan properties and the TOML round trip on requests built from fuzzed
// strings.
func FuzzRender(f *testing.F) {
	f.Add("id", "arg\n\"x\"\x7f", "K", "v\u2028\\u0041", "tool", "My_Skill", "desc\nmore", "https://x.example/", false, 1.5)
	f.Add("a.b", "${HOME}", "bad key", "{{loadout.secret.1}}", "", "..", "", "http://127.0.0.1/", true, 0.0)
	f.Fuzz(func(t *testing.T, id, arg, key, val, tool, skill, desc, url string, ambient bool, timeout float64) {
		// The host sends valid UTF-8 only (JSON on the wire): normalize as its encoder would.
		id, arg, key, val, tool, skill, desc, url = formattest.ValidRunes(id), formattest.ValidRunes(arg), formattest.ValidRunes(key), formattest.ValidRunes(val), formattest.ValidRunes(tool), formattest.ValidRunes(skill), formattest.ValidRunes(desc), formattest.ValidRunes(url)
		secret := strings.Contains(val, formattest.SecretPrefix)
		req := abi.Request{ABIVersion: abi.Version, Run: abi.Run{AmbientAuth: ambient},
			Servers: []abi.Server{
				{ID: id, Transport: abi.TransportStdio, Command: arg, Args: []string{arg, val}, Env: []abi.Pair{{Name: key, Value: val, Secret: secret}},
					Enabled: true, ToolsRestricted: tool != "", AllowedTools: []string{tool}, Timeout: timeout},
				{ID: id + "-h", Transport: abi.TransportHTTP, URL: url, Headers: []abi.Pair{{Name: key, Value: val, Secret: true}}, Enabled: false},
			},
			Skills: []abi.Skill{{Name: skill, Description: desc, Instructions: arg, Resources: []abi.Resource{{Path: "f.md", Content: arg}}}},
		}
		if formattest.AnyHoldsSecret(arg, skill, desc) {
			e := sdktest.RenderError(t, manifest, render, req)
			assert.Equal(t, abi.CodeInvalidInput, e.Code, "error code of a request whose skills hold a secret placeholder")
			return
		}
		plan := mustRender(t, req)
		formattest.CheckPlan(t, manifest, plan)
		assert.Equal(t, string(formattest.Archive(plan)), string(formattest.Archive(mustRender(t, req))), "render must be deterministic")
		decodeConfig(t, plan) // Codex's --strict-config keys
		servers := formattest.CheckServers(t, harnessProfile, req, plan)
		got := formattest.ServerByID(servers, formattest.ValidRunes(id))
		if strings.Contains(arg, "=") {
			assert.Nil(t, got, "a command holding = cannot be wrapped")
			require.NotEmpty(t, plan.Warnings, "an unwrappable server is reported")
			assert.Equal(t, format.WarnCommandUnwrappable, plan.Warnings[0].Code, "an unwrappable server is reported")
			return
		}
		require.NotNil(t, got, "server %q must be rendered:\n%s", id, plan.Files[0].Content)
		assert.Equal(t, "/usr/bin/env", formattest.Deref(got.Command), "wrapper command")
		require.GreaterOrEqual(t, len(got.Args), 4, "wrapped args %q", got.Args)
		assert.Equal(t, []string{formattest.ValidRunes(arg), formattest.ValidRunes(arg), formattest.ValidRunes(val)}, got.Args[len(got.Args)-3:], "command and args follow the wrapper")
	})
}

// TestProfileGenerated: profile_gen.go is profile.yaml as the host reads it.
func TestProfileGenerated(t *testing.T) {
	formattest.CheckProfileGenerated(t, "profile.yaml", harnessProfile)
}
