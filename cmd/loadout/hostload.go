package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/builtin"
	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/codecache"
	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/host/policy"
	"github.com/loadout-dev/loadout/host/registry"
	"github.com/loadout-dev/loadout/host/spec"
	"github.com/loadout-dev/loadout/plugins"
)

// hostOptions are the flags that say what a Host is built from; render, serve, plugins and
// conformity share them.
type hostOptions struct {
	policies string // policy directory or OPA bundle (.tar.gz); "" = the embedded policies
	// verifyKey is a file holding the key a --policies bundle's signature must verify with;
	// verifyKeyID and verifyAlg name the key and its algorithm.
	verifyKey, verifyKeyID, verifyAlg string
	// replaceDefaults makes --policies (or the bundle) the whole policy instead of laying it
	// over the embedded defaults.
	replaceDefaults bool
	// bundle, when set, is the policy: the last good bundle of serve's --policy-bundle-url,
	// bundleURL its address.
	bundle    func() *policy.Bundle
	bundleURL string
	plugins   []string // plugin .wasm files, in addition to the built-in ones
	pins      string   // JSON file pinning the --plugin files by name and the --profile files by harness (pins.go)
	profiles  []string // harness profile files (docs/PROFILES.md), each pinned in --pins
	engine    string   // "wazero" or "wasmtime"
	noCache   bool     // do not keep compiled code on disk
	// pool is how many initialized instances each plugin keeps ready off the request path
	// (wazero; serve sets it). 0: instantiate on the request path.
	pool int
}

// engineConfig is what a factory needs to build an engine.
type engineConfig struct {
	cache *codecache.Cache // nil = no on-disk cache
	pool  int
}

// addFlags registers the host flags on fs.
func (o *hostOptions) addFlags(f *pflag.FlagSet) {
	addPolicyFlags(f, o)
	f.StringArrayVar(&o.plugins, "plugin", nil, "renderer plugin .wasm file, added to the built-in ones or replacing the one of its harness (repeatable; each must be pinned in --pins)")
	f.StringVar(&o.pins, "pins", "", `JSON file {"<plugin file name>": "sha256:<hex>", "profile:<harness>": "sha256:<hex>"} pinning every --plugin and --profile file (loadout plugins add writes it)`)
	f.StringArrayVar(&o.profiles, "profile", nil, "reviewed harness profile (profile.yaml) for a --plugin whose harness has none built in, or replacing a built-in one (repeatable; each must be pinned in --pins)")
	f.StringVar(&o.engine, "engine", defaultEngine(), "WebAssembly engine: "+strings.Join(engineNames(), " or "))
	f.BoolVar(&o.noCache, "no-compile-cache", false, "do not keep compiled plugin code in the user cache directory")
}

// engineFactories holds the engines this binary was built with (wasmtime only with -tags
// wasmtime).
var engineFactories = map[string]func(ctx context.Context, cfg engineConfig) (engine.Engine, error){}

// defaultEngine is wasmtime when this binary has it (built with cgo and -tags wasmtime, as
// ./build.sh does where a C compiler is available) and wazero otherwise: wazero validates every
// function body of a module before it looks in its compile cache, which keeps a pure-Go render
// about twice as slow as a Wasmtime one (docs/PERFORMANCE.md).
func defaultEngine() string {
	if _, ok := engineFactories["wasmtime"]; ok {
		return "wasmtime"
	}
	return "wazero"
}

func engineNames() []string {
	names := []string{"wazero"}
	if _, ok := engineFactories["wasmtime"]; ok {
		names = append(names, "wasmtime")
	}
	return names
}

// newEngine builds the named engine with its compile cache (compileCache); a cache that cannot
// be used is logged as a warning and the engine compiles in memory only.
func (o *hostOptions) newEngine(ctx context.Context, name string, log *slog.Logger) (engine.Engine, error) {
	factory, err := engineFactory(name)
	if err != nil {
		return nil, err
	}
	cache, err := o.compileCache(name, log)
	if err != nil {
		warnNoCache(log, err)
	}
	return factory(ctx, engineConfig{cache: cache, pool: o.pool})
}

