// Code generated from profile.yaml by sdk/profile/profileyaml; DO NOT EDIT.

package main

import (
	"github.com/loadout-dev/loadout/sdk/profile"
)

// harnessProfile is profile.yaml, compiled.
var harnessProfile = profile.MustCompile(&profile.Profile{
	Harness:  "codex",
	Measured: "Codex CLI 0.169.0",
	Paths: []profile.Path{
		profile.Path{
			Root: "config",
			Path: "config.toml",
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
		Root:    "config",
		Path:    "config.toml",
		Format:  "toml",
		Servers: "mcp_servers",
		ServerKeys: map[string]string{
			"args":                "args",
			"command":             "command",
			"cwd":                 "cwd",
			"disabled_tools":      "denyTools",
			"enabled":             "enabled",
			"enabled_tools":       "allowTools",
			"env":                 "env",
			"env_vars":            "envPassthrough",
			"http_headers":        "headers",
			"oauth":               "oauth",
			"scopes":              "oauthScopes",
			"startup_timeout_sec": "timeout",
			"tool_timeout_sec":    "timeout",
			"url":                 "url",
		},
		ServerKeysOrder: []string{
			"command",
			"args",
			"env",
			"env_vars",
			"cwd",
			"url",
			"http_headers",
			"enabled_tools",
			"disabled_tools",
			"enabled",
			"tool_timeout_sec",
			"startup_timeout_sec",
			"scopes",
			"oauth",
		},
		OAuthKeys: map[string]string{
			"callback_port": "callbackPort",
			"client_id":     "clientId",
		},
		TimeoutUnit: "s",
		TimeoutMax:  float64(1e+09),
	},
	ValueSyntax: profile.ValueSyntax{
		Name: "literal",
	},
	Passes: map[string]int{
		"args":    0,
		"env":     0,
		"headers": 0,
		"url":     0,
	},
	HeaderValues: "utf8",
	Spawn:        "env-alias",
	Tools: profile.Tools{
		In:               "config",
		RequireAllowList: true,
		Names: profile.ToolNames{
			Exact: true,
		},
	},
	Env: []profile.Env{
		profile.Env{
			Name:  "CODEX_HOME",
			Value: "{{loadout.root.config}}",
			When:  "always",
		},
	},
	Skills: &profile.Skills{
		Dir:   "skills",
		Folds: true,
	},
	Validate: []string{
		"codex",
		"mcp",
		"list",
		"--json",
	},
})
