package plan_test

import (
	"fmt"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// Decode reads a plugin's output strictly; Check then reports every rule the plan breaks.
func ExampleCheck() {
	out := []byte(`{"files":[{"root":"checkout","path":"../.bashrc","mode":"0644","format":"text","content":"x"}],` +
		`"args":["{{loadout.secret.1}}"]}`)
	p, err := plan.Decode(out)
	if err != nil {
		fmt.Println("decode:", err)
		return
	}
	err = plan.Check(p, plan.Input{
		Manifest: abi.Manifest{Harness: "acme", Roots: []string{abi.RootCheckout}},
		Secrets:  []plan.Secret{{Placeholder: "{{loadout.secret.1}}", Server: "docs", Field: plan.FieldHeaders, Key: "Authorization"}},
	})
	for _, v := range plan.Violations(err) {
		fmt.Println(v.Rule)
	}
	// Output:
	// path
	// secret_placement
	// arg
}
