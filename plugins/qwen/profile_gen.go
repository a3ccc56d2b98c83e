// Code generated from profile.yaml by sdk/profile/profileyaml; DO NOT EDIT.

package main

import (
	"github.com/loadout-dev/loadout/sdk/profile"
)

// harnessProfile is profile.yaml, compiled.
var harnessProfile = profile.MustCompile(&profile.Profile{
	Harness:  "qwen",
	Measured: "Qwen Code 0.24.4",
	Paths: []profile.Path{
		profile.Path{
			Root: "run",
			Path: "mcp-servers.json",
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
			"args":         "args",
			"command":      "command",
			"cwd":          "cwd",
			"description":  "description",
			"env":          "env",
			"excludeTools": "denyTools",
			"headers":      "headers",
			"httpUrl":      "url",
			"includeTools": "allowTools",
			"timeout":      "timeout",
		},
		ServerKeysOrder: []string{
			"command",
			"args",
			"env",
			"cwd",
			"httpUrl",
			"headers",
			"description",
			"timeout",
			"includeTools",
			"excludeTools",
		},
		TimeoutUnit: "ms",
		TimeoutMax:  float64(2.147483647e+09),
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
	HeaderValues: "latin1",
	Spawn:        "env-alias",
	Tools: profile.Tools{
		In:               "config",
		RequireAllowList: true,
		Names: profile.ToolNames{
			Exact: true,
		},
	},
	Args: []profile.Arg{
		profile.Arg{
			Flag:     "--allowed-mcp-server-names",
			Value:    "servers",
			Variadic: true,
			Required: true,
		},
		profile.Arg{
			Flag:     "--mcp-config",
			Value:    "pinned",
			Pinned:   "{{loadout.root.run}}/mcp-servers.json",
			Required: true,
		},
		profile.Arg{
			Flag:     "--bare",
			Required: true,
		},
	},
	Env: []profile.Env{
		profile.Env{
			Name:  "QWEN_HOME",
			Value: "{{loadout.root.config}}",
			When:  "isolated",
		},
	},
	Skills: &profile.Skills{
		FoldsAlways: true,
	},
})
