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

// configFile is where the plan writes the servers: the file --mcp-config names.
const configFile = "mcp-servers.json"

func loadRequest(t *testing.T, name string) abi.Request {
	t.Helper()
	return sdktest.LoadRequest(t, filepath.Join("testdata", "requests", name+".json"))
}

func mustRender(t *testing.T, req abi.Request) abi.Plan {
	t.Helper()
	return sdktest.Render(t, manifest, render, req)
}

// decodeServers parses the --mcp-config file out of plan.
func decodeServers(t *testing.T, plan abi.Plan) (abi.File, map[string]map[string]any) {
	t.Helper()
	for _, f := range plan.Files {
		if f.Root == abi.RootRun && f.Path == configFile {
			var doc map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(f.Content), &doc), "parse %s:\n%s", configFile, f.Content)
			assert.Len(t, doc, 1, "%s holds mcpServers only:\n%s", configFile, f.Content)
			var servers map[string]map[string]any
			require.NoError(t, json.Unmarshal(doc["mcpServers"], &servers), "%s must hold an mcpServers object:\n%s", configFile, f.Content)
			require.NotNil(t, servers, "%s must hold an mcpServers object:\n%s", configFile, f.Content)
			for id, s := range servers {
				_, hasURL := s["httpUrl"]
				_, hasCommand := s["command"]
				assert.False(t, hasURL && hasCommand, "server %s must not carry both httpUrl and command", id)
				assert.NotContains(t, s, "url", "server %s: url would be SSE", id)
				assert.NotContains(t, s, "trust", "server %s: trust is never written", id)
			}
			return f, servers
		}
	}
	require.FailNow(t, "plan has no run/"+configFile)
	return abi.File{}, nil
}

func TestGolden(t *testing.T) {
	formattest.CheckGoldens(t, "testdata", []string{"rich", "ambient", "edge", "empty"}, manifest, render, harnessProfile, *update)
}

