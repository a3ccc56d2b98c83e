package sdk_test

import (
	"fmt"

	"github.com/loadout-dev/loadout/sdk"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// A plugin is one pure function plus its manifest. In a plugin's package main this is
// `func init() { sdk.Register(manifest, render) }` with an empty main; here the same wire path
// runs natively through sdk.New and Plugin.Render.
func Example() {
	manifest := abi.Manifest{
		Name:       "render.hello",
		Version:    "1.0.0",
		Harness:    "hello",
		Transports: []string{abi.TransportStdio},
		Roots:      []string{abi.RootRun},
	}
	render := func(req abi.Request) (abi.Plan, error) {
		var plan abi.Plan
		for _, s := range req.Servers {
			plan.Args = append(plan.Args, "--server", s.ID+"="+s.Command)
		}
		return plan, nil
	}
	p, err := sdk.New(manifest, render)
	if err != nil {
		fmt.Println("new:", err)
		return
	}
	fmt.Printf("%s\n", p.ManifestJSON())
	fmt.Printf("%s\n", p.Render([]byte(`{"abiVersion":1,"harness":"hello","servers":[{"id":"files","transport":"stdio","command":"mcp-files"}]}`)))
	fmt.Printf("%s\n", p.Render([]byte(`{"abiVersion":1,"harness":"hello","harness":"hello"}`)))
	// Output:
	// {"name":"render.hello","version":"1.0.0","abiVersion":1,"harness":"hello","transports":["stdio"],"nativeSkills":false,"roots":["run"]}
	// {"files":[],"args":["--server","files=mcp-files"],"env":[],"prompt":"","gitExclude":[],"warnings":[]}
	// {"error":{"code":"invalid_input","message":"invalid request JSON at offset 34: request: duplicate field \"harness\""}}
}
