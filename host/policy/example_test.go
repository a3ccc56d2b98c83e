package policy_test

import (
	"context"
	"fmt"

	"github.com/loadout-dev/loadout/host/policy"
	"github.com/loadout-dev/loadout/host/spec"
)

func Example() {
	ctx := context.Background()
	engine, err := policy.New(ctx, policy.Config{}) // the embedded default policies
	if err != nil {
		fmt.Println("compile policies:", err)
		return
	}
	req := &spec.Request{
		Servers: []spec.Server{
			{ID: "fs", Transport: "stdio", Command: "/usr/bin/mcp-fs",
				Env:        []spec.Pair{{Name: "FS_TOKEN", Value: "s3cr\"t"}, {Name: "LD_PRELOAD", Value: "/tmp/x.so"}},
				SecretKeys: []string{"FS_TOKEN"}},
			{Index: 1, ID: "web", Transport: "http", URL: "http://evil.example/mcp"},
		},
	}
	hostEnv := []spec.Pair{{Name: "PATH", Value: "/usr/bin"}, {Name: "AWS_SECRET_ACCESS_KEY", Value: "x"}}
	decision, err := engine.Decide(ctx, req, hostEnv, "")
	if err != nil {
		fmt.Println("decide:", err)
		return
	}
	vetted, err := policy.Vet(req, decision, hostEnv, policy.VetOptions{})
	if err != nil {
		fmt.Println("vet:", err)
		return
	}
	for _, s := range vetted.Request().Servers {
		fmt.Println("kept", s.ID, s.Env)
	}
	for _, d := range vetted.Dropped() {
		fmt.Println("dropped", d.Field, d.Code)
	}
	fmt.Println("spawn env", vetted.SpawnEnv("fs"))
	fmt.Printf("redact %q\n", vetted.Redactions())
	// Output:
	// kept fs [{FS_TOKEN {{loadout.secret.1}} true}]
	// dropped mcpServers[0].env.LD_PRELOAD env_key_refused
	// dropped mcpServers[1].url url_not_allowed
	// spawn env [{PATH /usr/bin} {FS_TOKEN s3cr"t}]
	// redact ["s3cr\"t" "s3cr\\\"t"]
}