func TestManifest(t *testing.T) {
	assert.Equal(t, abi.Manifest{
		Name: "render.qwen", Version: "1.0.0", ABIVersion: abi.Version, Harness: "qwen",
		Transports: []string{"stdio", "http"}, NativeSkills: false, Roots: []string{"run", "checkout"},
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
			map[string]any{"command": "/usr/bin/env", "args": []any{"-i", "-S", "HOME=${LOADOUT_SPAWN_1} T=${LOADOUT_SPAWN_2}", "/bin/x", "a"},
				"env": map[string]any{"LOADOUT_SPAWN_1": "/h", "LOADOUT_SPAWN_2": "{{loadout.secret.1}}"}, "cwd": "/w", "description": "D", "timeout": 30000.0},
			true, nil, "- s: all tools"},
		{"http", abi.Server{ID: "h", Transport: "http", URL: "https://h/mcp?a=$b", Enabled: true, Timeout: 1.5, Headers: []abi.Pair{{Name: "X", Value: "y$z"}}},
			map[string]any{"httpUrl": "https://h/mcp?a=$b", "headers": map[string]any{"X": "y$z"}, "timeout": 1500.0}, false, nil, "- h: all tools"},
		{"dollars and tildes as written", abi.Server{ID: "x", Transport: "stdio", Command: "/bin/$x", Args: []string{"${HOME}", "~/a", "//", "/*"}, Description: "$HOME", Cwd: "~", Enabled: true,
			Env: []abi.Pair{{Name: "A", Value: `!$a \$ "'`}}},
			map[string]any{"command": "/usr/bin/env", "args": []any{"-i", "-S", "A=${LOADOUT_SPAWN_1}", "/bin/$x", "${HOME}", "~/a", "//", "/*"},
				"env": map[string]any{"LOADOUT_SPAWN_1": `!$a \$ "'`}, "cwd": "~", "description": "$HOME"}, false, nil, "- x: all tools"},
		{"restricted", abi.Server{ID: "r", Transport: "stdio", Command: "x", Enabled: true, ToolsRestricted: true, AllowedTools: []string{"a", "b$c", "d(e)"}},
			map[string]any{"command": "/usr/bin/env", "args": []any{"-i", "x"}, "includeTools": []any{"a", "b$c"}}, false, []string{abi.WarnToolNameUnsupported}, "- r: only a, b$c"},
		{"restricted to nothing", abi.Server{ID: "r", Transport: "stdio", Command: "x", Enabled: true, ToolsRestricted: true},
			map[string]any{"command": "/usr/bin/env", "args": []any{"-i", "x"}, "includeTools": []any{}}, false, nil, "- r: no tools"},
		{"hidden tools", abi.Server{ID: "r", Transport: "stdio", Command: "x", Enabled: true, DeniedTools: []string{"admin.delete", "a$b"}},
			map[string]any{"command": "/usr/bin/env", "args": []any{"-i", "x"}, "excludeTools": []any{"admin.delete", "a$b"}}, false, nil, "- r: all tools"},
		{"disabled", abi.Server{ID: "d", Transport: "stdio", Command: "x"}, nil, false, nil, ""},
		{"huge timeout", abi.Server{ID: "t", Transport: "stdio", Command: "x", Enabled: true, Timeout: 1e300},
			map[string]any{"command": "/usr/bin/env", "args": []any{"-i", "x"}, "timeout": renderer.Profile.Config.TimeoutMax}, false, []string{abi.WarnTimeoutAdjusted}, "- t: all tools"},
		{"command with =", abi.Server{ID: "x", Transport: "stdio", Command: "a=b", Enabled: true}, nil, false, []string{format.WarnCommandUnwrappable}, ""},
		{"bad env name", abi.Server{ID: "x", Transport: "stdio", Command: "x", Enabled: true, HostEnv: []abi.Pair{{Name: "1X", Value: "v"}}},
			map[string]any{"command": "/usr/bin/env", "args": []any{"-i", "x"}}, false, []string{format.WarnEnvNameUnsupported}, "- x: all tools"},
		{"reserved", abi.Server{ID: "constructor", Transport: "stdio", Command: "x", Enabled: true}, nil, false, []string{abi.WarnServerNameReserved}, ""},
		{"sse", abi.Server{ID: "x", Transport: "sse", URL: "https://x", Enabled: true}, nil, false, []string{abi.WarnTransportUnsupported}, ""},
		{"oauth has no key", abi.Server{ID: "o", Transport: "http", URL: "https://x", Enabled: true, OAuth: &abi.OAuth{ClientID: "loadout", Scopes: []string{"read"}}},
			map[string]any{"httpUrl": "https://x"}, false, []string{format.WarnOAuthUnsupported}, "- o: all tools"},
		{"lifecycle", abi.Server{ID: "l", Transport: "stdio", Command: "x", Enabled: true, Lifecycle: "eager"},
			map[string]any{"command": "/usr/bin/env", "args": []any{"-i", "x"}}, false, []string{format.WarnLifecycleUnsupported}, "- l: all tools"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan := mustRender(t, abi.Request{Servers: []abi.Server{tc.server}})
			formattest.CheckPlan(t, manifest, plan)
			f, servers := decodeServers(t, plan)
			assert.Equal(t, tc.wantSecret, f.Secret, "render(%s): %s Secret", tc.name, configFile)
			assert.Equal(t, "0600", f.Mode, "render(%s): %s mode", tc.name, configFile)
			ids := []string{}
			if tc.want == nil {
				assert.NotContains(t, servers, tc.server.ID, "render(%s) must not render the server", tc.name)
			} else {
				assert.Equal(t, tc.want, servers[tc.server.ID], "render(%s): server entry", tc.name)
				ids = append(ids, tc.server.ID)
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
			assert.Equal(t, []abi.Pair{{Name: "QWEN_HOME", Value: "{{loadout.root.config}}"}}, plan.Env, "render(%s): env", tc.name)
			wantArgs := append(append([]string{"--allowed-mcp-server-names"}, ids...), "--mcp-config", "{{loadout.root.run}}/mcp-servers.json", "--bare")
			assert.Equal(t, wantArgs, plan.Args, "render(%s): args: exactly the rendered servers allowed", tc.name)
		})
	}
}

