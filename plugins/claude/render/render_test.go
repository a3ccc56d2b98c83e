package render

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
	return sdktest.LoadRequest(t, filepath.Join("..", "testdata", "requests", name+".json"))
}

func mustRender(t *testing.T, req abi.Request) abi.Plan {
	t.Helper()
	return sdktest.Render(t, Manifest, Render, req)
}

func TestGolden(t *testing.T) {
	formattest.CheckGoldens(t, filepath.Join("..", "testdata"), []string{"rich", "ambient", "edge", "empty"}, Manifest, Render, harnessProfile, *update)
}

func TestManifest(t *testing.T) {
	assert.Equal(t, abi.Manifest{
		Name: "render.claude", Version: "1.0.0", ABIVersion: abi.Version, Harness: "claude",
		Transports: []string{"stdio", "http"}, NativeSkills: true, Roots: []string{"config", "run", "checkout"},
	}, Manifest, "Manifest")
}

func stdio(id string, restricted bool, tools ...string) abi.Server {
	return abi.Server{ID: id, Transport: abi.TransportStdio, Command: "npx", Enabled: true, ToolsRestricted: restricted, AllowedTools: tools}
}

// allowedTools returns the entries after --allowedTools up to the next flag, or nil when the
// flag is absent, and checks that the list is closed by --strict-mcp-config.
func allowedTools(t *testing.T, args []string) []string {
	t.Helper()
	require.Equal(t, "--strict-mcp-config", args[len(args)-1], "args %q must end with the boolean --strict-mcp-config so a following prompt is not read as a tool", args)
	for i, a := range args {
		if a != "--allowedTools" {
			continue
		}
		out := []string{}
		for _, e := range args[i+1:] {
			if strings.HasPrefix(e, "-") {
				return out
			}
			out = append(out, e)
		}
		return out
	}
	return nil
}

// TestAllowedTools: --allowedTools pre-approves exactly the run's built-in tools, and the
// servers' rules only when one is restricted; restricting a server never adds a built-in tool.
func TestAllowedTools(t *testing.T) {
	tests := []struct {
		name    string
		servers []abi.Server
		builtin []string
		want    []string // the whole list; nil: no --allowedTools at all
	}{
		{"unrestricted only", []abi.Server{stdio("a", false), stdio("b", false)}, nil, nil},
		{"mixed", []abi.Server{stdio("a", true, "read", "write"), stdio("b", false)}, nil, []string{"mcp__a__read", "mcp__a__write", "mcp__b"}},
		{"empty list restricts", []abi.Server{stdio("a", true), stdio("b", true, "x")}, nil, []string{"mcp__b__x"}},
		{"all restricted to nothing", []abi.Server{stdio("a", true)}, nil, []string{}},
		{"disabled server gives no rule", []abi.Server{func() abi.Server { s := stdio("a", false); s.Enabled = false; return s }(), stdio("b", true, "x")}, nil, []string{"mcp__b__x"}},
		{"unsupported transport gives no rule", []abi.Server{{ID: "a", Transport: "sse", Enabled: true}, stdio("b", true, "x")}, nil, []string{"mcp__b__x"}},
		{"built-ins of the run, unrestricted", []abi.Server{stdio("a", false)}, []string{"Read", "Edit"}, []string{"Read", "Edit"}},
		{"built-ins of the run, restricted", []abi.Server{stdio("a", true, "x"), stdio("b", false)}, []string{"Read"}, []string{"Read", "mcp__a__x", "mcp__b"}},
		{"built-ins without servers", nil, []string{"Bash"}, []string{"Bash"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan := mustRender(t, abi.Request{ABIVersion: abi.Version, Run: abi.Run{BuiltinTools: tc.builtin}, Servers: tc.servers})
			assert.Equal(t, []string{"--mcp-config", "{{loadout.root.run}}/mcp-servers.json"}, plan.Args[:2], "args must start with --mcp-config")
			got := allowedTools(t, plan.Args)
			if tc.want == nil {
				assert.Nil(t, got, "Render(%s): args %q must not carry --allowedTools", tc.name, plan.Args)
				return
			}
			assert.Equal(t, tc.want, got, "Render(%s): --allowedTools", tc.name)
		})
	}
}

// decodeServers parses mcp-servers.json out of plan.
func decodeServers(t *testing.T, plan abi.Plan) (abi.File, map[string]map[string]any) {
	t.Helper()
	for _, f := range plan.Files {
		if f.Root == abi.RootRun && f.Path == "mcp-servers.json" {
			var doc struct {
				MCPServers map[string]map[string]any `json:"mcpServers"`
			}
			require.NoError(t, json.Unmarshal([]byte(f.Content), &doc), "parse mcp-servers.json:\n%s", f.Content)
			require.NotNil(t, doc.MCPServers, "mcp-servers.json must hold an mcpServers object:\n%s", f.Content)
			return f, doc.MCPServers
		}
	}
	require.FailNow(t, "plan has no run/mcp-servers.json")
	return abi.File{}, nil
}

