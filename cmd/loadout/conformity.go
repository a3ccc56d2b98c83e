package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/conformity"
	"github.com/loadout-dev/loadout/host/builtin"
	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/registry"
)

func (a *app) conformityCommand() *cobra.Command {
	var (
		cases        []string
		plugins      []string
		profileFiles []string
		pinsFile     string
		engineFlag   string
		format       string
		exceptions   string
		parallel     int
		ho           hostOptions
	)
	cmd := &cobra.Command{
		Use:   "conformity",
		Short: "Run the conformity corpus against renderer plugins on one or every engine",
		Long: `conformity runs every case of the corpus (--cases DIR, repeatable; default: the corpus built
into loadout, conformity/testdata/cases of its source, so it runs from any directory) against
every plugin (--plugin FILE.wasm, repeatable; default the built-in plugins) on the engine
--engine names (wazero, wasmtime, or all). Each case goes through the whole pipeline
into fresh temporary directories; the run checks the case's expectations, the invariants every
plugin must keep (no dropped server or skill in the output, no secret outside a secret file,
paths under declared roots, identical output across runs and engines, unsupported transports
as warnings) and every config read back through the plugin's harness profile (--profile for
a harness with no built-in profile), field by field, as the CLI reads it.

A --plugin file is pinned to the sha256 of the bytes read at start, which the report prints:
the bytes certified are the bytes that ran. With --pins PINS.json (as loadout plugins add
writes it) every --plugin and --profile file must match its pin there, checked before anything
runs. Known divergences are listed in --exceptions (default: the built-in corpus's own, or
exceptions.txt next to the first --cases directory, when present).

Exit codes: 0 every case passed, 2 usage error (a file --pins does not pin or that does not
match its pin included; nothing runs), 4 some case failed, 1 internal error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if done, err := a.conformityHostile(cmd); done {
				return err
			}
			if err := checkFormat(format); err != nil {
				return err
			}
			engines := []string{engineFlag}
			if engineFlag == "all" {
				engines = engineNames()
				if len(engines) == 1 {
					fmt.Fprintln(a.stderr, "loadout: --engine all: this binary has wazero only (build with -tags wasmtime for wasmtime too)")
				}
			}
			corpora, ex, err := conformityCorpus(cases, exceptions, cmd.Flags().Changed("exceptions"))
			if err != nil {
				return err
			}
			pfs, err := ho.policyFS()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			arts, dropIns, err := conformityInputs(plugins, profileFiles, pinsFile)
			if err != nil {
				return err
			}
			var targets []conformity.Target
			var closers []func(context.Context) error
			defer func() {
				for i := len(closers) - 1; i >= 0; i-- {
					_ = closers[i](ctx)
				}
			}()
			for _, name := range engines {
				eng, err := ho.newEngine(ctx, name, a.logger)
				if err != nil {
					return err
				}
				closers = append(closers, eng.Close)
				for _, art := range arts {
					tg, closeFn, err := loadTarget(ctx, eng, art)
					if err != nil {
						return err
					}
					closers = append(closers, closeFn)
					targets = append(targets, tg)
				}
			}
			start := time.Now()
			profiles, err := builtinProfiles(nil)
			if err != nil {
				return err
			}
			maps.Copy(profiles, dropIns)
			rep, err := conformity.Run(ctx, conformity.Config{Corpora: corpora, CaseDirs: cases, Targets: targets, Exceptions: ex, Policies: pfs, Parallel: parallel, Profiles: profiles})
			if err != nil {
				return err
			}
			if format == "json" {
				if err := writeConformityJSON(a, rep, arts, time.Since(start)); err != nil {
					return err
				}
			} else {
				writeConformityText(a, rep, arts, time.Since(start))
			}
			if !rep.OK() {
				return &pluginError{fmt.Errorf("conformity: %d of %d case runs failed", len(rep.Failed()), len(rep.Results))}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&cases, "cases", nil, "directory of case files (repeatable; default: the corpus built into loadout)")
	f.StringArrayVar(&plugins, "plugin", nil, "plugin .wasm file to certify (repeatable; default: the built-in plugins)")
	f.StringArrayVar(&profileFiles, "profile", nil, "the profile.yaml of a --plugin's harness (repeatable; docs/PROFILES.md); a plugin whose harness has no profile is refused")
	f.StringVar(&pinsFile, "pins", "", "pins file (loadout plugins add) every --plugin and --profile file must match, checked before anything runs")
	f.StringVar(&engineFlag, "engine", defaultEngine(), "engine: wazero, wasmtime (with -tags wasmtime) or all (default: the one render and serve use)")
	f.StringVar(&format, "format", "text", "output format: text or json")
	f.StringVar(&exceptions, "exceptions", "", "exceptions file of known divergences (<harness>/<case>: <reason> lines)")
	f.IntVar(&parallel, "parallel", 0, "case runs in flight (default GOMAXPROCS)")
	f.StringVar(&ho.policies, "policies", "", "policy directory laid over the embedded default policies (default: the defaults alone)")
	f.BoolVar(&ho.noCache, "no-compile-cache", false, "do not keep compiled plugin code in the user cache directory")
	addHostileFlags(cmd)
	return cmd
}

// conformityArtifacts lists the plugins to certify: each --plugin file pinned to the digest of
// its bytes, or the built-in plugins with their embedded pins.
func conformityArtifacts(files []string) ([]registry.Artifact, error) {
	if len(files) == 0 {
		bi, err := builtin.Artifacts()
		if err != nil {
			if errors.Is(err, builtin.ErrNotBuilt) {
				return nil, usagef("no built-in plugins in this binary (run ./build.sh), and no --plugin given")
			}
			return nil, err
		}
		var arts []registry.Artifact
		for _, b := range bi {
			wasm, err := b.Wasm()
			if err != nil {
				return nil, fmt.Errorf("built-in plugin %s: %w", b.Name, err)
			}
			arts = append(arts, registry.Artifact{Name: b.Name, Wasm: wasm, SHA256: b.SHA256, Harness: b.Manifest.Harness})
		}
		return arts, nil
	}
	var arts []registry.Artifact
	for _, p := range files {
		wasm, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("plugin: %w", err)
		}
		arts = append(arts, registry.Artifact{Name: p, Wasm: wasm, SHA256: registry.Digest(wasm)})
	}
	return arts, nil
}

// loadTarget compiles one artifact on eng.
func loadTarget(ctx context.Context, eng engine.Engine, art registry.Artifact) (conformity.Target, func(context.Context) error, error) {
	p, err := registry.Load(ctx, eng, art)
	if err != nil {
		return conformity.Target{}, nil, &pluginError{fmt.Errorf("plugin %s on %s: %w", art.Name, eng.Name(), err)}
	}
	return conformity.Target{Plugin: p, Engine: eng.Name(), Source: art.Name}, p.Close, nil
}

func writeConformityText(a *app, rep *conformity.Report, arts []registry.Artifact, took time.Duration) {
	for _, art := range arts {
		fmt.Fprintf(a.stdout, "plugin %s %s\n", art.Name, art.SHA256)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CASE\tHARNESS\tENGINE\tRESULT\tREASON")
	failed, excepted := 0, 0
	for _, r := range rep.Results {
		status, reason := "ok", ""
		switch {
		case !r.OK:
			status, reason = "FAIL", r.Reason()
			failed++
		case r.Exception != "":
			status, reason = "ok", "exception: "+r.Exception
			excepted++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.File, r.Harness, r.Engine, status, oneLine(reason))
	}
	_ = tw.Flush()
	fmt.Fprintf(a.stdout, "%d case runs: %d passed (%d by exception), %d failed, in %s\n",
		len(rep.Results), len(rep.Results)-failed, excepted, failed, took.Round(time.Millisecond))
}

func writeConformityJSON(a *app, rep *conformity.Report, arts []registry.Artifact, took time.Duration) error {
	type plugin struct {
		File   string `json:"file"`
		SHA256 string `json:"sha256"`
	}
	doc := struct {
		OK         bool                `json:"ok"`
		Plugins    []plugin            `json:"plugins"`
		Results    []conformity.Result `json:"results"`
		DurationMS int64               `json:"durationMs"`
	}{OK: rep.OK(), Results: rep.Results, DurationMS: took.Milliseconds()}
	for _, art := range arts {
		doc.Plugins = append(doc.Plugins, plugin{File: art.Name, SHA256: art.SHA256})
	}
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// oneLine keeps the first line of s, for a table cell.
func oneLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i] + " …"
		}
	}
	return s
}
