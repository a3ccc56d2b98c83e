package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/host/registry"
)

// pluginsAddCommand pins a dropped-in plugin and its reviewed profile together: both are
// validated (the profile parses strictly, the module loads in the sandbox and its manifest
// names the profile's harness) before the pins file is written, so a pins file never names a
// module whose harness has no profile beside it.
func (a *app) pluginsAddCommand() *cobra.Command {
	var (
		profile, pins, engineName string
		noCache, replace          bool
	)
	cmd := &cobra.Command{
		Use:   "add FILE.wasm --profile P.yaml --pins PINS.json",
		Short: "Validate a plugin and its harness profile, then pin both in the pins file",
		Long: `add checks that P.yaml is a valid harness profile (docs/PROFILES.md) and that FILE.wasm
loads in the sandbox with a valid manifest naming the profile's harness, then writes the
sha256 digests of both into PINS.json (created if missing, other entries kept, written
atomically): the module under its file name, the profile under "profile:<harness>", so that
each harness has one reviewed profile whatever its file is called. A different profile for a
harness the file already pins, or a different module under a file name it already pins, is
refused, and nothing written, unless --replace says the new one was reviewed to replace it. Use the pins file with render, serve, plugins and conformity:
  --plugin FILE.wasm --profile P.yaml --pins PINS.json
Pinning says the profile was reviewed: read it first. Certify the pair with
  loadout conformity --plugin FILE.wasm --profile P.yaml --pins PINS.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if profile == "" || pins == "" {
				return usagef("plugins add needs --profile P.yaml and --pins PINS.json")
			}
			wasmFile := args[0]
			if strings.HasPrefix(filepath.Base(wasmFile), profilePinPrefix) {
				return usagef("plugin %s: a module file name may not start with %q, which keys the profiles in a pins file", wasmFile, profilePinPrefix)
			}
			wasm, err := os.ReadFile(wasmFile)
			if err != nil {
				return usagef("plugin: %v", err)
			}
			pdata, err := os.ReadFile(profile)
			if err != nil {
				return usagef("profile: %v", err)
			}
			prof, err := plan.ParseProfile(pdata)
			if err != nil {
				return usagef("profile %s: %v", profile, err)
			}
			ho := hostOptions{engine: engineName, noCache: noCache}
			eng, err := ho.newEngine(cmd.Context(), engineName, a.logger)
			if err != nil {
				return err
			}
			defer eng.Close(context.WithoutCancel(cmd.Context()))
			digest := registry.Digest(wasm)
			p, err := registry.Load(cmd.Context(), eng, registry.Artifact{Name: filepath.Base(wasmFile), Wasm: wasm, SHA256: digest})
			if err != nil {
				return &pluginError{fmt.Errorf("plugin %s: %w", wasmFile, err)}
			}
			m := p.Manifest()
			_ = p.Close(cmd.Context())
			if m.Harness != prof.Harness {
				return usagef("plugin %s renders harness %q, profile %s is for %q", wasmFile, m.Harness, profile, prof.Harness)
			}
			entries, err := readPinsFile(pins)
			if err != nil {
				return err
			}
			if old, ok := entries[filepath.Base(wasmFile)]; ok && old != digest && !replace {
				return usagef("%s already pins another module under %q (%s; this one is %s): nothing written; give --replace to pin %s instead, once it is reviewed (or rename it: modules are pinned by file name)", pins, filepath.Base(wasmFile), old, digest, wasmFile)
			}
			pkey, pdigest := profilePinKey(prof.Harness), registry.Digest(pdata)
			if old, ok := entries[pkey]; ok && old != pdigest && !replace {
				return usagef("%s already pins another profile of harness %s under %q (%s; this one is %s): nothing written; give --replace to pin %s instead, once it is reviewed", pins, prof.Harness, pkey, old, pdigest, profile)
			}
			var report []string // said once the file is written
			// An older pins file keyed the profile by its file name: the entry moves to its key.
			if legacy := filepath.Base(profile); legacy != filepath.Base(wasmFile) && entries[legacy] == pdigest {
				delete(entries, legacy)
				report = append(report, fmt.Sprintf("moved %s to %s", legacy, pkey))
			}
			set := []struct{ name, digest string }{
				{filepath.Base(wasmFile), digest},
				{pkey, pdigest},
			}
			for _, e := range set {
				switch old, ok := entries[e.name]; {
				case !ok:
					report = append(report, fmt.Sprintf("pinned %s %s", e.name, e.digest))
				case old != e.digest:
					report = append(report, fmt.Sprintf("re-pinned %s %s (was %s)", e.name, e.digest, old))
				default:
					report = append(report, fmt.Sprintf("unchanged %s %s", e.name, e.digest))
				}
				entries[e.name] = e.digest
			}
			if err := writePinsFile(pins, entries); err != nil {
				return err
			}
			for _, line := range report {
				fmt.Fprintln(a.stdout, line)
			}
			fmt.Fprintf(a.stdout, "harness %s: plugin %s %s (ABI v%d), profile measured on %s\n", m.Harness, m.Name, m.Version, m.ABIVersion, prof.Measured)
			return nil
		},
	}
	cmd.Flags().StringVar(&profile, "profile", "", "the reviewed harness profile of the plugin (profile.yaml)")
	cmd.Flags().StringVar(&pins, "pins", "", "the pins file to add both digests to (created if missing)")
	cmd.Flags().StringVar(&engineName, "engine", defaultEngine(), "WebAssembly engine the plugin is loaded on to validate it")
	cmd.Flags().BoolVar(&noCache, "no-compile-cache", false, "do not keep compiled plugin code in the user cache directory")
	cmd.Flags().BoolVar(&replace, "replace", false, "replace the module or profile the pins file already pins under the same key (after reviewing the new one)")
	return cmd
}

// writePinsFile writes pins (keys sorted, as encoding/json writes a map) to a temporary file
// beside path and renames it over path: a reader sees the old set or the new one.
func writePinsFile(path string, pins map[string]string) error {
	b, err := json.MarshalIndent(pins, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".pins-*.tmp")
	if err != nil {
		return fmt.Errorf("pins: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("pins: %w", err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("pins: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("pins: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("pins: %w", err)
	}
	return nil
}