func TestServerEntries(t *testing.T) {
	secretHeader := abi.Server{ID: "h", Transport: abi.TransportHTTP, URL: "https://h.example/mcp", Enabled: true,
		Headers: []abi.Pair{{Name: "Authorization", Value: "Bearer {{loadout.secret.1}}", Secret: true}}}
	tests := []struct {
		name       string
		server     abi.Server
		want       map[string]any // nil: not rendered
		wantSecret bool
		wantWarn   string
	}{
		{"stdio wrapped", abi.Server{ID: "s", Transport: "stdio", Command: "/bin/x", Args: []string{"a", "${HOME}"}, Enabled: true,
			HostEnv: []abi.Pair{{Name: "HOME", Value: "/h"}, {Name: "PATH", Value: "/bin"}}, Env: []abi.Pair{{Name: "HOME", Value: "/own"}, {Name: "X", Value: "a${B}c"}}},
			map[string]any{"type": "stdio", "command": "/usr/bin/env", "args": []any{"-i", "-S",
				"HOME=${LOADOUT_SPAWN_DOLLAR:-$}{LOADOUT_SPAWN_1} PATH=${LOADOUT_SPAWN_DOLLAR:-$}{LOADOUT_SPAWN_2} X=${LOADOUT_SPAWN_DOLLAR:-$}{LOADOUT_SPAWN_3}${LOADOUT_SPAWN_DOLLAR:-$}{LOADOUT_SPAWN_4}",
				"/bin/x", "a", "${LOADOUT_SPAWN_DOLLAR:-$}{HOME}"},
				"env": map[string]any{"LOADOUT_SPAWN_1": "/own", "LOADOUT_SPAWN_2": "/bin", "LOADOUT_SPAWN_3": "a$", "LOADOUT_SPAWN_4": "{B}c"}}, false, ""},
		{"no env", abi.Server{ID: "s", Transport: "stdio", Command: "x", Enabled: true},
			map[string]any{"type": "stdio", "command": "/usr/bin/env", "args": []any{"-i", "x"}}, false, ""},
		{"http secret header", secretHeader,
			map[string]any{"type": "http", "url": "https://h.example/mcp", "headers": map[string]any{"Authorization": "Bearer {{loadout.secret.1}}"}}, true, ""},
		{"secret env", abi.Server{ID: "s", Transport: "stdio", Command: "x", Enabled: true, Env: []abi.Pair{{Name: "T", Value: "{{loadout.secret.1}}", Secret: true}}},
			map[string]any{"type": "stdio", "command": "/usr/bin/env", "args": []any{"-i", "-S", "T=${LOADOUT_SPAWN_DOLLAR:-$}{LOADOUT_SPAWN_1}", "x"},
				"env": map[string]any{"LOADOUT_SPAWN_1": "{{loadout.secret.1}}"}}, true, ""},
		{"timeout ms", abi.Server{ID: "s", Transport: "http", URL: "https://x", Enabled: true, Timeout: 1.5},
			map[string]any{"type": "http", "url": "https://x", "timeout": 1500.0}, false, ""},
		{"timeout below minimum", abi.Server{ID: "s", Transport: "http", URL: "https://x", Enabled: true, Timeout: 0.1},
			map[string]any{"type": "http", "url": "https://x", "timeout": 1000.0}, false, abi.WarnTimeoutAdjusted},
		{"cwd through env -C", abi.Server{ID: "s", Transport: "stdio", Command: "x", Enabled: true, Cwd: "/w"},
			map[string]any{"type": "stdio", "command": "/usr/bin/env", "args": []any{"-i", "-C", "/w", "x"}}, false, ""},
		{"bad env name left out", abi.Server{ID: "s", Transport: "stdio", Command: "x", Enabled: true, HostEnv: []abi.Pair{{Name: "A-B", Value: "1"}}},
			map[string]any{"type": "stdio", "command": "/usr/bin/env", "args": []any{"-i", "x"}}, false, format.WarnEnvNameUnsupported},
		{"command with =", abi.Server{ID: "s", Transport: "stdio", Command: "a=b", Enabled: true}, nil, false, format.WarnCommandUnwrappable},
		{"disabled", abi.Server{ID: "s", Transport: "stdio", Command: "x"}, nil, false, abi.WarnServerDisabled},
		{"sse", abi.Server{ID: "s", Transport: "sse", URL: "https://x", Enabled: true}, nil, false, abi.WarnTransportUnsupported},
		{"reserved", abi.Server{ID: "constructor", Transport: "stdio", Command: "x", Enabled: true}, nil, false, abi.WarnServerNameReserved},
		{"oauth", abi.Server{ID: "o", Transport: "http", URL: "https://x", Enabled: true, OAuth: &abi.OAuth{ClientID: "loadout", CallbackPort: 8765, Scopes: []string{"read", "write"}, AuthServerMetadataURL: "https://auth.example.com/meta"}},
			map[string]any{"type": "http", "url": "https://x", "oauth": map[string]any{"clientId": "loadout", "callbackPort": 8765.0, "scopes": "read write",
				"authServerMetadataUrl": "https://auth.example.com/meta"}}, false, ""},
		{"oauth metadata over plain http", abi.Server{ID: "o", Transport: "http", URL: "https://x", Enabled: true, OAuth: &abi.OAuth{ClientID: "loadout",
			AuthServerMetadataURL: "http://127.0.0.1:9000/meta"}},
			map[string]any{"type": "http", "url": "https://x", "oauth": map[string]any{"clientId": "loadout"}}, false, format.WarnOAuthUnsupported},
		{"lifecycle", abi.Server{ID: "l", Transport: "stdio", Command: "x", Enabled: true, Lifecycle: "lazy"},
			map[string]any{"type": "stdio", "command": "/usr/bin/env", "args": []any{"-i", "x"}}, false, format.WarnLifecycleUnsupported},
		{"expansion in url and headers escaped", abi.Server{ID: "s", Transport: "http", URL: "https://x/${HOME}", Enabled: true, Headers: []abi.Pair{{Name: "K", Value: "${K:-d}"}}},
			map[string]any{"type": "http", "url": "https://x/${LOADOUT_SPAWN_DOLLAR:-$}{HOME}", "headers": map[string]any{"K": "${LOADOUT_SPAWN_DOLLAR:-$}{LOADOUT_SPAWN_DOLLAR:-$}{K:-d}"}}, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan := mustRender(t, abi.Request{ABIVersion: abi.Version, Servers: []abi.Server{tc.server}})
			formattest.CheckPlan(t, Manifest, plan)
			f, servers := decodeServers(t, plan)
			assert.Equal(t, tc.wantSecret, f.Secret, "Render(%s): mcp-servers.json Secret", tc.name)
			assert.Equal(t, "0600", f.Mode, "Render(%s): mcp-servers.json mode", tc.name)
			if tc.want == nil {
				assert.NotContains(t, servers, tc.server.ID, "Render(%s) must not render the server", tc.name)
				assert.NotContains(t, plan.Prompt, tc.server.ID, "Render(%s): the prompt must not offer the server", tc.name)
			} else {
				assert.Equal(t, tc.want, servers[tc.server.ID], "Render(%s): server entry", tc.name)
				assert.Contains(t, plan.Prompt, "- "+tc.server.ID+": all tools", "Render(%s): the prompt states the tools", tc.name)
			}
			var codes []string
			for _, w := range plan.Warnings {
				codes = append(codes, w.Code)
				assert.Equal(t, tc.server.ID, w.Server, "Render(%s): warning %s names the server", tc.name, w.Code)
			}
			if tc.wantWarn == "" {
				assert.Empty(t, codes, "Render(%s): warnings", tc.name)
			} else {
				assert.Equal(t, []string{tc.wantWarn}, codes, "Render(%s): warnings", tc.name)
			}
		})
	}
}

