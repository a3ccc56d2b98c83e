package harness_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
	"github.com/loadout-dev/loadout/sdk/harness"
	"github.com/loadout-dev/loadout/sdk/profile"
	"github.com/loadout-dev/loadout/sdk/profile/profileyaml"
)

// newCLI is the profile of a CLI loadout has no code for: a settings file that must carry
// "$version": 4, $NAME and ${NAME} expanded with no escape and no default, a flag that must name
// exactly the servers the config holds.
const newCLI = `harness: newcli
measured: Example CLI 1.0
hiddenDirs: [.newcli]
paths:
  - {root: config, path: .newcli/settings.json}
  - {root: config, path: ".newcli/skills/**"}
config:
  root: config
  path: .newcli/settings.json
  format: json
  servers: mcpServers
  pinned:
    $version: 4
  serverKeys: {command: command, args: args, env: env, httpUrl: url, headers: headers, description: description, timeout: timeout, includeTools: allowTools, excludeTools: denyTools}
  timeoutUnit: ms
  timeoutMax: 600000
valueSyntax:
  - {expands: [$NAME, "${NAME}"], dollar: "${LOADOUT_SPAWN_DOLLAR}"}
passes: {args: 1, env: 1, url: 1, headers: 1}
spawn: env-alias-dollar
tools: {in: config, names: {exact: true}}
args:
  - {flag: --allowed-mcp-server-names, value: servers, variadic: true, required: true}
  - {flag: --approval-mode, value: pinned, pinned: default, required: true}
env:
  - {name: NEWCLI_HOME, value: "{{loadout.root.config}}", when: always}
  - {name: LOADOUT_SPAWN_DOLLAR, value: $, when: always}
skills: {dir: .newcli/skills}
`

var newManifest = abi.Manifest{Name: "render.newcli", Version: "1.0.0", ABIVersion: abi.Version, Harness: "newcli",
	Transports: []string{abi.TransportStdio, abi.TransportHTTP}, NativeSkills: true, Roots: []string{abi.RootConfig}}

const secret = "{{loadout.secret.1}}"

func newRequest() abi.Request {
	return abi.Request{ABIVersion: abi.Version, Harness: "newcli", Servers: []abi.Server{
		{ID: "files", Transport: abi.TransportStdio, Command: "/usr/bin/files", Args: []string{"--root", "$HOME/x"},
			Env:     []abi.Pair{{Name: "MODE", Value: "a$b ${c}"}},
			HostEnv: []abi.Pair{{Name: "PATH", Value: "/usr/bin"}}, Cwd: "/w$d", Description: "costs $5",
			ToolsRestricted: true, AllowedTools: []string{"read"}, DeniedTools: []string{"rm"}, Enabled: true, Timeout: 30},
		{ID: "docs", Transport: abi.TransportHTTP, URL: "https://docs.example/mcp",
			Headers: []abi.Pair{{Name: "Authorization", Value: secret, Secret: true}}, Enabled: true, Timeout: 1e6},
		{ID: "off", Transport: abi.TransportStdio, Command: "/usr/bin/off"},
	}, Skills: []abi.Skill{{Name: "notes", Description: "Take notes", Instructions: "Write them down."}}}
}

