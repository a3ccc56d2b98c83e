// Code generated from profile.yaml by sdk/profile/profileyaml; DO NOT EDIT.

package main

import (
	"github.com/loadout-dev/loadout/sdk/profile"
	"github.com/loadout-dev/loadout/sdk/valuesyntax"
)

// harnessProfile is profile.yaml, compiled.
var harnessProfile = profile.MustCompile(&profile.Profile{
	Harness:  "gemini",
	Measured: "Gemini CLI 0.61.0",
	Paths: []profile.Path{
		profile.Path{
			Root: "config",
			Path: ".gemini/settings.json",
		},
		profile.Path{
			Root: "config",
			Path: ".gemini/skills/**",
		},
		profile.Path{
			Root: "checkout",
			Path: ".cat-context/**",
		},
	},
	HiddenDirs: []string{
		".gemini",
	},
	Config: profile.Config{
		Root:    "config",
		Path:    ".gemini/settings.json",
		Format:  "json",
		Servers: "mcpServers",
		Pinned: map[string]interface{}{
			"advanced": map[string]interface{}{
				"ignoreLocalEnv": true,
			},
			"security": map[string]interface{}{
				"auth": map[string]interface{}{
					"useExternal": true,
				},
			},
		},
		PinnedOrder: []string{
			"security",
			"advanced",
		},
		ServerKeys: map[string]string{
			"args":         "args",
			"command":      "command",
			"description":  "description",
			"env":          "env",
			"excludeTools": "denyTools",
			"headers":      "headers",
			"httpUrl":      "url",
			"includeTools": "allowTools",
			"oauth":        "oauth",
			"timeout":      "timeout",
		},
		ServerKeysOrder: []string{
			"command",
			"args",
			"env",
			"httpUrl",
			"headers",
			"description",
			"timeout",
			"includeTools",
			"excludeTools",
			"oauth",
		},
		OAuthKeys: map[string]string{
			"clientId": "clientId",
			"scopes":   "scopes",
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
			valuesyntax.Pass{
				Expands: []string{
					"$NAME",
					"${NAME}",
				},
				Dollar: "\\$",
			},
		},
	},
	Passes: map[string]int{
		"args":    1,
		"env":     2,
		"headers": 2,
		"url":     1,
	},
	HeaderValues: "latin1",
	Spawn:        "env-alias-dollar",
	Tools: profile.Tools{
		In:               "config",
		RequireAllowList: true,
		Names: profile.ToolNames{
			Exact: true,
		},
	},
	Args: []profile.Arg{
		profile.Arg{
			Flag:     "--skip-trust",
			Required: true,
		},
	},
	Env: []profile.Env{
		profile.Env{
			Name:  "GEMINI_CLI_HOME",
			Value: "{{loadout.root.config}}",
			When:  "always",
		},
		profile.Env{
			Name:  "GEMINI_CLI_TRUST_WORKSPACE",
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
		Dir: ".gemini/skills",
	},
	Validate: []string{
		"gemini",
		"mcp",
		"list",
	},
})
