// Package conformity runs the conformity corpus (conformity/testdata/cases, format in the
// corpus README) against renderer plugins: every case × every target, where a target is one
// plugin on one engine (wazero, wasmtime, or natively through the sdk's wire path). For each
// case and target it sends the case's request through the whole pipeline (host.Prepare and
// host.Execute with real writes into fresh temporary roots), reads back everything the run
// produced — every file under the roots, args, env, prompt, warnings — and checks:
//
//   - the case's expectations (rejected, servers, skills, resources, redaction set, spawn env,
//     Claude's --allowedTools MCP rules, Codex's [mcp_servers.<id>] tables);
//   - invariants that hold for ANY plugin, without knowing its format: a dropped server's
//     command and url and a dropped skill's instructions appear nowhere; every kept server id
//     and skill name appears; no redaction string appears outside a file marked secret; every
//     written path is local and under a root the manifest declares; the output is identical
//     across two runs (and across engines: see Report); a server whose transport the manifest
//     does not list comes back as a warning naming it;
//   - for every plugin, its harness config and every SKILL.md read back through the harness's
//     reviewed profile (file, format, key meanings, value syntax, spawn wrapper, tool rules,
//     skills directory) and compared with the vetted request field by field.
//
// Known divergences are listed in an exceptions file (<harness>/<case>: <reason>); an exception
// whose case passes makes the run fail, so the list cannot go stale.
//
// Run owns nothing it is given: the caller compiles the plugins (on whatever engine) and closes
// them. Run is safe to call from several goroutines; it keeps no state between calls.
package conformity

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"sync"

	"github.com/loadout-dev/loadout/conformity/corpus"
	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/plugins"
)

// Engine names a target whose plugin runs natively, without WebAssembly.
const EngineNative = "native"

// Target is one plugin on one engine.
type Target struct {
	// Plugin is the loaded plugin; it must be safe for concurrent use.
	Plugin host.Plugin
	// Engine names what runs it: "wazero", "wasmtime" or EngineNative.
	Engine string
	// Source says where the plugin came from (a file, "builtin", a package); informational.
	Source string
}

// Config configures Run.
type Config struct {
	// CaseDirs are the directories of case files, run in order, after Corpora; with Corpora,
	// at least one.
	CaseDirs []string
	// Corpora are case files held in file systems (Embedded: the built-in corpus), run first.
	Corpora []Corpus
	// Targets are the (plugin, engine) pairs to run every case on; at least one.
	Targets []Target
	// Exceptions are the known divergences (see ParseExceptions); nil: none.
	Exceptions []Exception
	// Policies is the policy tree; nil means the embedded defaults.
	Policies fs.FS
	// Profiles are the reviewed harness profiles the targets' plans are checked through, by
	// harness; nil means the built-in renderers' (plugins.Profiles). A target whose harness
	// has none is refused.
	Profiles plan.Profiles
	// Parallel bounds how many case runs are in flight; 0 means GOMAXPROCS.
	Parallel int
	// TempDir is where each run's roots are created; "" means os.TempDir().
	TempDir string
}

// Result is the outcome of one case on one target.
type Result struct {
	Dir     string `json:"dir"`
	Case    string `json:"case"` // the case's name (its file name without NNN- and .json)
	File    string `json:"file"`
	Harness string `json:"harness"`
	Engine  string `json:"engine"`
	Plugin  string `json:"plugin"` // manifest name
	// OK is true when every check passed, or when the case failed and an exception covers it.
	OK bool `json:"ok"`
	// Failures lists every check that failed, in check order.
	Failures []string `json:"failures"`
	// Exception is the reason of the exception that covers this case, when one does.
	Exception string `json:"exception,omitempty"`
	// Digest identifies the run's whole output (files, args, env, prompt, warnings, with the
	// root directories replaced by their names); equal digests mean byte-identical output.
	Digest string `json:"digest"`
}

// Reason is the first failure, or "".
func (r Result) Reason() string {
	if len(r.Failures) == 0 {
		return ""
	}
	return r.Failures[0]
}

// Report is the outcome of a Run: one Result per case and target, in case order then target
// order.
type Report struct {
	Results []Result `json:"results"`
}

// OK reports whether every result passed.
func (r *Report) OK() bool {
	for _, res := range r.Results {
		if !res.OK {
			return false
		}
	}
	return len(r.Results) > 0
}

// Failed returns the results that did not pass.
func (r *Report) Failed() []Result {
	var out []Result
	for _, res := range r.Results {
		if !res.OK {
			out = append(out, res)
		}
	}
	return out
}

