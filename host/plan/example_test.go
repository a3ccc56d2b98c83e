package plan_test

import (
	"fmt"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// acmeProfile is a third-party harness's reviewed profile (docs/PROFILES.md).
const acmeProfile = `harness: acme
paths:
  - {root: config, path: mcp.json}
  - {root: checkout, path: ".cat-context/**"}
config: {root: config, path: mcp.json, format: json, servers: servers,
  serverKeys: {command: command, args: args, env: env, url: url, headers: headers, allowedTools: allowTools}}
valueSyntax: literal
tools: {in: config, names: {exact: true}}
`

// Decode reads a plugin's output strictly; Check then reports every rule the plan breaks.
func ExampleCheck() {
	out := []byte(`{"files":[{"root":"checkout","path":"../.bashrc","mode":"0644","format":"text","content":"x"}],` +
		`"args":["{{loadout.secret.1}}"]}`)
	p, err := plan.Decode(out)
	if err != nil {
		fmt.Println("decode:", err)
		return
	}
	acme, err := plan.ParseProfile([]byte(acmeProfile))
	if err != nil {
		fmt.Println("profile:", err)
		return
	}
	_, err = plan.Check(p, plan.Input{
		Manifest: abi.Manifest{Harness: "acme", Roots: []string{abi.RootCheckout}},
		Profile:  acme,
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
