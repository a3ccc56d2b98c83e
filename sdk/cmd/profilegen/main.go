// Command profilegen writes a plugin's profile.yaml as a Go literal (profile_gen.go), so that the
// plugin renders through its profile with no YAML reader compiled into it. Run it from the
// plugin's directory with go generate:
//
//	//go:generate go run github.com/loadout-dev/loadout/sdk/cmd/profilegen
//
// It reads profile.yaml strictly (sdk/profile/profileyaml) and writes the variable
// harnessProfile into profile_gen.go of the package go generate names ($GOPACKAGE). A profile
// that does not parse writes nothing and exits 1.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/loadout-dev/loadout/sdk/profile/profileyaml"
)

func main() {
	in := flag.String("in", "profile.yaml", "the profile to read")
	out := flag.String("out", "profile_gen.go", "the Go file to write")
	name := flag.String("var", "harnessProfile", "the variable to declare")
	pkg := flag.String("package", os.Getenv("GOPACKAGE"), "the package of the Go file (default $GOPACKAGE)")
	flag.Parse()
	if err := run(*in, *out, *name, *pkg); err != nil {
		fmt.Fprintln(os.Stderr, "profilegen:", err)
		os.Exit(1)
	}
}

func run(in, out, name, pkg string) error {
	if pkg == "" {
		return fmt.Errorf("no package: run it through go generate, or give -package")
	}
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	p, err := profileyaml.Parse(data)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	src, err := profileyaml.GoSource(pkg, name, in, p)
	if err != nil {
		return err
	}
	return os.WriteFile(out, src, 0o644)
}