// TestRendersANewHarnessTheHostAccepts: a plugin that is its profile and nothing else renders a
// plan the host's check accepts through the same profile, spelling every "$" as the profile's
// syntax says.
func TestRendersANewHarnessTheHostAccepts(t *testing.T) {
	t.Parallel()
	r, err := harness.New(harness.Renderer{Manifest: newManifest, Profile: mustParse(newCLI), Name: "Example CLI"})
	require.NoError(t, err)
	req := newRequest()
	p, err := r.Render(req)
	require.NoError(t, err)

	assert.Equal(t, []string{"--allowed-mcp-server-names", "files", "docs", "--approval-mode", "default"}, p.Args)
	assert.Equal(t, []abi.Pair{{Name: "NEWCLI_HOME", Value: "{{loadout.root.config}}"}, {Name: "LOADOUT_SPAWN_DOLLAR", Value: "$"}}, p.Env)
	require.NotEmpty(t, p.Files)
	cfg := p.Files[0].Content
	assert.True(t, strings.HasPrefix(cfg, "{\n  \"$version\": 4,\n  \"mcpServers\""), "the pinned key first: %s", cfg)
	assert.Contains(t, cfg, `"description": "costs ${LOADOUT_SPAWN_DOLLAR}5"`, "a $ spelled with the profile's dollar reference")
	assert.Contains(t, cfg, `"timeout": 600000`, "a timeout above timeoutMax is clamped")
	assert.NotContains(t, cfg, `"off"`, "a disabled server is left out: the profile has no enabled key")
	assert.True(t, p.Files[0].Secret, "the config holds a secret header")
	assert.Contains(t, p.Prompt, "- files: only read")
	var codes []string
	for _, w := range p.Warnings {
		codes = append(codes, w.Code)
	}
	assert.Equal(t, []string{abi.WarnTimeoutAdjusted}, codes)

	prof, err := plan.ParseProfile([]byte(newCLI))
	require.NoError(t, err)
	_, err = plan.Check(&p, plan.Input{Manifest: newManifest, Profile: prof, Request: req,
		Secrets: []plan.Secret{{Placeholder: secret, Value: "Bearer $tok", Server: "docs", Field: plan.FieldHeaders, Key: "Authorization"}}})
	require.NoError(t, err, "the host's check of the plan the profile rendered")

	// The check reads through the profile too: a plan spelling "$" another way is refused.
	bad := p
	bad.Files = append([]abi.File{}, p.Files...)
	bad.Files[0].Content = strings.Replace(cfg, "costs ${LOADOUT_SPAWN_DOLLAR}5", "costs $5", 1)
	_, err = plan.Check(&bad, plan.Input{Manifest: newManifest, Profile: prof, Request: req,
		Secrets: []plan.Secret{{Placeholder: secret, Value: "Bearer $tok", Server: "docs", Field: plan.FieldHeaders, Key: "Authorization"}}})
	require.Error(t, err, "a description the CLI would expand")
}

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	p := mustParse(newCLI)
	for name, r := range map[string]harness.Renderer{
		"no profile":      {Manifest: newManifest, Name: "x"},
		"another harness": {Manifest: abi.Manifest{Harness: "other"}, Profile: p, Name: "x"},
		"no name":         {Manifest: newManifest, Profile: p},
	} {
		_, err := harness.New(r)
		assert.Error(t, err, name)
	}
	_, err := harness.New(harness.Renderer{Manifest: newManifest, Profile: mustParse(strings.Replace(newCLI, " headers: headers,", "", 1)), Name: "x"})
	assert.ErrorContains(t, err, "needs a key meaning headers", "an http server's headers would have no key")
	_, err = harness.New(harness.Renderer{Manifest: newManifest, Profile: mustParse(strings.Replace(newCLI, "format: json", "format: toml", 1)), Name: "x"})
	assert.ErrorContains(t, err, "pinned keys in a toml config")
}

func mustParse(src string) *profile.Profile {
	p, err := profileyaml.Parse([]byte(src))
	if err != nil {
		panic(err)
	}
	return p
}

// TestHooks: Admit leaves a server out with its warning, TypeStdio writes the type key for a
// stdio server too, and Exposure writes what the CLI's own exposure needs.
func TestHooks(t *testing.T) {
	t.Parallel()
	src := strings.Replace(newCLI, "serverKeys: {", "serverKeys: {type: type, exposureNote: description, ", 1)
	src = strings.Replace(src, " description: description,", "", 1)
	r, err := harness.New(harness.Renderer{Manifest: newManifest, Profile: mustParse(src), Name: "Example CLI", TypeStdio: true,
		Admit: func(s abi.Server, rendered []string) *abi.Warning {
			if len(rendered) > 0 {
				return &abi.Warning{Code: "only_one", Server: s.ID, Message: "one server only"}
			}
			return nil
		},
		Exposure: func(entry *format.Object, s abi.Server) []abi.Warning {
			entry.Set("exposureNote", "seen "+s.ID)
			return []abi.Warning{{Code: "exposure_seen", Server: s.ID, Message: "seen"}}
		},
	})
	require.NoError(t, err)
	p, err := r.Render(newRequest())
	require.NoError(t, err)
	cfg := p.Files[0].Content
	assert.Contains(t, cfg, `"type": "stdio"`, "TypeStdio")
	assert.Contains(t, cfg, `"exposureNote": "seen files"`, "Exposure writes into the entry")
	assert.NotContains(t, cfg, `"docs"`, "Admit left the second server out")
	var codes []string
	for _, w := range p.Warnings {
		codes = append(codes, w.Code)
	}
	assert.Equal(t, []string{"exposure_seen", "only_one"}, codes)
	assert.Equal(t, []string{"--allowed-mcp-server-names", "files", "--approval-mode", "default"}, p.Args, "the servers arg names only what the config holds")
}

// ruleCLI is the profile of a CLI that takes its tool restrictions as rules on the command line,
// its OAuth scopes as one string and only an https metadata URL, sets its dollar variable only
// where the config refers to it, and reads "-" and "_" in a server name as one.
const ruleCLI = `harness: rulecli
measured: Example CLI 2.0
paths:
  - {root: run, path: mcp.json}
config:
  root: run
  path: mcp.json
  format: json
  servers: servers
  httpNeedsType: true
  serverKeys: {type: type, command: command, args: args, env: env, url: url, headers: headers, oauth: oauth}
  oauthKeys: {clientId: clientId, scopes: scopes, authServerMetadataUrl: authServerMetadataUrl}
  oauthScopes: string
  oauthMetadataUrls: https
  namesFold: "-_"
valueSyntax:
  - {expands: ["${NAME}", "${NAME:-default}"], dollar: "${LOADOUT_SPAWN_DOLLAR:-$}"}
spawn: env-alias-dollar
tools:
  in: args
  names: {keep: "A-Za-z0-9_-", replacement: "_"}
  rules: {server: "mcp__{server}", tool: "mcp__{server}__{tool}"}
  builtin: [Read]
args:
  - {flag: --mcp, value: pinned, pinned: "{{loadout.root.run}}/mcp.json", variadic: true, required: true}
  - {flag: --allow, value: tools, variadic: true}
  - {flag: --deny, value: denyTools, variadic: true}
  - {flag: --strict, required: true}
env:
  - {name: LOADOUT_SPAWN_DOLLAR, value: $, when: optional}
`

