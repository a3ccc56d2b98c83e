// Tests for the C renderer: build it with its build.sh (Debian clang, wasi-libc) and run it
// under wazero in a sandbox like the host's, with real requests.
package mcpjsonc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
	"github.com/loadout-dev/loadout/sdk/format/formattest"
	"github.com/loadout-dev/loadout/sdk/profile"
	"github.com/loadout-dev/loadout/sdk/profile/profileyaml"
	"github.com/loadout-dev/loadout/sdk/profile/readback"
	"github.com/loadout-dev/loadout/sdk/sdktest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/loadout-dev/loadout/internal/testenv"
)

// harnessProfile is the reviewed profile of the mcpjson harness, which the host checks the
// plugin's plans through.
func harnessProfile(t *testing.T) *profile.Profile {
	t.Helper()
	prof, err := readProfile()
	require.NoError(t, err, "read profile.yaml")
	return prof
}

var readProfile = sync.OnceValues(func() (*profile.Profile, error) {
	data, err := os.ReadFile("profile.yaml")
	if err != nil {
		return nil, err
	}
	return profileyaml.Parse(data)
})

// plugin is one instance of the built module: WASI preview 1 with no env, args or preopens,
// fake clocks, a page cap, and _initialize as the only start function.
type plugin struct {
	ctx context.Context
	mod api.Module
}

var (
	buildOnce sync.Once
	built     []byte
	buildErr  error
)

// build runs ./build.sh once per test binary and returns the module. It fails (never skips)
// when the C toolchain is missing.
func build(t *testing.T) []byte {
	t.Helper()
	testenv.WASIToolchain(t)
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcpjson-c")
		if err != nil {
			buildErr = err
			return
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "mcpjson-c.wasm")
		if b, err := exec.Command("./build.sh", out).CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("./build.sh %s (needs clang, lld and wasi-libc): %w\n%s", out, err, b)
			return
		}
		built, buildErr = os.ReadFile(out)
	})
	require.NoError(t, buildErr, "build the C plugin")
	return built
}

func instantiate(t *testing.T, wasm []byte) *plugin {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithMemoryLimitPages(1024).WithCloseOnContextDone(true))
	t.Cleanup(func() { rt.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	compiled, err := rt.CompileModule(ctx, wasm)
	require.NoError(t, err, "compile the module")
	for _, imp := range compiled.ImportedFunctions() {
		mod, name, _ := imp.Import()
		assert.Equal(t, "wasi_snapshot_preview1", mod, "import %s.%s: only WASI preview 1 may be imported", mod, name)
	}
	exports := compiled.ExportedFunctions()
	for _, name := range []string{abi.ExportInitialize, abi.ExportABIVersion, abi.ExportAlloc, abi.ExportManifest, abi.ExportRender} {
		assert.Contains(t, exports, name, "the module must export %s", name)
	}
	mod, err := rt.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithStartFunctions(abi.ExportInitialize).WithName(""))
	require.NoError(t, err, "instantiate the module")
	return &plugin{ctx: ctx, mod: mod}
}

func (p *plugin) call(t *testing.T, export string, params ...uint64) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 2*time.Second) // the host's deadline
	defer cancel()
	res, err := p.mod.ExportedFunction(export).Call(ctx, params...)
	require.NoError(t, err, "call %s%v", export, params)
	require.Len(t, res, 1, "%s results", export)
	return res[0]
}

func (p *plugin) output(t *testing.T, packed uint64) []byte {
	t.Helper()
	b, ok := p.mod.Memory().Read(uint32(packed>>32), uint32(packed))
	require.True(t, ok, "result (ptr %d, len %d) is outside guest memory", packed>>32, uint32(packed))
	return append([]byte(nil), b...)
}

func (p *plugin) render(t *testing.T, input []byte) []byte {
	t.Helper()
	ptr := p.call(t, abi.ExportAlloc, uint64(len(input)))
	require.NotZero(t, ptr, "loadout_alloc(%d) returned 0", len(input))
	require.True(t, p.mod.Memory().Write(uint32(ptr), input), "write the request at %d", ptr)
	return p.output(t, p.call(t, abi.ExportRender, ptr, uint64(len(input))))
}

func (p *plugin) renderRequest(t *testing.T, req abi.Request) (abi.Plan, *abi.Error) {
	t.Helper()
	in, err := json.Marshal(req)
	require.NoError(t, err, "encode the request")
	out := p.render(t, in)
	again := p.render(t, in)
	require.Equal(t, string(out), string(again), "two renders of the same request differ")
	return sdktest.Decode(t, out)
}

