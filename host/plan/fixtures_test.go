package plan_test

import (
	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/sdk/abi"
)

const (
	secretKey  = "{{loadout.secret.1}}"
	secretAuth = "{{loadout.secret.2}}"
	blobOne    = "{{loadout.blob.1}}"
)

// vetted is the vetted request every fixture plan renders: a stdio server with a secret env
// value and an http server with a secret header and a tool restriction. The fixture plans
// launch the stdio server through the env wrapper (docs/SPAWN-ENV.md), as every harness needs.
func vetted(harness string) abi.Request {
	return abi.Request{
		ABIVersion: abi.Version,
		Harness:    harness,
		Servers: []abi.Server{
			{
				ID: "alpha", Transport: abi.TransportStdio, Command: "/usr/bin/alpha", Args: []string{"serve"},
				Env:     []abi.Pair{{Name: "API_KEY", Value: secretKey, Secret: true}, {Name: "MODE", Value: "test"}},
				HostEnv: []abi.Pair{{Name: "HOME", Value: "/home/u"}},
				Enabled: true,
			},
			{
				ID: "beta", Transport: abi.TransportHTTP, URL: "https://mcp.example.com/mcp",
				Headers:         []abi.Pair{{Name: "Authorization", Value: "Bearer " + secretAuth, Secret: true}},
				ToolsRestricted: true, AllowedTools: []string{"search"},
				Enabled: true,
			},
		},
		Skills: []abi.Skill{{Name: "demo", Description: "d", Instructions: blobOne}},
	}
}

func input(harness string) plan.Input {
	roots := map[string][]string{
		"claude": {abi.RootConfig, abi.RootRun, abi.RootCheckout},
		"codex":  {abi.RootConfig, abi.RootCheckout},
		"pi":     {abi.RootConfig, abi.RootCheckout},
	}[harness]
	if roots == nil {
		roots = []string{abi.RootConfig, abi.RootRun, abi.RootCheckout}
	}
	req := vetted(harness)
	if harness == "claude" {
		// The built-in tools claudePlan pre-approves.
		req.Run.BuiltinTools = []string{"Bash", "Read"}
	}
	return plan.Input{
		Manifest: abi.Manifest{Name: "render." + harness, ABIVersion: abi.Version, Harness: harness, Roots: roots},
		Profile:  profileOf(harness),
		Request:  req,
		Secrets: []plan.Secret{
			{Placeholder: secretKey, Value: "s3cr3t-key", Server: "alpha", Field: plan.FieldEnv, Key: "API_KEY"},
			{Placeholder: secretAuth, Value: "tok\"en\\with\nescapes", Server: "beta", Field: plan.FieldHeaders, Key: "Authorization"},
		},
		Blobs: []plan.Blob{{Placeholder: blobOne, Value: "Use the tools.\n"}},
	}
}

const claudeConfig = `{"mcpServers":{` +
	`"alpha":{"type":"stdio","command":"/usr/bin/env","args":["-i","-S",` +
	`"HOME=${LOADOUT_SPAWN_DOLLAR:-$}{LOADOUT_SPAWN_1} API_KEY=${LOADOUT_SPAWN_DOLLAR:-$}{LOADOUT_SPAWN_2} MODE=${LOADOUT_SPAWN_DOLLAR:-$}{LOADOUT_SPAWN_3}",` +
	`"/usr/bin/alpha","serve"],"env":{"LOADOUT_SPAWN_1":"/home/u","LOADOUT_SPAWN_2":"{{loadout.secret.1}}","LOADOUT_SPAWN_3":"test"}},` +
	`"beta":{"type":"http","url":"https://mcp.example.com/mcp","headers":{"Authorization":"Bearer {{loadout.secret.2}}"}}}}`

const skillMD = "---\nname: demo\ndescription: d\n---\n" + blobOne

