package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/conformity/hostile"
	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/host/registry"
)

// hostileHelp is the part of conformity's help that says what --hostile does.
const hostileHelp = `

With --hostile, conformity runs the hostile-plan suite instead of the corpus: every --plugin
(default: the built-in plugins) on every engine renders one hostile request through the whole
pipeline (the embedded default policies, the plan check, the write), isolated and with ambient
auth, once faithfully and once per attack of docs/PROFILES.md §5 that applies to its harness's
profile, the attack tampering with what crosses the plugin boundary as a hostile plugin would.
The faithful plan must pass; each attack must fail as a plugin failure naming the attack's rule,
with nothing written. The attacks read all they know of the harness from its profile (--profile
for a harness with no built-in profile), so a harness loadout has never seen is held to them
with no change to loadout. With --pins, every --plugin and --profile file must match its pin.
Exit codes: 0 every attack that applies refused and every faithful plan passed, 2 usage error,
4 an attack not refused (or refused by another rule) or a faithful plan refused, 1 internal error.`

// addHostileFlags adds --hostile to conformity.
func addHostileFlags(cmd *cobra.Command) {
	cmd.Flags().Bool("hostile", false, "run the hostile-plan suite (docs/PROFILES.md §5) instead of the corpus")
	cmd.Long += hostileHelp
}

// conformityHostile runs conformity --hostile and reports true; without --hostile it reports
// false, and the corpus runs.
func (a *app) conformityHostile(cmd *cobra.Command) (bool, error) {
	if on, _ := cmd.Flags().GetBool("hostile"); !on {
		return false, nil
	}
	return true, a.runHostile(cmd)
}

// runHostile is conformity --hostile.
func (a *app) runHostile(cmd *cobra.Command) error {
	f := cmd.Flags()
	for _, name := range []string{"cases", "exceptions", "policies"} {
		if f.Changed(name) {
			return usagef("--hostile runs its own request on the embedded default policies: --%s does not apply", name)
		}
	}
	format, _ := f.GetString("format")
	if err := checkFormat(format); err != nil {
		return err
	}
	pluginFiles, _ := f.GetStringArray("plugin")
	profileFiles, _ := f.GetStringArray("profile")
	engineFlag, _ := f.GetString("engine")
	parallel, _ := f.GetInt("parallel")
	noCache, _ := f.GetBool("no-compile-cache")
	pins, _ := f.GetString("pins")
	ho := hostOptions{noCache: noCache}

	// The same inputs, pins checked the same way, as the corpus run's.
	arts, dropIns, err := conformityInputs(pluginFiles, profileFiles, pins)
	if err != nil {
		return err
	}
	profiles, err := builtinProfiles(nil)
	if err != nil {
		return err
	}
	maps.Copy(profiles, dropIns)
	sources, err := profileSources(profiles, profileFiles)
	if err != nil {
		return err
	}
	engines := []string{engineFlag}
	if engineFlag == "all" {
		engines = engineNames()
		if len(engines) == 1 {
			fmt.Fprintln(a.stderr, "loadout: --engine all: this binary has wazero only (build with -tags wasmtime for wasmtime too)")
		}
	}
	ctx := cmd.Context()
	var closers []func(context.Context) error
	defer func() {
		for i := len(closers) - 1; i >= 0; i-- {
			_ = closers[i](context.WithoutCancel(ctx))
		}
	}()
	byHarness := map[string][]hostile.Loaded{}
	harnessOf := make([]string, len(arts))
	for _, name := range engines {
		eng, err := ho.newEngine(ctx, name, a.logger)
		if err != nil {
			return err
		}
		closers = append(closers, eng.Close)
		for i, art := range arts {
			p, err := registry.Load(ctx, eng, art)
			if err != nil {
				return &pluginError{fmt.Errorf("plugin %s on %s: %w", art.Name, eng.Name(), err)}
			}
			closers = append(closers, p.Close)
			h := p.Manifest().Harness
			if profiles[h] == nil {
				return usagef("plugin %s renders harness %q, which has no profile: give its reviewed profile with --profile FILE (docs/PROFILES.md)", art.Name, h)
			}
			harnessOf[i] = h
			byHarness[h] = append(byHarness[h], hostile.Loaded{Plugin: p, Engine: eng.Name(), Source: art.Name})
		}
	}
	start := time.Now()
	var results []hostile.Result
	ok := true
	for _, h := range slices.Sorted(maps.Keys(byHarness)) {
		rep, err := hostile.Run(ctx, hostile.Config{Plugins: byHarness[h], Profile: profiles[h], Parallel: parallel, Logger: a.logger})
		if err != nil {
			return err
		}
		results = append(results, rep.Results...)
		ok = ok && rep.OK()
	}
	var used []profileSource
	for _, h := range slices.Sorted(maps.Keys(byHarness)) {
		used = append(used, sources[h])
	}
	if format == "json" {
		if err := writeHostileJSON(a, ok, arts, harnessOf, used, results, time.Since(start)); err != nil {
			return err
		}
	} else {
		writeHostileText(a, arts, harnessOf, used, results, time.Since(start))
	}
	if !ok {
		failed := 0
		for _, r := range results {
			if !r.OK {
				failed++
			}
		}
		return &pluginError{fmt.Errorf("conformity --hostile: %d of %d runs failed", failed, len(results))}
	}
	return nil
}