// engineFactory returns the factory of the named engine.
func engineFactory(name string) (func(ctx context.Context, cfg engineConfig) (engine.Engine, error), error) {
	factory, ok := engineFactories[name]
	if !ok {
		if name == "wasmtime" {
			return nil, usagef("--engine wasmtime: this binary was built without it (build with: go build -tags wasmtime ./cmd/loadout, cgo enabled)")
		}
		return nil, usagef("--engine: %q is not one of %s", name, strings.Join(engineNames(), ", "))
	}
	return factory, nil
}

// warnNoCache logs why compiled code is not kept on disk.
func warnNoCache(log *slog.Logger, err error) {
	log.Warn("compiled plugin code is not cached on disk: every plugin is compiled again", "error", err)
}

// compileCache opens the named engine's compile cache, loadout/compiled/<engine> under the user
// cache directory, and trims it. Its entries are authenticated with the key in
// loadout/compile-cache.key under the user config directory, created on first use, so a cache
// directory restored or edited without that key holds nothing loadout runs (codecache). It
// returns nil with --no-compile-cache or without a user cache or config directory (no HOME),
// and nil with the reason when the directory or the key cannot be used (not private to the
// user, say).
func (o *hostOptions) compileCache(name string, log *slog.Logger) (*codecache.Cache, error) {
	if o.noCache {
		return nil, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return nil, nil
	}
	config, err := os.UserConfigDir()
	if err != nil {
		return nil, nil
	}
	c, err := codecache.Open(filepath.Join(base, "loadout", "compiled", name), filepath.Join(config, "loadout", "compile-cache.key"), log)
	if err != nil {
		return nil, err
	}
	trimCompileCache(c.Dir(), time.Now())
	return c, nil
}

// artifact is one plugin the options name: a built-in one (harness known from its build-time
// manifest, bytes read only if it is loaded) or a --plugin file (harness known once loaded).
type artifact struct {
	builtin *builtin.Artifact
	art     registry.Artifact // Wasm unset for a built-in one until it is loaded
	source  string            // "builtin" or the --plugin path
}

// artifacts lists the plugin artifacts: the built-in ones, then each --plugin file with its pin.
func (o *hostOptions) artifacts() ([]artifact, error) {
	var arts []artifact
	bi, err := builtin.Artifacts()
	if err != nil && !(errors.Is(err, builtin.ErrNotBuilt) && len(o.plugins) > 0) {
		return nil, err
	}
	for i := range bi {
		b := &bi[i]
		arts = append(arts, artifact{builtin: b, source: "builtin",
			art: registry.Artifact{Name: b.Name, SHA256: b.SHA256, Harness: b.Manifest.Harness, Manifest: &b.Manifest}})
	}
	if len(o.plugins) == 0 {
		return arts, nil
	}
	pins, err := o.readPins()
	if err != nil {
		return nil, err
	}
	for _, p := range o.plugins {
		wasm, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("plugin: %w", err)
		}
		pin, ok := pins[filepath.Base(p)]
		if !ok {
			return nil, usagef("plugin %s is not pinned: add %q: %q to the --pins file (after checking that digest against a trusted source)", p, filepath.Base(p), registry.Digest(wasm))
		}
		arts = append(arts, artifact{art: registry.Artifact{Name: filepath.Base(p), Wasm: wasm, SHA256: pin}, source: p})
	}
	return arts, nil
}

// selectArtifacts returns the artifacts a command rendering only the harnesses in want needs:
// every --plugin file (its harness is known only once it is loaded, and it may replace a
// built-in one) and the built-in plugins of those harnesses. With want empty, or when a wanted
// harness has no built-in plugin (a --plugin file may render it; if none does, the error lists
// every harness there is), it returns them all.
func selectArtifacts(arts []artifact, want []string) []artifact {
	if len(want) == 0 {
		return arts
	}
	have := map[string]bool{}
	for _, a := range arts {
		if a.builtin != nil {
			have[a.art.Harness] = true
		}
	}
	for _, h := range want {
		if !have[h] {
			return arts
		}
	}
	var out []artifact
	for _, a := range arts {
		if a.builtin == nil || slices.Contains(want, a.art.Harness) {
			out = append(out, a)
		}
	}
	return out
}