// TestServersArg: --allowed-mcp-server-names names exactly the servers the config holds, in its
// order, and ends with another flag (its values run to the next one).
func TestServersArg(t *testing.T) {
	plan := mustRender(t, abi.Request{Servers: []abi.Server{
		{ID: "b", Transport: "stdio", Command: "x", Enabled: true},
		{ID: "off", Transport: "stdio", Command: "x"},
		{ID: "a", Transport: "http", URL: "https://a", Enabled: true},
		{ID: "s", Transport: "sse", URL: "https://s", Enabled: true},
	}})
	_, servers := decodeServers(t, plan)
	assert.Len(t, servers, 2, "servers rendered")
	assert.Equal(t, []string{"--allowed-mcp-server-names", "b", "a", "--mcp-config", "{{loadout.root.run}}/mcp-servers.json", "--bare"}, plan.Args, "args")
}

// TestSkillsAlwaysFolded: Qwen Code reads no skills under --bare, so every run, isolated or
// not, gets them in the prompt and their files under the checkout's context directory.
func TestSkillsAlwaysFolded(t *testing.T) {
	for _, ambient := range []bool{false, true} {
		plan := mustRender(t, abi.Request{Run: abi.Run{AmbientAuth: ambient}, Skills: []abi.Skill{{Name: "S_1", Description: "d", Instructions: "follow me",
			Resources: []abi.Resource{{Path: "a/b.md", Content: "r"}}}}})
		var paths []string
		for _, f := range plan.Files {
			paths = append(paths, f.Root+"/"+f.Path)
		}
		assert.Equal(t, []string{"run/mcp-servers.json", "checkout/" + format.ContextDir + "/skill/s-1/a/b.md"}, paths, "ambient=%t: files", ambient)
		assert.Equal(t, []string{format.ContextDir + "/"}, plan.GitExclude, "ambient=%t: the context directory is git-excluded", ambient)
		assert.Contains(t, plan.Prompt, "### Skill: s-1\n\nd\nIts files are in "+format.ContextDir+"/skill/s-1/.\n\nfollow me\n", "ambient=%t: the prompt carries the skill", ambient)
		if ambient {
			assert.Empty(t, plan.Env, "ambient: the user's own QWEN_HOME")
		}
	}
}

// FuzzRender checks the plan properties and the JSON round trip on requests built from fuzzed
// strings.
func FuzzRender(f *testing.F) {
	f.Add("id", "arg\n\"x\"", "K", "v\u2028<&>", "tool", "My_Skill", "desc\nmore", false)
	f.Add("a_b", "${HOME}", "HOME", "!x", "", "..", "", true)
	f.Fuzz(func(t *testing.T, id, arg, key, val, tool, skill, desc string, restricted bool) {
		// The host sends valid UTF-8 only (JSON on the wire): normalize as its encoder would.
		id, arg, key, val, tool, skill, desc = formattest.ValidRunes(id), formattest.ValidRunes(arg), formattest.ValidRunes(key), formattest.ValidRunes(val), formattest.ValidRunes(tool), formattest.ValidRunes(skill), formattest.ValidRunes(desc)
		req := abi.Request{ABIVersion: abi.Version,
			Servers: []abi.Server{
				{ID: id, Transport: abi.TransportStdio, Command: "cmd", Args: []string{arg}, Env: []abi.Pair{{Name: key, Value: val}}, Enabled: true,
					ToolsRestricted: restricted, AllowedTools: []string{tool}},
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
			assert.Equal(t, []string{"cmd", arg}, got.Args[len(got.Args)-2:], "command and args follow the wrapper, as written")
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