func TestSkillsPlacement(t *testing.T) {
	skills := []abi.Skill{{Name: "My_Skill", Instructions: "do", Resources: []abi.Resource{{Path: "r/a.md", Content: "A"}}}}
	t.Run("isolated", func(t *testing.T) {
		plan := mustRender(t, abi.Request{Skills: skills})
		formattest.CheckPlan(t, Manifest, plan)
		var paths []string
		for _, f := range plan.Files {
			paths = append(paths, f.Root+"/"+f.Path)
		}
		assert.Equal(t, []string{"run/mcp-servers.json", "config/skills/my-skill/SKILL.md", "config/skills/my-skill/r/a.md"}, paths, "files of an isolated run")
		fm := formattest.FrontMatter(t, plan.Files[1].Content)
		assert.Equal(t, "my-skill", fm["name"], "front matter name equals the directory")
		assert.NotEmpty(t, fm["description"], "a generated description")
		assert.Equal(t, []abi.Pair{{Name: "CLAUDE_CONFIG_DIR", Value: "{{loadout.root.config}}"}}, plan.Env, "env of an isolated run")
		assert.Empty(t, plan.GitExclude, "nothing in the checkout")
	})
	t.Run("ambient", func(t *testing.T) {
		plan := mustRender(t, abi.Request{Run: abi.Run{AmbientAuth: true}, Skills: skills})
		formattest.CheckPlan(t, Manifest, plan)
		require.Len(t, plan.Files, 2, "mcp config and one resource")
		assert.Equal(t, abi.File{Root: abi.RootCheckout, Path: ".cat-context/skill/my-skill/r/a.md", Mode: "0644", Format: abi.FormatText, Content: "A"}, plan.Files[1], "resource in the checkout")
		assert.Equal(t, []string{".cat-context/"}, plan.GitExclude, "gitExclude of an ambient run")
		assert.Contains(t, plan.Prompt, "\ndo\n", "instructions folded into the prompt")
		assert.Empty(t, plan.Env, "an ambient run keeps the user's config home")
	})
}