func (o *hostOptions) readPins() (map[string]string, error) {
	if o.pins == "" {
		return nil, usagef("--plugin needs --pins FILE: every plugin file must be pinned by its sha256")
	}
	return loadPins(o.pins)
}

// bundleOptions are the verification flags as the policy package takes them; the key is
// read from its file.
func (o *hostOptions) bundleOptions() (policy.BundleOptions, error) {
	opts := policy.BundleOptions{KeyID: o.verifyKeyID, Algorithm: o.verifyAlg}
	if o.verifyKey != "" {
		key, err := os.ReadFile(o.verifyKey)
		if err != nil {
			return opts, usagef("--verification-key: %v", err)
		}
		opts.VerificationKey = string(key)
	}
	return opts, nil
}

// addPolicyFlags registers the flags that say where the policy comes from.
func addPolicyFlags(f *pflag.FlagSet, o *hostOptions) {
	f.StringVar(&o.policies, "policies", "", "policy directory or OPA bundle file (.tar.gz) laid over the embedded default policies: their rules stay, its rules are added, its data overrides theirs by path")
	addReplaceFlag(f, o)
	addVerifyFlags(f, o)
}

// addReplaceFlag registers --replace-default-policies.
func addReplaceFlag(f *pflag.FlagSet, o *hostOptions) {
	f.BoolVar(&o.replaceDefaults, "replace-default-policies", false, "make --policies the whole policy: the embedded default policies and every protection they give are left out")
}

// addVerifyFlags registers the bundle verification flags.
func addVerifyFlags(f *pflag.FlagSet, o *hostOptions) {
	f.StringVar(&o.verifyKey, "verification-key", "", "file with the public key (PEM) or HMAC secret a --policies bundle must be signed with")
	f.StringVar(&o.verifyKeyID, "verification-key-id", "default", "key id of --verification-key in the bundle's signature")
	f.StringVar(&o.verifyAlg, "verification-alg", "RS256", "signing algorithm of --verification-key (RS256, ES256, HS256, …)")
}

// policyFS returns the --policies directory as an fs.FS, or nil for the embedded policies.
func (o *hostOptions) policyFS() (fs.FS, error) {
	if o.policies == "" {
		return nil, nil
	}
	fi, err := os.Stat(o.policies)
	if err != nil {
		return nil, fmt.Errorf("policies: %w", err)
	}
	if !fi.IsDir() {
		return nil, usagef("--policies: %s is not a directory", o.policies)
	}
	return os.DirFS(o.policies), nil
}

// policyConfig says what the policy engine is built from: serve's polled bundle, the
// --policies directory or, for a .tar.gz, the bundle it holds (verified with
// --verification-key when given), laid over the embedded defaults unless
// --replace-default-policies; neither: the embedded defaults alone.
func (o *hostOptions) policyConfig(logger *slog.Logger) (policy.Config, error) {
	cfg := policy.Config{ReplaceDefaults: o.replaceDefaults}
	if o.replaceDefaults && o.policies == "" && o.bundle == nil {
		return cfg, usagef("--replace-default-policies: give the policy that replaces the defaults with --policies")
	}
	if o.bundle != nil {
		cfg.Bundle, cfg.Name = o.bundle(), o.bundleURL
		return cfg, nil
	}
	cfg.Name = o.policies
	if !policy.IsBundlePath(o.policies) {
		if o.verifyKey != "" {
			return cfg, usagef("--verification-key: only a bundle (.tar.gz) given to --policies is signed")
		}
		pfs, err := o.policyFS()
		cfg.FS = pfs
		return cfg, err
	}
	opts, err := o.bundleOptions()
	if err != nil {
		return cfg, err
	}
	b, err := policy.LoadBundle(o.policies, opts)
	if err != nil {
		return cfg, fmt.Errorf("--policies: %w", err)
	}
	if opts.VerificationKey == "" {
		logger.Warn("the policy bundle is not verified: anyone who can write it decides the policy; sign it (opa build --signing-key) and give --verification-key", "bundle", o.policies)
	}
	cfg.Bundle = b
	return cfg, nil
}