// claudePlan is a plan the claude renderer could return for vetted("claude"); Check accepts it.
func claudePlan() *abi.Plan {
	return &abi.Plan{
		Files: []abi.File{
			{Root: abi.RootRun, Path: "mcp-servers.json", Mode: "0600", Format: abi.FormatJSON, Content: claudeConfig, Secret: true},
			{Root: abi.RootConfig, Path: "skills/demo/SKILL.md", Mode: "0644", Format: abi.FormatMarkdown, Content: skillMD},
		},
		Args: []string{"--mcp-config", "{{loadout.root.run}}/mcp-servers.json", "--allowedTools", "Bash", "Read",
			"mcp__alpha", "mcp__beta__search", "--strict-mcp-config"},
		Env:        []abi.Pair{{Name: "LOADOUT_SPAWN_DOLLAR", Value: "$"}, {Name: "CLAUDE_CONFIG_DIR", Value: "{{loadout.root.config}}"}},
		Prompt:     promptOf(true),
		GitExclude: []string{".cat-context/"},
		Warnings:   []abi.Warning{},
	}
}

const codexConfig = `[mcp_servers.alpha]
command = "/usr/bin/env"
args = ["-i", "-S", "HOME=${LOADOUT_SPAWN_1} API_KEY=${LOADOUT_SPAWN_2} MODE=${LOADOUT_SPAWN_3}", "/usr/bin/alpha", "serve"]
env = { LOADOUT_SPAWN_1 = "/home/u", LOADOUT_SPAWN_2 = "{{loadout.secret.1}}", LOADOUT_SPAWN_3 = "test" }

[mcp_servers.beta]
url = "https://mcp.example.com/mcp"
http_headers = { Authorization = "Bearer {{loadout.secret.2}}" }
enabled_tools = ["search"]
`

// codexPlan is a plan the codex renderer could return for vetted("codex"); Check accepts it.
func codexPlan() *abi.Plan {
	return &abi.Plan{
		Files: []abi.File{
			{Root: abi.RootConfig, Path: "config.toml", Mode: "0600", Format: abi.FormatTOML, Content: codexConfig, Secret: true},
			{Root: abi.RootConfig, Path: "skills/demo/SKILL.md", Mode: "0644", Format: abi.FormatMarkdown, Content: skillMD},
		},
		Args:       []string{},
		Env:        []abi.Pair{{Name: "CODEX_HOME", Value: "{{loadout.root.config}}"}},
		Prompt:     promptOf(false),
		GitExclude: []string{},
		Warnings:   []abi.Warning{},
	}
}

const piConfig = `{"mcpServers":{` +
	`"alpha":{"type":"stdio","command":"/usr/bin/env","args":["-i","-S","HOME=${LOADOUT_SPAWN_1} API_KEY=${LOADOUT_SPAWN_2} MODE=${LOADOUT_SPAWN_3}",` +
	`"/usr/bin/alpha","serve"],"env":{"LOADOUT_SPAWN_1":"/home/u","LOADOUT_SPAWN_2":"{{loadout.secret.1}}","LOADOUT_SPAWN_3":"test"}},` +
	`"beta":{"type":"http","url":"https://mcp.example.com/mcp","headers":{"Authorization":"Bearer {{loadout.secret.2}}"},` +
	`"exposure":"hidden","toolExposure":{"search":"direct"}}}}`

// piPlan is a plan the pi renderer could return for vetted("pi"); Check accepts it.
func piPlan() *abi.Plan {
	return &abi.Plan{
		Files: []abi.File{
			{Root: abi.RootConfig, Path: "mcp.json", Mode: "0600", Format: abi.FormatJSON, Content: piConfig, Secret: true},
			{Root: abi.RootConfig, Path: "skills/demo/SKILL.md", Mode: "0644", Format: abi.FormatMarkdown, Content: skillMD},
		},
		Env:    []abi.Pair{{Name: "PI_CODING_AGENT_DIR", Value: "{{loadout.root.config}}"}},
		Prompt: promptOf(true),
	}
}

// promptOf is the prompt the host requires for vetted(h): each server and its tools, a tool
// spelled with the name the harness shows the model when qualified (Claude Code's and Pi's
// profiles say so).
func promptOf(qualified bool) string {
	beta := "search"
	if qualified {
		beta = "search (mcp__beta__search)"
	}
	return promptHead + "- alpha: all tools\n- beta: only " + beta + "\n"
}

// promptHead opens the prompt's servers section.
const promptHead = "## MCP servers\n\nThese MCP servers are configured for this run, each with the tools you may use:\n"

// checkPlan is plan.Check for the tests that need only its verdict.
func checkPlan(p *abi.Plan, in plan.Input) error {
	_, err := plan.Check(p, in)
	return err
}
