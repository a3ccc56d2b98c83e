// Code generated from profile.yaml by sdk/profile/profileyaml; DO NOT EDIT.

package main

import (
	"github.com/loadout-dev/loadout/sdk/profile"
	"github.com/loadout-dev/loadout/sdk/valuesyntax"
)

// harnessProfile is profile.yaml, compiled.
var harnessProfile = profile.MustCompile(&profile.Profile{
	Harness:  "copilot",
	Measured: "GitHub Copilot CLI 1.0.102",
	Paths: []profile.Path{
		profile.Path{
			Root: "config",
			Path: "mcp-config.json",
		},
		profile.Path{
			Root: "config",
			Path: "skills/**",
		},
	},
	Config: profile.Config{
		Root:    "config",
		Path:    "mcp-config.json",
		Format:  "json",
		Servers: "mcpServers",
		ServerKeys: map[string]string{
			"args":          "args",
			"command":       "command",
			"env":           "env",
			"excludeTools":  "denyTools",
			"headers":       "headers",
			"oauthClientId": "oauthClientId",
			"oauthScopes":   "oauthScopes",
			"timeout":       "timeout",
			"tools":         "allowTools",
			"type":          "type",
			"url":           "url",
		},
		ServerKeysOrder: []string{
			"type",
			"command",
			"args",
			"env",
			"url",
			"headers",
			"timeout",
			"tools",
			"excludeTools",
			"oauthClientId",
			"oauthScopes",
		},
		TimeoutUnit: "ms",
		TimeoutMax:  float64(2.147483647e+09),
	},
	ValueSyntax: profile.ValueSyntax{
		Passes: []valuesyntax.Pass{
			valuesyntax.Pass{
				Expands: []string{
					"$NAME",
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
		"headers": 1,
		"url":     1,
	},
	HeaderValues: "utf8",
	Spawn:        "env-alias-dollar",
	ExpandMax:    1000,
	Tools: profile.Tools{
		In:               "config",
		RequireAllowList: true,
		Names: profile.ToolNames{
			Exact: true,
		},
	},
	Args: []profile.Arg{
		profile.Arg{
			Flag:     "--disable-builtin-mcps",
			Required: true,
		},
		profile.Arg{
			Flag:     "--no-auto-update",
			Required: true,
		},
	},
	Env: []profile.Env{
		profile.Env{
			Name:  "COPILOT_HOME",
			Value: "{{loadout.root.config}}",
			When:  "always",
		},
		profile.Env{
			Name:  "COPILOT_ALLOW_ALL",
			Value: "false",
			When:  "always",
		},
		profile.Env{
			Name:  "LOADOUT_SPAWN_DOLLAR",
			Value: "$",
			When:  "always",
		},
	},
	Skills: &profile.Skills{
		Dir: "skills",
	},
	ReservedNames: []string{
		"WorkIQ",
		"browser-use",
		"github-copilot-browser",
		"github-mcp-server",
		"githubiq",
	},
	Validate: []string{
		"copilot",
		"mcp",
		"list",
		"--json",
	},
})