// openHost builds a Host from the options: policies compiled, engine started, plugins verified
// against their pins, compiled and their manifests read. With harnesses set, only the plugins
// those harnesses need are loaded (selectArtifacts); otherwise every plugin is. The Host owns
// the engine and the plugins (closing it closes them).
func (a *app) openHost(ctx context.Context, o hostOptions, harnesses ...string) (_ *host.Host, err error) {
	pcfg, err := o.policyConfig(a.logger)
	if err != nil {
		return nil, err
	}
	pcfg.Logger = a.logger
	arts, err := o.artifacts()
	if err != nil {
		return nil, err
	}
	arts = selectArtifacts(arts, harnesses)
	eng, err := o.newEngine(ctx, o.engine, a.logger)
	if err != nil {
		return nil, err
	}
	loaded := make([]*registry.Plugin, len(arts)) // by index of arts; nil until loaded
	closeAll := func(ctx context.Context) error {
		var errs []error
		for _, p := range loaded {
			if p != nil {
				errs = append(errs, p.Close(ctx))
			}
		}
		errs = append(errs, eng.Close(ctx))
		return errors.Join(errs...)
	}
	defer func() {
		if err != nil {
			_ = closeAll(ctx)
		}
	}()
	// Without --plugin files the harnesses rendered are known now, and so are the only
	// profiles needed; a --plugin file's harness is known only once it is loaded.
	var wantProfiles []string
	if len(o.plugins) == 0 {
		wantProfiles = harnesses
	}
	profiles, err := o.loadProfiles(wantProfiles)
	if err != nil {
		return nil, err
	}
	// Compiling a module is CPU-bound and one module's work depends neither on another's nor
	// on the policy's, so the plugins load concurrently, one per CPU, while the policy compiles
	// (docs/PERFORMANCE.md: what each saves). The --plugin files load first: each replaces the
	// built-in plugin of its harness, which is then neither read nor compiled. The error
	// reported is the policy's, then the first artifact's, in order.
	type policyResult struct {
		e   *policy.Engine
		err error
	}
	polc := make(chan policyResult, 1)
	go func() {
		pe, err := policy.New(ctx, pcfg)
		polc <- policyResult{pe, err}
	}()
	loadAll := func(idx []int) []error {
		errs := make([]error, len(idx))
		var wg sync.WaitGroup
		sem := make(chan struct{}, runtime.GOMAXPROCS(0))
		for k, i := range idx {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				loaded[i], errs[k] = loadArtifact(ctx, eng, arts[i])
			}()
		}
		wg.Wait()
		return errs
	}
	var files, builtins []int
	for i, art := range arts {
		if art.builtin != nil {
			builtins = append(builtins, i)
		} else {
			files = append(files, i)
		}
	}
	errs := loadAll(files)
	replaced := map[string]bool{}
	for _, i := range files {
		if loaded[i] != nil {
			replaced[loaded[i].Manifest().Harness] = true
		}
	}
	builtins = slices.DeleteFunc(builtins, func(i int) bool { return replaced[arts[i].art.Harness] })
	errs = append(errs, loadAll(builtins)...)
	pol := <-polc
	if pol.err != nil {
		return nil, fmt.Errorf("load policies: %w", pol.err)
	}
	pe := pol.e
	for _, e := range errs {
		if e != nil {
			return nil, e
		}
	}
	cfg := host.Config{Policy: pe, Logger: a.logger, OnClose: closeAll}
	for i, art := range arts {
		p := loaded[i]
		if p == nil { // a built-in plugin a --plugin file replaced
			continue
		}
		m := p.Manifest()
		cfg.Plugins = append(cfg.Plugins, host.LoadedPlugin{Plugin: p, Info: host.PluginInfo{
			Name: m.Name, Version: m.Version, ABIVersion: m.ABIVersion, Harness: m.Harness,
			SHA256: p.Digest(), Transports: m.Transports, NativeSkills: m.NativeSkills, Roots: m.Roots,
			Source: art.source, Engine: eng.Name(),
		}, Profile: profiles[m.Harness]})
	}
	return host.New(ctx, cfg)
}