// TestProfileStatesRulesOAuthAndNames: tool rules on the command line, the OAuth forms, an
// optional env entry and folded server names come from the profile alone, and the host's check
// accepts the plan through the same profile.
func TestProfileStatesRulesOAuthAndNames(t *testing.T) {
	t.Parallel()
	m := abi.Manifest{Name: "render.rulecli", Version: "1.0.0", ABIVersion: abi.Version, Harness: "rulecli",
		Transports: []string{abi.TransportStdio, abi.TransportHTTP}, Roots: []string{abi.RootRun}}
	r, err := harness.New(harness.Renderer{Manifest: m, Profile: mustParse(ruleCLI), Name: "Rule CLI", TypeStdio: true,
		WarnDisabled: true, MaxToolName: 12})
	require.NoError(t, err)
	req := abi.Request{ABIVersion: abi.Version, Harness: "rulecli", Run: abi.Run{BuiltinTools: []string{"Read"}}, Servers: []abi.Server{
		{ID: "a-b", Transport: abi.TransportStdio, Command: "/usr/bin/ab", Args: []string{"${HOME}"}, Enabled: true,
			ToolsRestricted: true, AllowedTools: []string{"x", "x.y"}, DeniedTools: []string{"z"}},
		{ID: "a_b", Transport: abi.TransportStdio, Command: "/usr/bin/ab", Enabled: true},
		{ID: "web", Transport: abi.TransportHTTP, URL: "https://web.example/mcp", Enabled: true,
			OAuth: &abi.OAuth{ClientID: "cid", Scopes: []string{"read", "write"}, AuthServerMetadataURL: "http://meta.example/"}},
		{ID: "off", Transport: abi.TransportStdio, Command: "/usr/bin/off"},
	}}
	p, err := r.Render(req)
	require.NoError(t, err)
	assert.Equal(t, []string{"--mcp", "{{loadout.root.run}}/mcp.json", "--allow", "Read", "mcp__a-b__x", "mcp__a-b__x_y", "mcp__web",
		"--deny", "mcp__a-b__z", "--strict"}, p.Args, "built-in tools, then one rule per allowed tool or server, then the denied tools")
	assert.Equal(t, []abi.Pair{{Name: "LOADOUT_SPAWN_DOLLAR", Value: "$"}}, p.Env, "the optional variable: the config refers to it")
	cfg := p.Files[0].Content
	assert.Contains(t, cfg, `"scopes": "read write"`, "oauthScopes string")
	assert.NotContains(t, cfg, "meta.example", "an http metadata URL is left out")
	assert.NotContains(t, cfg, `"a_b"`, "a_b folds to a-b")
	var codes []string
	for _, w := range p.Warnings {
		codes = append(codes, w.Code+"/"+w.Server)
	}
	assert.Equal(t, []string{abi.WarnServerNameConflict + "/a_b", abi.WarnOAuthUnsupported + "/web", abi.WarnServerDisabled + "/off",
		abi.WarnToolNameTooLong + "/a-b"}, codes)

	prof, err := plan.ParseProfile([]byte(ruleCLI))
	require.NoError(t, err)
	_, err = plan.Check(&p, plan.Input{Manifest: m, Profile: prof, Request: req})
	require.NoError(t, err, "the host's check of the plan the profile rendered")

	// A plugin that writes both a-b and a_b is refused by the check: the CLI would read one
	// server where the request vetted two.
	unfolded, err := harness.New(harness.Renderer{Manifest: m, Profile: mustParse(strings.Replace(ruleCLI, "  namesFold: \"-_\"\n", "", 1)),
		Name: "Rule CLI", TypeStdio: true, WarnDisabled: true})
	require.NoError(t, err)
	both, err := unfolded.Render(req)
	require.NoError(t, err)
	require.Contains(t, both.Files[0].Content, `"a_b"`)
	_, err = plan.Check(&both, plan.Input{Manifest: m, Profile: prof, Request: req})
	require.ErrorContains(t, err, `reads server "a_b" as "a-b"`)
	assert.ErrorContains(t, err, plan.RuleServerSet)

	// Without a restricted server or a built-in tool there is no --allow, and with no "$" in the
	// config no optional variable.
	req.Run.BuiltinTools = nil
	req.Servers = []abi.Server{{ID: "plain", Transport: abi.TransportStdio, Command: "/usr/bin/plain", Enabled: true}}
	p, err = r.Render(req)
	require.NoError(t, err)
	assert.Equal(t, []string{"--mcp", "{{loadout.root.run}}/mcp.json", "--strict"}, p.Args)
	assert.Empty(t, p.Env)
}
