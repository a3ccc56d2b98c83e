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
	in := materialize.Input{
		Roots: materialize.Roots{Config: "/home/ci/.loadout/config", Run: "/run/loadout/1", Checkout: "/src/repo"},
		Plan: plan.Input{
			Manifest: abi.Manifest{Harness: "acme", Roots: []string{abi.RootConfig}},
			Secrets:  []plan.Secret{{Placeholder: "{{loadout.secret.1}}", Value: "hunter2"}},
		},
	}
	p := &abi.Plan{
		Files: []abi.File{{Root: abi.RootConfig, Path: "agent.json", Mode: "0600", Format: abi.FormatJSON, Secret: true,
			Content: `{"token":"{{loadout.secret.1}}","home":"{{loadout.root.config}}"}`}},
	}
	res, err := materialize.DryRun(context.Background(), p, in)
	if err != nil {
		fmt.Println("dry run:", err)
		return
	}
	fmt.Println(res.Files[0].Path, res.Files[0].Mode, res.Files[0].Content)
	// Output:
	// agent.json 0600 {"token":"********","home":"/home/ci/.loadout/config"}
}
