// Command pinsgen writes the built-in plugins' pins.json: for every <name>.wasm in a directory,
// its sha256, the sha256 of its harness profile (plugins/<name>/profile.yaml, as package
// plugins embeds it; the profile must parse and name the module's harness) and the manifest
// it reports, read by loading it as loadout does (registry.Load on
// the wazero engine, in the sandbox, with the default limits). ./build.sh runs it on the freshly
// built plugins, so that the binary knows each embedded plugin's harness without instantiating
// it, and a command loads only the plugins it needs (host/builtin).
//
//	go run ./host/builtin/internal/pinsgen DIR > DIR/pins.json
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/loadout-dev/loadout/host/builtin"
	"github.com/loadout-dev/loadout/host/engine/wazero"
	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/host/registry"
	"github.com/loadout-dev/loadout/plugins"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: pinsgen DIR")
		os.Exit(2)
	}
	if err := run(context.Background(), os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "pinsgen:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dir string) error {
	paths, err := filepath.Glob(filepath.Join(dir, "*.wasm"))
	if err != nil {
		return err
	}
	sort.Strings(paths)
	eng, err := wazero.New(ctx, wazero.Config{})
	if err != nil {
		return err
	}
	defer eng.Close(ctx)
	pins := map[string]builtin.Pin{}
	for _, p := range paths {
		wasm, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		name := filepath.Base(p)
		art := registry.Artifact{Name: name, Wasm: wasm, SHA256: registry.Digest(wasm)}
		pl, err := registry.Load(ctx, eng, art)
		if err != nil {
			return err
		}
		m := pl.Manifest()
		profile, err := fs.ReadFile(plugins.Profiles, builtin.ProfilePath(name))
		if err != nil {
			return fmt.Errorf("%s: every built-in plugin needs its reviewed profile: %w", name, err)
		}
		prof, err := plan.ParseProfile(profile)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if prof.Harness != m.Harness {
			return fmt.Errorf("%s: profile %s is for harness %q, the module renders %q", name, builtin.ProfilePath(name), prof.Harness, m.Harness)
		}
		pins[name] = builtin.Pin{SHA256: art.SHA256, Profile: registry.Digest(profile), Manifest: m}
		if err := pl.Close(ctx); err != nil {
			return err
		}
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(pins); err != nil { // map keys in name order
		return err
	}
	_, err = os.Stdout.WriteString(b.String())
	return err
}