// FuzzRender checks the plan properties and the JSON round trip on requests built from fuzzed
// strings.
func FuzzRender(f *testing.F) {
	f.Add("id", "arg\n\"x\"", "K", "v\u2028<&>", "tool", "My_Skill", "desc\nmore", "https://x.example/", false)
	f.Add("a_b", "${HOME}", "HOME", "{{loadout.secret.1}}", "", "..", "", "http://127.0.0.1/", true)
	f.Fuzz(func(t *testing.T, id, arg, key, val, tool, skill, desc, url string, ambient bool) {
		// The host sends valid UTF-8 only (JSON on the wire): normalize as its encoder would.
		id, arg, key, val, tool, skill, desc, url = formattest.ValidRunes(id), formattest.ValidRunes(arg), formattest.ValidRunes(key), formattest.ValidRunes(val), formattest.ValidRunes(tool), formattest.ValidRunes(skill), formattest.ValidRunes(desc), formattest.ValidRunes(url)
		req := abi.Request{ABIVersion: abi.Version, Run: abi.Run{AmbientAuth: ambient},
			Servers: []abi.Server{
				{ID: id, Transport: abi.TransportStdio, Command: "cmd", Args: []string{arg}, Env: []abi.Pair{{Name: key, Value: val, Secret: strings.Contains(val, "{{loadout.secret.")}}, Enabled: true, ToolsRestricted: tool != "", AllowedTools: []string{tool}},
				{ID: id + "-h", Transport: abi.TransportHTTP, URL: url, Headers: []abi.Pair{{Name: key, Value: val, Secret: true}}, Enabled: true},
			},
			Skills: []abi.Skill{{Name: skill, Description: desc, Instructions: arg, Resources: []abi.Resource{{Path: "f.md", Content: val}}}},
		}
		if formattest.AnyHoldsSecret(arg, val, skill, desc) {
			e := sdktest.RenderError(t, Manifest, Render, req)
			assert.Equal(t, abi.CodeInvalidInput, e.Code, "error code")
			return
		}
		plan := mustRender(t, req)
		formattest.CheckPlan(t, Manifest, plan)
		assert.Equal(t, string(formattest.Archive(plan)), string(formattest.Archive(mustRender(t, req))), "render must be deterministic")
		servers := formattest.CheckServers(t, harnessProfile, req, plan)
		if got := formattest.ServerByID(servers, id); got != nil {
			require.GreaterOrEqual(t, len(got.Args), 2, "wrapped args %q", got.Args)
			assert.Equal(t, "/usr/bin/env", formattest.Deref(got.Command), "wrapper command")
			assert.Equal(t, []string{"cmd", harnessProfile.Spell(profile.PosArgs, strings.ToValidUTF8(arg, "\uFFFD"))}, got.Args[len(got.Args)-2:], "command and args follow the wrapper")
		} else {
			assert.NotEmpty(t, plan.Warnings, "a server that is not rendered must be reported")
		}
	})
}

// TestToolRulesSpellClaudesNames: an allow or deny rule names a tool as Claude Code does, a "."
// replaced by "_" (docs/FORMATS.md §4.1): mcp__a__admin.delete would match nothing, so the
// hidden tool would stay callable. Two tools Claude names alike give one rule.
func TestToolRulesSpellClaudesNames(t *testing.T) {
	s := stdio("a", true, "read.all", "read_all")
	s.DeniedTools = []string{"admin.delete", "admin_delete"}
	plan := mustRender(t, abi.Request{ABIVersion: abi.Version, Servers: []abi.Server{s}})
	assert.Equal(t, []string{"mcp__a__read_all"}, allowedTools(t, plan.Args), "--allowedTools")
	i := slices.Index(plan.Args, "--disallowedTools")
	require.GreaterOrEqual(t, i, 0, "args %q carry --disallowedTools", plan.Args)
	assert.Equal(t, []string{"mcp__a__admin_delete", "--strict-mcp-config"}, plan.Args[i+1:], "--disallowedTools")
}

// TestProfileGenerated: profile_gen.go is ../profile.yaml as the host reads it.
func TestProfileGenerated(t *testing.T) {
	formattest.CheckProfileGenerated(t, "../profile.yaml", harnessProfile)
}
