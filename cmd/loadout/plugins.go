package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/host/engine/codecache"
	"github.com/loadout-dev/loadout/host/registry"
)

func (a *app) pluginsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugins",
		Short: "List, verify and pin the renderer plugins",
	}
	cmd.AddCommand(a.pluginsListCommand(), a.pluginsVerifyCommand(), a.pluginsAddCommand())
	return cmd
}

func (a *app) pluginsListCommand() *cobra.Command {
	var (
		ho     hostOptions
		format string
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the loaded plugins: name, version, ABI, harness, sha256, transports",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			h, err := a.openHost(cmd.Context(), ho)
			if err != nil {
				return classify(err)
			}
			defer h.Close(context.WithoutCancel(cmd.Context()))
			infos := h.Plugins()
			if format == "json" {
				return writeJSON(a.stdout, infos)
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%-10s %-16s %-8s %-4s %-15s %-10s %s\n", "HARNESS", "NAME", "VERSION", "ABI", "TRANSPORTS", "SOURCE", "SHA256")
			for _, p := range infos {
				fmt.Fprintf(&b, "%-10s %-16s %-8s v%-3d %-15s %-10s %s\n", p.Harness, p.Name, p.Version, p.ABIVersion, strings.Join(p.Transports, ","), p.Source, p.SHA256)
			}
			_, err = a.stdout.Write([]byte(b.String()))
			return err
		},
	}
	ho.addFlags(cmd.Flags())
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	return cmd
}

func (a *app) pluginsVerifyCommand() *cobra.Command {
	var ho hostOptions
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check the compiled code cache, and every plugin against its sha256 pin, then compile it and validate its manifest",
		Long: `verify first checks every entry of the engine's compiled code cache against the cache's
key, removing each one that fails (it would never be run). Then it checks each plugin (the
built-in ones and every --plugin file) against its sha256 pin before compiling anything,
compiles it on the chosen engine and validates its manifest and ABI. It prints one line per
plugin and per failing cache entry, and exits 4 if any fails.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			arts, err := ho.artifacts()
			if err != nil {
				return classify(err)
			}
			factory, err := engineFactory(ho.engine)
			if err != nil {
				return err
			}
			var failed []error
			cache, err := ho.compileCache(ho.engine, a.logger)
			switch {
			case errors.Is(err, codecache.ErrUnsafe):
				failed = append(failed, err)
				fmt.Fprintf(a.stdout, "FAIL compiled code cache: %v\n", err)
			case err != nil:
				warnNoCache(a.logger, err)
			case cache != nil:
				ok, bad, err := cache.Check()
				if err != nil {
					return fmt.Errorf("compiled code cache %s: %w", cache.Dir(), err)
				}
				for _, b := range bad {
					failed = append(failed, b.Err)
					fmt.Fprintf(a.stdout, "FAIL compiled %s: %v (removed)\n", filepath.Join(cache.Dir(), b.Name), b.Err)
				}
				fmt.Fprintf(a.stdout, "ok   compiled code: %d entries authenticated in %s\n", ok, cache.Dir())
			}
			eng, err := factory(cmd.Context(), engineConfig{cache: cache})
			if err != nil {
				return err
			}
			defer eng.Close(context.WithoutCancel(cmd.Context()))
			for _, a0 := range arts {
				art, src := a0.art, a0.source
				if a0.builtin != nil {
					if art.Wasm, err = a0.builtin.Wasm(); err != nil {
						return err
					}
				}
				// Load checks the pin before anything is compiled.
				p, err := registry.Load(cmd.Context(), eng, art)
				if err != nil {
					failed = append(failed, fmt.Errorf("%s: %w", src, err))
					fmt.Fprintf(a.stdout, "FAIL %s (%s): %v\n", art.Name, src, err)
					continue
				}
				m := p.Manifest()
				fmt.Fprintf(a.stdout, "ok   %s (%s) %s %s harness=%s abi=v%d on %s\n", art.Name, src, m.Name, art.SHA256, m.Harness, m.ABIVersion, eng.Name())
				_ = p.Close(cmd.Context())
			}
			if len(failed) > 0 {
				return &pluginError{errors.Join(failed...)}
			}
			return nil
		},
	}
	ho.addFlags(cmd.Flags())
	return cmd
}