func fullRequest() abi.Request {
	return abi.Request{
		ABIVersion: abi.Version,
		Harness:    "mcpjson",
		Servers: []abi.Server{
			{
				ID: "files", Transport: abi.TransportStdio, Enabled: true, Command: "/usr/bin/mcp-files",
				Args:    []string{"--root", "{{loadout.root.checkout}}", "quote\" back\\ nl\n", "é😀\u2028\x01\x7f"},
				HostEnv: []abi.Pair{{Name: "PATH", Value: "/usr/bin"}, {Name: "MODE", Value: "host"}},
				Env:     []abi.Pair{{Name: "MODE", Value: "ro"}, {Name: "TOKEN", Value: "{{loadout.secret.1}}", Secret: true}},
				Cwd:     "/srv", Timeout: 2.5, ToolsRestricted: true, AllowedTools: []string{"read", "list"},
			},
			{
				ID: "docs", Transport: abi.TransportHTTP, Enabled: true, URL: "https://mcp.example.com/mcp",
				Headers:         []abi.Pair{{Name: "Authorization", Value: "Bearer {{loadout.secret.2}}", Secret: true}},
				ToolsRestricted: true, Exposure: "deferred",
				OAuth: &abi.OAuth{ClientID: "loadout", CallbackPort: 8765, Scopes: []string{"read"}}, Lifecycle: "lazy",
			},
			{ID: "legacy", Transport: "sse", Enabled: true, URL: "https://mcp.example.com/sse"},
			{ID: "off", Transport: abi.TransportStdio, Command: "/bin/off"},
			{ID: "files", Transport: abi.TransportStdio, Enabled: true, Command: "/bin/other"},
		},
		Skills: []abi.Skill{{Name: "review", Description: "Reviews", Instructions: "{{loadout.blob.1}}"}},
	}
}

const wantContent = `{
  "mcpServers": {
    "files": {
      "type": "stdio",
      "command": "/usr/bin/mcp-files",
      "args": ["--root", "{{loadout.root.checkout}}", "quote\" back\\ nl\n", "é😀\u2028\u0001\u007f"],
      "env": {
        "PATH": "/usr/bin",
        "MODE": "ro",
        "TOKEN": "{{loadout.secret.1}}"
      },
      "allowedTools": ["read", "list"],
      "timeout": 2500
    },
    "docs": {
      "type": "http",
      "url": "https://mcp.example.com/mcp",
      "headers": {
        "Authorization": "Bearer {{loadout.secret.2}}"
      },
      "allowedTools": []
    }
  }
}
`

func TestMCPJSONPlugin(t *testing.T) {
	p := instantiate(t, build(t))

	var m abi.Manifest
	mb := p.output(t, p.call(t, abi.ExportManifest))
	require.NoError(t, json.Unmarshal(mb, &m), "decode manifest %s", mb)
	assert.Equal(t, abi.Manifest{
		Name: "render.mcpjson", Version: "1.0.0", ABIVersion: abi.Version, Harness: "mcpjson",
		Transports: []string{abi.TransportStdio, abi.TransportHTTP}, NativeSkills: true, Roots: []string{abi.RootConfig, abi.RootRun},
	}, m, "loadout_manifest()")
	assert.Equal(t, uint64(abi.Version), p.call(t, abi.ExportABIVersion), "loadout_abi_version()")

	plan, rerr := p.renderRequest(t, fullRequest())
	require.Nil(t, rerr, "render(full request) returned an error")
	require.Len(t, plan.Files, 2, "render(full request) files: mcp.json and the skill's SKILL.md")
	f := plan.Files[0]
	assert.Equal(t, abi.File{Root: abi.RootRun, Path: "mcp.json", Mode: "0600", Format: abi.FormatJSON, Content: f.Content, Secret: true}, f, "the mcp.json file's attributes")
	assert.Equal(t, wantContent, f.Content, "mcp.json content")

	servers := formattest.ReadServers(t, harnessProfile(t), plan)
	files := formattest.ServerByID(servers, "files")
	require.NotNil(t, files, "mcp.json holds server files:\n%s", f.Content)
	assert.Equal(t, fullRequest().Servers[0].Args, files.Args, "args survive escaping byte for byte")
	assert.Equal(t, []abi.Pair{{Name: "PATH", Value: "/usr/bin"}, {Name: "MODE", Value: "ro"}, {Name: "TOKEN", Value: "{{loadout.secret.1}}"}}, files.Env, "env: hostEnv, then env winning")

	assert.Equal(t, "## MCP servers\n\nThese MCP servers are configured for this run, each with the tools you may use:\n- files: only read, list\n- docs: no tools\n", plan.Prompt, "prompt states the permitted tools")
	assert.Equal(t, format.ServersPrompt([]abi.Server{fullRequest().Servers[0], fullRequest().Servers[1]}, nil), plan.Prompt, "the prompt is the one the host writes")
	assert.Equal(t, []string{}, plan.Args, "args")
	assert.Equal(t, []abi.Pair{}, plan.Env, "env")
	assert.Equal(t, []string{}, plan.GitExclude, "gitExclude")
	codes := make([]string, 0, len(plan.Warnings))
	for _, w := range plan.Warnings {
		codes = append(codes, w.Code+"/"+w.Server+w.Skill)
	}
	assert.Equal(t, []string{
		"cwd_unsupported/files",
		"oauth_unsupported/docs", "lifecycle_unsupported/docs", "exposure_unsupported/docs",
		"transport_unsupported/legacy", "server_disabled/off", "duplicate_server/files",
	}, codes, "warnings, in request order")
}