// profileSource is where a harness's profile came from: a --profile file with the digest of
// its bytes, or the built-in one.
type profileSource struct {
	Harness string `json:"harness"`
	File    string `json:"file"` // "builtin" for an embedded profile
	SHA256  string `json:"sha256,omitempty"`
}

// profileSources says where each profile came from: a --profile file with the digest of its
// bytes (read and checked by conformityInputs), else the built-in one.
func profileSources(profiles plan.Profiles, files []string) (map[string]profileSource, error) {
	sources := map[string]profileSource{}
	for h := range profiles {
		sources[h] = profileSource{Harness: h, File: "builtin"}
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("profile: %w", err)
		}
		p, err := plan.ParseProfile(data)
		if err != nil {
			return nil, usagef("--profile %s: %v", file, err)
		}
		sources[p.Harness] = profileSource{Harness: p.Harness, File: file, SHA256: registry.Digest(data)}
	}
	return sources, nil
}

func hostileCounts(results []hostile.Result) (refused, na, failed, faithful, faithfulOK int) {
	for _, r := range results {
		switch {
		case r.Attack == hostile.Faithful:
			faithful++
			if r.OK {
				faithfulOK++
			} else {
				failed++
			}
		case r.Status == hostile.StatusNotApplicable:
			na++
		case r.OK:
			refused++
		default:
			failed++
		}
	}
	return
}

func writeHostileText(a *app, arts []registry.Artifact, harnessOf []string, profiles []profileSource, results []hostile.Result, took time.Duration) {
	for i, art := range arts {
		fmt.Fprintf(a.stdout, "plugin %s %s (harness %s)\n", art.Name, art.SHA256, harnessOf[i])
	}
	for _, p := range profiles {
		if p.SHA256 == "" {
			fmt.Fprintf(a.stdout, "profile %s: built-in\n", p.Harness)
		} else {
			fmt.Fprintf(a.stdout, "profile %s: %s %s\n", p.Harness, p.File, p.SHA256)
		}
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ATTACK\tHARNESS\tENGINE\tMODE\tRULE\tRESULT\tREASON")
	for _, r := range results {
		rule := r.Rule
		if rule == "" {
			rule = "-"
		}
		reason := r.Reason
		if r.Status == hostile.StatusNotApplicable {
			reason = "" // the JSON output says why
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Attack, r.Harness, r.Engine, r.Mode, rule, r.Status, oneLine(reason))
	}
	_ = tw.Flush()
	refused, na, failed, faithful, faithfulOK := hostileCounts(results)
	fmt.Fprintf(a.stdout, "%d runs: %d attacks refused, %d not applicable, faithful plan passed %d of %d, %d failed, in %s\n",
		len(results), refused, na, faithfulOK, faithful, failed, took.Round(time.Millisecond))
}

func writeHostileJSON(a *app, ok bool, arts []registry.Artifact, harnessOf []string, profiles []profileSource, results []hostile.Result, took time.Duration) error {
	type plugin struct {
		File    string `json:"file"`
		SHA256  string `json:"sha256"`
		Harness string `json:"harness"`
	}
	doc := struct {
		OK         bool             `json:"ok"`
		Plugins    []plugin         `json:"plugins"`
		Profiles   []profileSource  `json:"profiles"`
		Results    []hostile.Result `json:"results"`
		DurationMS int64            `json:"durationMs"`
	}{OK: ok, Profiles: profiles, Results: results, DurationMS: took.Milliseconds()}
	for i, art := range arts {
		doc.Plugins = append(doc.Plugins, plugin{File: art.Name, SHA256: art.SHA256, Harness: harnessOf[i]})
	}
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
