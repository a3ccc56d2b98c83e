// Code generated from profile.yaml by sdk/profile/profileyaml; DO NOT EDIT.

package main

import (
	"github.com/loadout-dev/loadout/sdk/profile"
	"github.com/loadout-dev/loadout/sdk/valuesyntax"
)

// harnessProfile is profile.yaml, compiled.
var harnessProfile = profile.MustCompile(&profile.Profile{
	Harness:  "pi",
	Measured: "Pi 1.6.0",
	Paths: []profile.Path{
		profile.Path{
			Root: "config",
			Path: "mcp.json",
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
		Path:    "mcp.json",
		Format:  "json",
		Servers: "mcpServers",
		TopKeys: []string{
			"autoEnableCodemode",
		},
		ServerKeys: map[string]string{
			"args":         "args",
			"command":      "command",
			"cwd":          "cwd",
			"description":  "description",
			"enabled":      "enabled",
			"env":          "env",
			"exposure":     "exposure",
			"headers":      "headers",
			"oauth":        "oauth",
			"timeout":      "timeout",
			"toolExposure": "toolExposure",
			"type":         "type",
			"url":          "url",
		},
		ServerKeysOrder: []string{
			"type",
			"command",
			"args",
			"env",
			"cwd",
			"url",
			"headers",
			"description",
			"timeout",
			"exposure",
			"toolExposure",
			"enabled",
			"oauth",
		},
		OAuthKeys: map[string]string{
			"authServerMetadataUrl": "authServerMetadataUrl",
			"callbackPort":          "callbackPort",
			"clientId":              "clientId",
			"scope":                 "scopes",
		},
		TimeoutUnit:       "s",
		TimeoutMax:        float64(2.147483e+06),
		OAuthScopes:       "string",
		OAuthMetadataURLs: "https-or-loopback",
		NamesFold:         "-_",
	},
	ValueSyntax: profile.ValueSyntax{
		Passes: []valuesyntax.Pass{
			valuesyntax.Pass{
				Expands: []string{
					"$NAME",
					"${NAME}",
					"!command",
				},
				Dollar: "$$",
				Bang:   "$!",
			},
		},
	},
	Passes: map[string]int{
		"args":    0,
		"env":     1,
		"headers": 1,
		"url":     0,
	},
	HeaderValues: "latin1",
	Spawn:        "env-alias",
	ExpandsTilde: true,
	Tools: profile.Tools{
		In: "exposure",
		Names: profile.ToolNames{
			Exact: true,
		},
	},
	Env: []profile.Env{
		profile.Env{
			Name:  "PI_CODING_AGENT_DIR",
			Value: "{{loadout.root.config}}",
			When:  "always",
		},
	},
	Skills: &profile.Skills{
		Dir: "skills",
	},
	Prompt: &profile.Prompt{
		Qualified:      "mcp__{server}__{tool}",
		QualifiedChars: "_",
	},
})