func TestMCPJSONPluginSecretFlag(t *testing.T) {
	p := instantiate(t, build(t))
	cases := []struct {
		name    string
		servers []abi.Server
		secret  bool
		content string
	}{
		{"no servers", nil, false, "{\n  \"mcpServers\": {}\n}\n"},
		{"plain env", []abi.Server{{ID: "a", Transport: "stdio", Enabled: true, Command: "a", Env: []abi.Pair{{Name: "X", Value: "1"}}}}, false, ""},
		{"secret env", []abi.Server{{ID: "a", Transport: "stdio", Enabled: true, Command: "a", Env: []abi.Pair{{Name: "X", Value: "{{loadout.secret.1}}", Secret: true}}}}, true, ""},
		{"secret header", []abi.Server{{ID: "a", Transport: "http", Enabled: true, URL: "https://x", Headers: []abi.Pair{{Name: "K", Value: "{{loadout.secret.1}}", Secret: true}}}}, true, ""},
		{"secret pair of a dropped server", []abi.Server{{ID: "a", Transport: "sse", Enabled: true, Headers: []abi.Pair{{Name: "K", Value: "{{loadout.secret.1}}", Secret: true}}}}, false, ""},
	}
	for _, tc := range cases {
		plan, rerr := p.renderRequest(t, abi.Request{ABIVersion: abi.Version, Harness: "mcpjson", Servers: tc.servers})
		require.Nil(t, rerr, "%s: render returned an error", tc.name)
		require.Len(t, plan.Files, 1, "%s: files", tc.name)
		assert.Equal(t, tc.secret, plan.Files[0].Secret, "%s: secret flag", tc.name)
		assert.Equal(t, "0600", plan.Files[0].Mode, "%s: mode", tc.name)
		if tc.content != "" {
			assert.Equal(t, tc.content, plan.Files[0].Content, "%s: content", tc.name)
		}
		formattest.ReadServers(t, harnessProfile(t), plan) // the layout the host reads back
	}
}