// loadArtifact verifies and compiles one plugin artifact, reading a built-in one's bytes first.
func loadArtifact(ctx context.Context, eng engine.Engine, art artifact) (*registry.Plugin, error) {
	if art.builtin != nil {
		wasm, err := art.builtin.Wasm()
		if err != nil {
			return nil, fmt.Errorf("built-in plugin %s: %w", art.art.Name, err)
		}
		art.art.Wasm = wasm
	}
	p, err := registry.Load(ctx, eng, art.art)
	if err != nil {
		return nil, &pluginError{fmt.Errorf("plugin %s: %w", art.art.Name, err)}
	}
	return p, nil
}

// loadProfiles returns the reviewed profiles by harness: the built-in renderers' (embedded,
// builtinProfiles; with want set, only those harnesses'), replaced by each --profile file,
// whose bytes must match a profile pin of --pins (pinnedProfilesByHarness).
func (o *hostOptions) loadProfiles(want []string) (plan.Profiles, error) {
	profiles, err := builtinProfiles(want)
	if err != nil {
		return nil, err
	}
	if len(o.profiles) == 0 {
		return profiles, nil
	}
	pins, err := o.readPins()
	if err != nil {
		return nil, err
	}
	dropIns, err := pinnedProfilesByHarness(pins, o.pins, o.profiles)
	if err != nil {
		return nil, err
	}
	maps.Copy(profiles, dropIns)
	return profiles, nil
}

// builtinProfiles returns the built-in renderers' profiles by harness: those of the harnesses
// in want when each has an embedded module, else all of them. The profile of every embedded
// module is checked against the pin ./build.sh wrote beside the module
// (builtin.Artifact.Profile): a profile changed after its module was built and pinned is
// refused, not read. A harness whose module is not embedded keeps its compiled-in profile
// (plugins.Profiles), for a --plugin of that harness.
func builtinProfiles(want []string) (plan.Profiles, error) {
	arts, err := builtin.Artifacts()
	if err != nil && !errors.Is(err, builtin.ErrNotBuilt) {
		return nil, err
	}
	var wanted []builtin.Artifact
	for _, a := range arts {
		if slices.Contains(want, a.Manifest.Harness) {
			wanted = append(wanted, a)
		}
	}
	if len(want) > 0 && len(wanted) == len(want) {
		return builtin.Profiles(wanted)
	}
	profiles, err := plan.LoadProfiles(plugins.Profiles)
	if err != nil {
		return nil, fmt.Errorf("built-in profiles: %w", err)
	}
	pinned, err := builtin.Profiles(arts)
	if err != nil {
		return nil, err
	}
	for h, p := range pinned {
		profiles[h] = p
	}
	return profiles, nil
}

// envPairs turns an environment ("NAME=value" entries) into ordered pairs, skipping malformed
// entries.
func envPairs(environ []string) []spec.Pair {
	pairs := make([]spec.Pair, 0, len(environ))
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		pairs = append(pairs, spec.Pair{Name: name, Value: value})
	}
	return pairs
}

// splitHarnesses splits a --harness value on commas, dropping empty items and repeats, in the
// order given.
func splitHarnesses(flag string) []string {
	var out []string
	for _, h := range strings.Split(flag, ",") {
		if h = strings.TrimSpace(h); h != "" && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// wantedHarnesses returns the harnesses a render will ask for, so that only their plugins are
// loaded: the --harness ones, else the request's "harness" field. The request is only peeked
// at here (host.Render decodes it strictly); nil (load every plugin) when it names none.
func wantedHarnesses(flag []string, body []byte) []string {
	if len(flag) > 0 {
		return flag
	}
	var peek struct {
		Harness string `json:"harness"`
	}
	if json.Unmarshal(body, &peek) != nil || peek.Harness == "" {
		return nil
	}
	return []string{peek.Harness}
}
