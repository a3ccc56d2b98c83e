package hostile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/plan"
)

// Faithful names the run without an attack in a Result: the plugin's own plan, which must pass.
const Faithful = "faithful"

// Modes: an isolated run and an ambient-auth one (where skills may be folded into the prompt).
const (
	ModeIsolated = "isolated"
	ModeAmbient  = "ambient"
)

// Result statuses.
const (
	StatusPassed        = "passed"         // the faithful plan passed the check and was written
	StatusRefused       = "refused"        // the attack was refused by its rule, nothing written
	StatusNotApplicable = "not_applicable" // the harness has nothing the attack tampers with
	StatusFailed        = "FAIL"
)

// Loaded is one plugin loaded on one engine.
type Loaded struct {
	// Plugin is the loaded plugin; it must be safe for concurrent use.
	Plugin host.Plugin
	// Engine names the engine that runs it ("wazero", "wasmtime").
	Engine string
	// Source says where the plugin came from; informational.
	Source string
}

// Config configures Run.
type Config struct {
	// Plugins are the (plugin, engine) pairs to attack; every plugin renders Profile's harness.
	Plugins []Loaded
	// Profile is the reviewed profile of the plugins' harness: the host checks every plan
	// through it, and the attacks read what they need from it.
	Profile *plan.Profile
	// Parallel bounds the renders in flight (default GOMAXPROCS).
	Parallel int
	// TempDir is where each render's roots are made (default os.TempDir()).
	TempDir string
	// Logger receives the pipeline's logs; nil discards them.
	Logger *slog.Logger
}

// Result is one render of the suite: the faithful plan or one attack, on one engine, in one
// mode.
type Result struct {
	Attack  string `json:"attack"`
	Harness string `json:"harness"`
	Engine  string `json:"engine"`
	Mode    string `json:"mode"`
	// Rule is the rule of host/plan that must refuse the attack; empty for the faithful plan
	// and an attack that does not apply.
	Rule   string `json:"rule,omitempty"`
	Status string `json:"result"`
	OK     bool   `json:"ok"`
	// Reason says why a run failed, or why an attack does not apply.
	Reason string `json:"reason,omitempty"`
}

// Report is the outcome of Run.
type Report struct {
	Results []Result
}

// OK reports whether every attack that applies was refused by its rule and every faithful plan
// passed.
func (r *Report) OK() bool {
	for _, res := range r.Results {
		if !res.OK {
			return false
		}
	}
	return len(r.Results) > 0
}

// Failed returns the failed results, in order.
func (r *Report) Failed() []Result {
	var out []Result
	for _, res := range r.Results {
		if !res.OK {
			out = append(out, res)
		}
	}
	return out
}

// Run renders Request through the whole pipeline (the embedded default policies, the plan
// check, the all-or-nothing write into fresh roots) with every target's plugin wrapped by Wrap,
// in an isolated and an ambient-auth run: once faithfully, which must pass and write the
// profile's config file, and once per attack that applies (Attack.Rule), which must fail as a
// plugin failure (exit 4) whose violations include the attack's rule, with nothing written.
// Results come in plugin order, isolated before ambient, the faithful run first, then the
// attacks by name. Run owns nothing it is given; it is safe to call from several goroutines.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Profile == nil || len(cfg.Plugins) == 0 {
		return nil, errors.New("hostile: a profile and at least one plugin are required")
	}
	parallel := cfg.Parallel
	if parallel <= 0 {
		parallel = runtime.GOMAXPROCS(0)
	}
	attacks := Attacks()
	type job struct {
		h    *host.Host
		mode string
		a    *Attack // nil: faithful
		slot int
	}
	var jobs []job
	var results []Result
	for _, tg := range cfg.Plugins {
		m := tg.Plugin.Manifest()
		if m.Harness != cfg.Profile.Harness {
			return nil, fmt.Errorf("hostile: plugin %s renders harness %q, the profile is %q's", tg.Source, m.Harness, cfg.Profile.Harness)
		}
		h, err := host.New(ctx, host.Config{
			Plugins: []host.LoadedPlugin{{Plugin: Wrap(tg.Plugin, cfg.Profile), Profile: cfg.Profile,
				Info: host.PluginInfo{Name: m.Name, Version: m.Version, Harness: m.Harness, Source: tg.Source, Engine: tg.Engine}}},
			Logger: cfg.Logger,
		})
		if err != nil {
			return nil, err
		}
		defer h.Close(context.WithoutCancel(ctx))
		for _, mode := range []string{ModeIsolated, ModeAmbient} {
			base := Result{Harness: m.Harness, Engine: tg.Engine, Mode: mode}
			r := base
			r.Attack = Faithful
			jobs = append(jobs, job{h: h, mode: mode, slot: len(results)})
			results = append(results, r)
			t := Target{Profile: cfg.Profile, Manifest: m, Ambient: mode == ModeAmbient}
			for i := range attacks {
				r := base
				r.Attack = attacks[i].Name
				if r.Rule = attacks[i].Rule(t); r.Rule == "" {
					r.Status, r.OK, r.Reason = StatusNotApplicable, true, notApplicable(attacks[i], t)
					results = append(results, r)
					continue
				}
				jobs = append(jobs, job{h: h, mode: mode, a: &attacks[i], slot: len(results)})
				results = append(results, r)
			}
		}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, parallel)
	for _, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			r := &results[j.slot]
			r.Status, r.Reason = renderOne(ctx, j.h, cfg, j.mode == ModeAmbient, j.a, r.Rule)
			r.OK = r.Status == StatusPassed || r.Status == StatusRefused
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &Report{Results: results}, nil
}