// rejectCases are inputs the renderer must refuse, with the ABI error code each gets.
var rejectCases = []struct {
	name  string
	input string
	code  string
}{
	{"empty input", ``, abi.CodeInvalidInput},
	{"not an object", `[1]`, abi.CodeInvalidInput},
	{"duplicate key", `{"abiVersion":1,"harness":"mcpjson","harness":"mcpjson"}`, abi.CodeInvalidInput},
	{"duplicate nested key", `{"abiVersion":1,"harness":"mcpjson","servers":[{"id":"a","id":"b"}]}`, abi.CodeInvalidInput},
	{"unknown field", `{"abiVersion":1,"harness":"mcpjson","shell":"sh"}`, abi.CodeInvalidInput},
	{"unknown server field", `{"abiVersion":1,"harness":"mcpjson","servers":[{"id":"a","shell":"sh"}]}`, abi.CodeInvalidInput},
	{"unknown oauth field", `{"abiVersion":1,"harness":"mcpjson","servers":[{"id":"a","oauth":{"clientSecret":"s"}}]}`, abi.CodeInvalidInput},
	{"oauth not an object", `{"abiVersion":1,"harness":"mcpjson","servers":[{"id":"a","oauth":"x"}]}`, abi.CodeInvalidInput},
	{"trailing data", `{"abiVersion":1,"harness":"mcpjson"} {}`, abi.CodeInvalidInput},
	{"invalid UTF-8", "{\"abiVersion\":1,\"harness\":\"mcpjson\",\"run\":{\"user\":\"\xc3\x28\"}}", abi.CodeInvalidInput},
	{"overlong UTF-8", "{\"abiVersion\":1,\"harness\":\"mcpjson\",\"run\":{\"user\":\"\xc0\xaf\"}}", abi.CodeInvalidInput},
	{"lone surrogate", `{"abiVersion":1,"harness":"mcpjson","run":{"user":"\udc00"}}`, abi.CodeInvalidInput},
	{"raw newline in a string", "{\"abiVersion\":1,\"harness\":\"mcp\njson\"}", abi.CodeInvalidInput},
	{"wrong type", `{"abiVersion":1,"harness":"mcpjson","servers":[{"args":"a"}]}`, abi.CodeInvalidInput},
	{"other ABI version", `{"abiVersion":2,"harness":"mcpjson"}`, abi.CodeInvalidInput},
	{"missing ABI version", `{"harness":"mcpjson"}`, abi.CodeInvalidInput},
	{"other harness", `{"abiVersion":1,"harness":"claude"}`, abi.CodeUnsupported},
	{"deep nesting", `{"abiVersion":1,"harness":"mcpjson","x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, abi.CodeInvalidInput},
}

func TestMCPJSONPluginRejects(t *testing.T) {
	p := instantiate(t, build(t))
	for _, tc := range rejectCases {
		plan, rerr := sdktest.Decode(t, p.render(t, []byte(tc.input)))
		if assert.NotNil(t, rerr, "render(%q) = plan %+v, want error %s", tc.input, plan, tc.code) {
			assert.Equal(t, tc.code, rerr.Code, "render(%q) code (message %q)", tc.input, rerr.Message)
		}
	}

	// A pointer the module never handed out is refused, not read.
	_, rerr := sdktest.Decode(t, p.output(t, p.call(t, abi.ExportRender, 16, 32)))
	if assert.NotNil(t, rerr, "render at an unallocated pointer returned a plan") {
		assert.Equal(t, abi.CodeInvalidInput, rerr.Code, "render at an unallocated pointer: code (message %q)", rerr.Message)
	}

	// The instance still renders after every refusal.
	plan, rerr := p.renderRequest(t, fullRequest())
	require.Nil(t, rerr, "render after refusals returned an error")
	assert.Equal(t, wantContent, plan.Files[0].Content, "render after refusals")
}

// FuzzMCPJSONPlugin feeds arbitrary bytes to the C module's own JSON reader: every input must
// come back as a strictly valid plan or error response, never a trap, and an input the Go sdk's
// strict decoder refuses must not become a plan.
func FuzzMCPJSONPlugin(f *testing.F) {
	full, err := json.Marshal(fullRequest())
	require.NoError(f, err, "encode the seed request")
	for _, s := range []string{string(full), `{"abiVersion":1,"harness":"mcpjson"}`, `{"abiVersion":1,"harness":"mcpjson","servers":[{"env":[{"value":"x"}]}]}`, `[`, `"\ud800"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		p := fuzzPlugin(t)
		out := p.render(t, in)
		plan, rerr := sdktest.Decode(t, out)
		if rerr != nil {
			assert.Contains(t, []string{abi.CodeInvalidInput, abi.CodeUnsupported}, rerr.Code, "render(%q) error code (message %q)", in, rerr.Message)
			return
		}
		var req abi.Request
		require.NoError(t, json.Unmarshal(in, &req), "render(%q) returned a plan for input encoding/json refuses", in)
		require.NotEmpty(t, plan.Files, "render(%q) files", in)
		_, err := readback.Read(harnessProfile(t), plan.Files[0].Content)
		assert.NoError(t, err, "render(%q) wrote a config that does not read back through the profile: %s", in, plan.Files[0].Content)
		prepared, _, err := format.PrepareSkills(req.Skills)
		require.NoError(t, err, "render(%q) returned a plan for skills the Go SDK refuses", in)
		want, err := format.SkillFiles(abi.RootConfig, "skills", prepared)
		require.NoError(t, err, "format.SkillFiles")
		assert.Equal(t, append([]abi.File{}, want...), plan.Files[1:], "render(%q): the skill files are the Go SDK's", in)
	})
}

var (
	fuzzOnce sync.Once
	fuzzInst *plugin
)

// fuzzPlugin shares one instance across fuzz inputs (the module keeps no state between calls,
// which TestMCPJSONPluginRejects checks).
func fuzzPlugin(t *testing.T) *plugin {
	fuzzOnce.Do(func() {
		ctx := context.Background()
		rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithMemoryLimitPages(1024).WithCloseOnContextDone(true))
		wasi_snapshot_preview1.MustInstantiate(ctx, rt)
		mod, err := rt.Instantiate(ctx, build(t))
		require.NoError(t, err, "instantiate the module")
		fuzzInst = &plugin{ctx: ctx, mod: mod}
	})
	return fuzzInst
}
