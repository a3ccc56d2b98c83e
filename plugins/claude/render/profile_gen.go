// Code generated from ../profile.yaml by sdk/profile/profileyaml; DO NOT EDIT.

package render

import (
	"github.com/loadout-dev/loadout/sdk/profile"
	"github.com/loadout-dev/loadout/sdk/valuesyntax"
)

// harnessProfile is ../profile.yaml, compiled.
var harnessProfile = profile.MustCompile(&profile.Profile{
	Harness:  "claude",
	Measured: "Claude Code 2.1.328",
	Paths: []profile.Path{
		profile.Path{
			Root: "run",
			Path: "mcp-servers.json",
		},
		profile.Path{
			Root: "config",
			Path: "skills/**",
		},
		profile.Path{
			Root: "checkout",
			Path: ".cat-context/**",
		},
	},
	Config: profile.Config{
		Root:    "run",
		Path:    "mcp-servers.json",
		Format:  "json",
		Servers: "mcpServers",
		ServerKeys: map[string]string{
			"args":    "args",
			"command": "command",
			"env":     "env",
			"headers": "headers",
			"oauth":   "oauth",
			"timeout": "timeout",
			"type":    "type",
			"url":     "url",
		},
		ServerKeysOrder: []string{
			"type",
			"command",
			"args",
			"env",
			"url",
			"headers",
			"timeout",
			"oauth",
		},
		HTTPNeedsType: true,
		OAuthKeys: map[string]string{
			"authServerMetadataUrl": "authServerMetadataUrl",
			"callbackPort":          "callbackPort",
			"clientId":              "clientId",
			"scopes":                "scopes",
		},
		TimeoutUnit:       "ms",
		TimeoutMin:        float64(1000),
		TimeoutMax:        float64(2.147483647e+09),
		OAuthScopes:       "string",
		OAuthMetadataURLs: "https",
	},
	ValueSyntax: profile.ValueSyntax{
		Passes: []valuesyntax.Pass{
			valuesyntax.Pass{
				Expands: []string{
					"${NAME}",
					"${NAME:-default}",
				},
				Dollar: "${LOADOUT_SPAWN_DOLLAR:-$}",
			},
		},
	},
	Passes: map[string]int{
		"args":    1,
		"env":     1,
		"headers": 2,
		"url":     1,
	},
	HeaderValues: "latin1",
	Spawn:        "env-alias-dollar",
	Tools: profile.Tools{
		In: "args",
		Builtin: []string{
			"Task",
			"Bash",
			"CronCreate",
			"CronDelete",
			"CronList",
			"DesignSync",
			"Edit",
			"EnterWorktree",
			"ExitWorktree",
			"ListAgents",
			"Monitor",
			"NotebookEdit",
			"Read",
			"ReportFindings",
			"ScheduleWakeup",
			"SendMessage",
			"Skill",
			"TaskStop",
			"ToolSearch",
			"WebFetch",
			"WebSearch",
			"Workflow",
			"Write",
		},
		Names: profile.ToolNames{
			Keep:        "A-Za-z0-9_-",
			Replacement: "_",
		},
		Rules: &profile.ToolRules{
			Server: "mcp__{server}",
			Tool:   "mcp__{server}__{tool}",
		},
	},
	Args: []profile.Arg{
		profile.Arg{
			Flag:     "--mcp-config",
			Value:    "pinned",
			Pinned:   "{{loadout.root.run}}/mcp-servers.json",
			Variadic: true,
			Required: true,
		},
		profile.Arg{
			Flag:     "--allowedTools",
			Value:    "tools",
			Variadic: true,
		},
		profile.Arg{
			Flag:     "--disallowedTools",
			Value:    "denyTools",
			Variadic: true,
		},
		profile.Arg{
			Flag:     "--strict-mcp-config",
			Required: true,
		},
	},
	Env: []profile.Env{
		profile.Env{
			Name:  "LOADOUT_SPAWN_DOLLAR",
			Value: "$",
			When:  "optional",
		},
		profile.Env{
			Name:  "CLAUDE_CONFIG_DIR",
			Value: "{{loadout.root.config}}",
			When:  "isolated",
		},
	},
	Skills: &profile.Skills{
		Dir:   "skills",
		Folds: true,
	},
	Prompt: &profile.Prompt{
		Qualified:      "mcp__{server}__{tool}",
		QualifiedChars: "_-",
	},
	ReservedNames: []string{
		"workspace",
		"computer-use",
		"claude-in-chrome",
	},
	Validate: []string{
		"claude",
		"mcp",
		"list",
	},
})