// Run runs every case of cfg.CaseDirs on every target and returns the report. Each case runs
// twice per target (the determinism check), in parallel up to cfg.Parallel; targets share a Host
// where their harnesses differ, so policies compile once per engine. Run returns an error only
// when the run itself cannot proceed (no case, a case directory that does not load, policies
// that do not compile); a case that fails is a Result, not an error.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if len(cfg.CaseDirs) == 0 && len(cfg.Corpora) == 0 {
		return nil, fmt.Errorf("conformity: no case directory")
	}
	if len(cfg.Targets) == 0 {
		return nil, fmt.Errorf("conformity: no target")
	}
	type dirCase struct {
		dir string
		c   corpus.Case
	}
	var cases []dirCase
	for _, cp := range cfg.Corpora {
		cs, err := corpus.LoadFS(cp.FS)
		if err != nil {
			return nil, fmt.Errorf("conformity: %s: %w", cp.Name, err)
		}
		for _, c := range cs {
			cases = append(cases, dirCase{cp.Name, c})
		}
	}
	for _, d := range cfg.CaseDirs {
		cs, err := corpus.Load(d)
		if err != nil {
			return nil, fmt.Errorf("conformity: %w", err)
		}
		for _, c := range cs {
			cases = append(cases, dirCase{d, c})
		}
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("conformity: no case in %v", cfg.CaseDirs)
	}
	// One set of hosts per distinct policy data of the cases (most have none).
	hostsByData := map[string][]*host.Host{}
	defer func() {
		for _, hosts := range hostsByData {
			for _, h := range hosts {
				_ = h.Close(ctx)
			}
		}
	}()
	dataKeys := make([]string, len(cases))
	for i, dc := range cases {
		key, err := json.Marshal(dc.c.Context.Data)
		if err != nil {
			return nil, fmt.Errorf("conformity: %s: context.data: %w", dc.c.File, err)
		}
		dataKeys[i] = string(key)
		if _, ok := hostsByData[dataKeys[i]]; ok {
			continue
		}
		hosts, err := newHosts(ctx, cfg, dc.c.Context.Data)
		if err != nil {
			return nil, err
		}
		hostsByData[dataKeys[i]] = hosts
	}
	tmp := cfg.TempDir
	if tmp == "" {
		tmp = os.TempDir()
	}
	par := cfg.Parallel
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}

	results := make([]Result, len(cases)*len(cfg.Targets))
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i, dc := range cases {
		for j, tg := range cfg.Targets {
			k := i*len(cfg.Targets) + j
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				m := tg.Plugin.Manifest()
				r := &runner{ctx: ctx, h: hostsByData[dataKeys[i]][j], manifest: m, c: dc.c, tmp: tmp}
				res := Result{Dir: dc.dir, Case: dc.c.Name, File: dc.c.File, Harness: m.Harness, Engine: tg.Engine, Plugin: m.Name}
				res.Failures, res.Digest = r.run()
				res.Failures = orEmpty(res.Failures)
				res.OK = len(res.Failures) == 0
				results[k] = res
			}()
		}
	}
	wg.Wait()
	engineDiff(results)
	applyExceptions(results, cfg.Exceptions)
	return &Report{Results: results}, nil
}

// newHosts builds one Host per target, sharing a Host between targets of different harnesses on
// the same engine (a Host renders one plugin per harness), so policies compile as few times as
// possible, each deciding with data laid over the policy's (a case's context.data; nil: none).
// The i-th host serves the i-th target.
func newHosts(ctx context.Context, cfg Config, data map[string]any) ([]*host.Host, error) {
	type group struct {
		engine    string
		harnesses map[string]bool
		plugins   []host.LoadedPlugin
		members   []int
	}
	profiles := cfg.Profiles
	if profiles == nil {
		var err error
		if profiles, err = plan.LoadProfiles(plugins.Profiles); err != nil {
			return nil, fmt.Errorf("conformity: built-in profiles: %w", err)
		}
	}
	var groups []*group
	for i, tg := range cfg.Targets {
		if tg.Plugin == nil {
			return nil, fmt.Errorf("conformity: target %d has no plugin", i)
		}
		m := tg.Plugin.Manifest()
		var g *group
		for _, cand := range groups {
			if cand.engine == tg.Engine && !cand.harnesses[m.Harness] {
				g = cand
				break
			}
		}
		if g == nil {
			g = &group{engine: tg.Engine, harnesses: map[string]bool{}}
			groups = append(groups, g)
		}
		g.harnesses[m.Harness] = true
		g.plugins = append(g.plugins, host.LoadedPlugin{Plugin: tg.Plugin, Info: host.PluginInfo{
			Name: m.Name, Version: m.Version, ABIVersion: m.ABIVersion, Harness: m.Harness,
			Transports: m.Transports, NativeSkills: m.NativeSkills, Roots: m.Roots,
			Source: tg.Source, Engine: tg.Engine,
		}, Profile: profiles[m.Harness]})
		g.members = append(g.members, i)
	}
	hosts := make([]*host.Host, len(cfg.Targets))
	var made []*host.Host
	for _, g := range groups {
		h, err := host.New(ctx, host.Config{Policies: cfg.Policies, PolicyData: data, Plugins: g.plugins})
		if err != nil {
			for _, o := range made {
				_ = o.Close(ctx)
			}
			return nil, fmt.Errorf("conformity: %w", err)
		}
		made = append(made, h)
		for _, i := range g.members {
			hosts[i] = h
		}
	}
	return hosts, nil
}

// engineDiff fails every result whose output differs from the same plugin's output for the same
// case on another engine.
func engineDiff(results []Result) {
	type key struct{ dir, file, plugin string }
	groups := map[key][]int{}
	for i, r := range results {
		if r.Digest == "" {
			continue
		}
		k := key{r.Dir, r.File, r.Plugin}
		groups[k] = append(groups[k], i)
	}
	for _, idx := range groups {
		for _, i := range idx {
			for _, j := range idx {
				a, b := &results[i], &results[j]
				if i == j || a.Engine == b.Engine || a.Digest == b.Digest {
					continue
				}
				a.Failures = append(a.Failures, fmt.Sprintf("output differs from the same plugin's on %s (digest %.12s, there %.12s)", b.Engine, a.Digest, b.Digest))
				a.OK = false
			}
		}
	}
}