// notApplicable says why a does not apply to t.
func notApplicable(a Attack, t Target) string {
	if !a.applies(t) {
		return "the plugin renders no " + a.needs + " server"
	}
	return "the profile has nothing this attack tampers with"
}

// renderOne renders the hostile request once, faithfully (a nil) or under attack a, into fresh
// roots, and judges the outcome.
func renderOne(ctx context.Context, h *host.Host, cfg Config, ambient bool, a *Attack, rule string) (status, reason string) {
	base, err := os.MkdirTemp(cfg.TempDir, "loadout-hostile-")
	if err != nil {
		return StatusFailed, err.Error()
	}
	defer os.RemoveAll(base)
	roots := host.Roots{Config: filepath.Join(base, "config"), Run: filepath.Join(base, "run"), Checkout: filepath.Join(base, "checkout")}
	if err := os.MkdirAll(filepath.Join(roots.Checkout, ".git"), 0o755); err != nil {
		return StatusFailed, err.Error()
	}
	rctx := ctx
	if a != nil {
		rctx = WithAttack(ctx, a.Name)
	}
	_, err = h.Render(rctx, host.RenderRequest{Body: Request(cfg.Profile.Harness, ambient), Roots: roots})
	written := leftovers(base)
	if a == nil {
		switch {
		case err != nil:
			return StatusFailed, "the faithful plan failed: " + err.Error()
		case !slices.Contains(written, cfg.Profile.Config.Root+":"+cfg.Profile.Config.Path):
			return StatusFailed, "the faithful plan did not write the profile's config " + cfg.Profile.Config.Root + ":" + cfg.Profile.Config.Path
		}
		return StatusPassed, ""
	}
	var ae *ApplyError
	var rules []string
	for _, v := range plan.Violations(err) {
		rules = append(rules, v.Rule)
	}
	switch {
	case err == nil:
		return StatusFailed, "accepted: the tampered plan passed the check and was written"
	case errors.As(err, &ae):
		return StatusFailed, ae.Error()
	case host.Classify(err) != host.ClassPlugin:
		return StatusFailed, "refused, but not as a plugin failure: " + err.Error()
	case !slices.Contains(rules, rule):
		return StatusFailed, fmt.Sprintf("refused by %s, not by %s: %v", strings.Join(rules, ", "), rule, err)
	case len(written) > 0:
		return StatusFailed, "refused, but wrote " + strings.Join(written, ", ")
	}
	return StatusRefused, ""
}

// leftovers lists what a render left under base's roots, files and directories (these with a
// trailing slash), as root:path, the checkout's .git directory aside.
func leftovers(base string) []string {
	var out []string
	for _, root := range []string{"config", "run", "checkout"} {
		dir := filepath.Join(base, root)
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || p == dir {
				return nil
			}
			rel, _ := filepath.Rel(dir, p)
			rel = filepath.ToSlash(rel)
			if root == "checkout" && (rel == ".git" || strings.HasPrefix(rel, ".git/")) {
				return filepath.SkipDir
			}
			if d.IsDir() {
				rel += "/"
			}
			out = append(out, root+":"+rel)
			return nil
		})
	}
	return out
}
