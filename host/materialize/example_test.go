package materialize_test

import (
	"context"
	"fmt"

	"github.com/loadout-dev/loadout/host/materialize"
	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// A dry run checks and substitutes a plan without writing, and masks every secret.
func ExampleDryRun() {
	profile, err := plan.ParseProfile([]byte(`harness: acme
paths: [{root: config, path: agent.json}]
config: {root: config, path: agent.json, format: json, servers: servers,
  serverKeys: {command: command, args: args, env: env, url: url, headers: headers, allowedTools: allowTools}}
valueSyntax: literal
tools: {in: config, names: {exact: true}}
`))
	if err != nil {
		fmt.Println("profile:", err)
		return
	}
	in := input{
		Roots: materialize.Roots{Config: "/home/ci/.loadout/config", Run: "/run/loadout/1", Checkout: "/src/repo"},
		Plan: plan.Input{
			Manifest: abi.Manifest{Harness: "acme", Roots: []string{abi.RootConfig}},
			Profile:  profile,
			Request: abi.Request{Servers: []abi.Server{{ID: "docs", Transport: abi.TransportStdio, Command: "/usr/bin/docs",
				Env: []abi.Pair{{Name: "TOKEN", Value: "{{loadout.secret.1}}", Secret: true}}, Enabled: true}}},
			Secrets: []plan.Secret{{Placeholder: "{{loadout.secret.1}}", Value: "hunter2", Server: "docs", Field: plan.FieldEnv, Key: "TOKEN"}},
		},
	}
	p := &abi.Plan{
		Files: []abi.File{{Root: abi.RootConfig, Path: "agent.json", Mode: "0600", Format: abi.FormatJSON, Secret: true,
			Content: `{"servers":{"docs":{"command":"/usr/bin/docs","env":{"TOKEN":"{{loadout.secret.1}}"}}}}`}},
	}
	res, err := dryRun(context.Background(), p, in)
	if err != nil {
		fmt.Println("dry run:", err)
		return
	}
	fmt.Println(res.Files[0].Path, res.Files[0].Mode, res.Files[0].Content)
	// Output:
	// agent.json 0600 {"servers":{"docs":{"command":"/usr/bin/docs","env":{"TOKEN":"[REDACTED]"}}}}
}
