// Package host is the loadout pipeline: parse → policy → vet → render (plugin) → check → write.
//
// A Host is built once by New (policies compiled, plugins loaded) and is safe for concurrent
// use: each Render is independent and keeps no state. The Host owns its policy engine but not
// its plugins' engine: the caller that compiled the plugins closes them.
package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/loadout-dev/loadout/host/exposure"
	"github.com/loadout-dev/loadout/host/materialize"
	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/host/policy"
	"github.com/loadout-dev/loadout/host/redact"
	"github.com/loadout-dev/loadout/host/spec"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// Plugin is a loaded renderer plugin (host/registry's Plugin is one). Implementations are safe
// for concurrent use.
type Plugin interface {
	Manifest() abi.Manifest
	// Render calls the plugin's render export with the request JSON and returns its output.
	Render(ctx context.Context, request []byte) ([]byte, error)
}

// LoadedPlugin is a plugin and what the host reports about it.
type LoadedPlugin struct {
	Plugin Plugin
	Info   PluginInfo
	// Profile is the reviewed profile of the plugin's harness (plan.Profile): every plan the
	// plugin returns is checked through it. New refuses a plugin without one.
	Profile *plan.Profile
}

// Config configures a Host. The zero value of each optional field is documented.
type Config struct {
	// Policies is a team's policy tree, laid over the embedded defaults (policy.Config.FS);
	// nil means the defaults alone.
	Policies fs.FS
	// PolicyBundle, when set, is the team's policy instead of Policies (an OPA bundle), laid
	// over the defaults.
	PolicyBundle *policy.Bundle
	// ReplaceDefaultPolicies makes Policies or PolicyBundle the whole policy, without the
	// defaults underneath (policy.Config.ReplaceDefaults).
	ReplaceDefaultPolicies bool
	// PolicyData, when set, is laid over the policy tree's data (policy.Config.Data).
	PolicyData map[string]any
	// Policy, when set, is the compiled policy instead of Policies and PolicyBundle: a loader
	// that compiled it (policy.New) while its plugins loaded. The Host owns it from then on.
	Policy *policy.Engine
	// Plugins are the renderers, one per harness (a second plugin for a harness is an error).
	Plugins []LoadedPlugin
	// InlineContent sends skill instructions and resource contents to plugins inline instead of
	// as {{loadout.blob.N}} placeholders the host fills in after the check (the default, which
	// keeps large opaque content off the plugin boundary).
	InlineContent bool
	// Limits bound a plan; the zero value means plan's defaults.
	Limits plan.Limits
	// Logger receives pipeline logs; nil discards them. Secret values are never logged.
	Logger *slog.Logger
	// OnClose, when set, runs once when the Host is closed: typically it closes the engine that
	// compiled the plugins, so a Host built by a loader owns everything it uses.
	OnClose func(context.Context) error
}

// Host runs the pipeline. It is safe for concurrent use.
type Host struct {
	policy  *policy.Engine
	plugins map[string]LoadedPlugin // by harness
	cfg     Config
	logger  *slog.Logger

	closeOnce sync.Once
}

// New compiles the policies and indexes the plugins by harness. A policy that does not compile
// is an error: the host must not start without its policy.
func New(ctx context.Context, cfg Config) (*Host, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	pe := cfg.Policy
	if pe == nil {
		var err error
		if pe, err = policy.New(ctx, policy.Config{FS: cfg.Policies, Bundle: cfg.PolicyBundle, ReplaceDefaults: cfg.ReplaceDefaultPolicies, Data: cfg.PolicyData, Logger: logger}); err != nil {
			return nil, fmt.Errorf("load policies: %w", err)
		}
	}
	h := &Host{policy: pe, plugins: map[string]LoadedPlugin{}, cfg: cfg, logger: logger}
	for _, lp := range cfg.Plugins {
		m := lp.Plugin.Manifest()
		if prev, dup := h.plugins[m.Harness]; dup {
			return nil, fmt.Errorf("load plugins: harness %q is rendered by both %s and %s", m.Harness, prev.Info.Source, lp.Info.Source)
		}
		if lp.Profile == nil || lp.Profile.Harness != m.Harness {
			return nil, &UsageError{Msg: fmt.Sprintf("plugin %s renders harness %q, which has no reviewed profile: pin one with --profile FILE (docs/PROFILES.md); a plugin is never run with weaker checks", lp.Info.Source, m.Harness)}
		}
		h.plugins[m.Harness] = lp
	}
	return h, nil
}

// Plugins describes the loaded plugins, ordered by harness.
func (h *Host) Plugins() []PluginInfo {
	out := make([]PluginInfo, 0, len(h.plugins))
	for _, lp := range h.plugins {
		out = append(out, lp.Info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Harness < out[j].Harness })
	return out
}

// Policy is the host's compiled policy.
func (h *Host) Policy() *policy.Engine { return h.policy }

// PolicyRevision is the revision of the policy bundle the host decides with ("" for a
// policy directory).
func (h *Host) PolicyRevision() string { return h.policy.Revision() }

// Harnesses lists the harnesses the host can render, sorted.
func (h *Host) Harnesses() []string {
	out := make([]string, 0, len(h.plugins))
	for k := range h.plugins {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Close releases the host and runs Config.OnClose once. Renders in flight must have finished.
func (h *Host) Close(ctx context.Context) error {
	var err error
	h.closeOnce.Do(func() {
		if h.cfg.OnClose != nil {
			err = h.cfg.OnClose(ctx)
		}
	})
	return err
}

// Prepared is a request that passed parsing and the policy, ready to render.
type Prepared struct {
	Harness string
	Request *spec.Request
	Diags   []spec.Diagnostic
	Vetted  *policy.Vetted
	plugin  LoadedPlugin
}

// Profile is the reviewed profile the prepared request's plan will be checked through.
func (p *Prepared) Profile() *plan.Profile { return p.plugin.Profile }

// Prepare parses and vets one request for the harness it names (or rr.Harness).
func (h *Host) Prepare(ctx context.Context, rr RenderRequest) (*Prepared, error) {
	p, err := h.vet(ctx, rr.Body, rr.HostEnv, rr.Harness, rr.Minter)
	if err != nil {
		return nil, err
	}
	harness, err := pickHarness(p.Request.Harness, rr.Harness)
	if err != nil {
		return nil, &RequestError{Err: err, Secrets: p.Vetted.Redactions()}
	}
	lp, ok := h.plugins[harness]
	if !ok {
		return nil, &RequestError{Err: &UsageError{Msg: fmt.Sprintf("harness %q: no plugin renders it (loaded: %s)", harness, strings.Join(h.Harnesses(), ", "))}, Secrets: p.Vetted.Redactions()}
	}
	p.Harness, p.plugin = harness, lp
	return p, nil
}

// Vet parses one request and has the policy vet it for harness (the request's own when ""),
// without loading a plugin (for `policy eval` and `redact`, which need none). It has no
// Minter: a request whose servers ask for a run token is refused (spec.CodeMintUnsupported).
func (h *Host) Vet(ctx context.Context, body []byte, hostEnv []spec.Pair, harness string) (*Prepared, error) {
	return h.vet(ctx, body, hostEnv, harness, nil)
}

func (h *Host) vet(ctx context.Context, body []byte, hostEnv []spec.Pair, harness string, minter Minter) (*Prepared, error) {
	req, diags, err := spec.Parse(body)
	if err != nil {
		return nil, err // a refusal of the parser quotes no env, header or token value
	}
	if err := mint(ctx, req, minter); err != nil {
		return nil, &RequestError{Err: err, Secrets: policy.KnownRedactions(req, nil)}
	}
	d, err := h.policy.Decide(ctx, req, hostEnv, harness)
	if err != nil {
		return nil, &RequestError{Err: err, Secrets: policy.KnownRedactions(req, nil)}
	}
	h.refuseReserved(req, d, harness)
	refuseUserCommands(req, d)
	v, err := policy.Vet(req, d, hostEnv, policy.VetOptions{ContentByRef: !h.cfg.InlineContent, Exposure: h.exposure(req, harness), Builtin: h.builtin(req, harness)})
	if err != nil {
		return nil, &RequestError{Err: err, Secrets: policy.KnownRedactions(req, d)}
	}
	// A typo that dropped a server is never an empty success, even when the policy is what
	// dropped the rest.
	if v.Empty() {
		if err := spec.RefuseEmpty(diags); err != nil {
			return nil, &RequestError{Err: err, Secrets: v.Redactions()}
		}
	}
	return &Prepared{Request: req, Diags: diags, Vetted: v}, nil
}

// CodeReservedName: the harness refuses to load a server of this name (its profile's
// reservedNames), so the server is refused before anything, the prompt included, names it.
const CodeReservedName = "reserved_name"

// refuseReserved refuses every server whose id the rendering harness's profile reserves, as a
// deny would: the server is reported in dropped and never reaches the plugin. A request whose
// harness has no loaded plugin is left as it is (Prepare refuses it).
func (h *Host) refuseReserved(req *spec.Request, d *policy.Decision, harness string) {
	name, err := pickHarness(req.Harness, harness)
	if err != nil {
		return
	}
	prof := h.plugins[name].Profile
	for i := range req.Servers {
		if i >= len(d.Servers) || !prof.Reserves(req.Servers[i].ID) {
			continue
		}
		sd := &d.Servers[i]
		sd.Allow = false
		sd.Reasons = append(sd.Reasons, policy.Reason{
			Code:    CodeReservedName,
			Message: fmt.Sprintf("%s reserves the server name %q and does not load such a server (profile reservedNames); rename it", name, req.Servers[i].ID),
			Field:   "id",
			Rule:    "profile " + name,
		})
		slices.SortStableFunc(sd.Reasons, func(a, b policy.Reason) int { return strings.Compare(a.Code, b.Code) })
	}
}

// CodeUserCommand: a stdio user server the policy kept is refused by the host: loadout never
// starts a command a run's user chose, whatever the policy says (the default policy drops
// every stdio user server itself, so this only stops a policy that does not).
const CodeUserCommand = "user_server_command"

// refuseUserCommands refuses every stdio server of userServers the policy allowed, as a deny
// would.
func refuseUserCommands(req *spec.Request, d *policy.Decision) {
	for i := range req.Servers {
		s := &req.Servers[i]
		if i >= len(d.Servers) || s.Source != spec.SourceUser || s.Transport != spec.TransportStdio || !d.Servers[i].Allow {
			continue
		}
		sd := &d.Servers[i]
		sd.Allow = false
		sd.Reasons = append(sd.Reasons, policy.Reason{
			Code:    CodeUserCommand,
			Message: "loadout never starts a command a run's user chose: a user server must be http, whatever the policy allows",
			Field:   "transport",
			Rule:    "host",
		})
	}
}

// exposure is what the rendering harness's profile can do with exposure, or nil when no loaded
// plugin renders the request's harness (Prepare refuses it then).
func (h *Host) exposure(req *spec.Request, harness string) *exposure.Harness {
	name, prof := h.profileFor(req, harness)
	if prof == nil {
		return nil
	}
	return &exposure.Harness{Name: name, Native: prof.ExposureNative(), Deny: prof.DenyList()}
}

// profileFor is the rendering harness and its profile, or a nil profile when no loaded plugin
// renders the request's harness.
func (h *Host) profileFor(req *spec.Request, harness string) (string, *plan.Profile) {
	name, err := pickHarness(req.Harness, harness)
	if err != nil {
		return "", nil
	}
	return name, h.plugins[name].Profile
}

// builtin is the rendering harness's own tools as its profile lists them, or nil when no loaded
// plugin renders the request's harness.
func (h *Host) builtin(req *spec.Request, harness string) *policy.Builtin {
	name, prof := h.profileFor(req, harness)
	if prof == nil {
		return nil
	}
	return &policy.Builtin{Harness: name, Tools: prof.BuiltinTools()}
}

// Minter mints the run tokens a request's servers ask for (mcpServers[i].token) before the
// policy runs; loadout serve's token service is one (host/server, host/tokens). Without a
// Minter a request that asks for a token is refused with spec.CodeMintUnsupported.
//
// Mint returns one token per server id, as the request's tokens map spells stored tokens; the
// host adds them to the request, so the policy, vet and the plugin see a minted token exactly
// as a stored one: a secret the plugin only ever sees as a placeholder, rendered where the
// server's credential goes (docs/TOKENS.md). Mint must not make a token usable: its caller
// does that once the render succeeded, for the servers the render kept (Result.Servers). A
// refusal is a *spec.RejectError naming the field. Implementations are safe for concurrent use.
type Minter interface {
	Mint(ctx context.Context, req *spec.Request) ([]spec.Pair, error)
}

// mint adds the tokens minter mints for req to req.Tokens.
func mint(ctx context.Context, req *spec.Request, minter Minter) error {
	first := -1
	for i := range req.Servers {
		if req.Servers[i].Token.Mint {
			first = i
			break
		}
	}
	if first < 0 {
		return nil
	}
	if minter == nil {
		return &spec.RejectError{
			Field: req.Servers[first].Path() + ".token.mint",
			Code:  spec.CodeMintUnsupported,
			Message: "only loadout serve mints run tokens, and this command has no token store; " +
				"render through serve, or put a stored token in the request's tokens map",
		}
	}
	minted, err := minter.Mint(ctx, req)
	if err != nil {
		return err
	}
	req.Tokens = slices.Concat(req.Tokens, minted)
	return nil
}

func pickHarness(inBody, override string) (string, error) {
	switch {
	case override != "":
		return override, nil
	case inBody != "":
		return inBody, nil
	}
	return "", &UsageError{Msg: `harness: none given (set "harness" in the request or --harness)`}
}

// Render runs the whole pipeline for one request: nothing is written unless every step
// succeeds, and with rr.DryRun nothing is written at all.
func (h *Host) Render(ctx context.Context, rr RenderRequest) (*Result, error) {
	p, err := h.Prepare(ctx, rr)
	if err != nil {
		return nil, err
	}
	res, err := h.Execute(ctx, p, rr)
	if err != nil {
		return nil, &RequestError{Err: err, Secrets: p.Vetted.Redactions()}
	}
	return res, nil
}

// RequestError is an error about a request that parsed: it carries the request's redaction
// set as far as it is known when the error happens, so whoever reports the error masks exactly
// the request's secrets with host/redact's model, as `loadout redact` does. Every error of
// Prepare, Vet and Render after the request parsed is one; a refusal of the parser is not (it
// quotes no env, header or token value). Its message is Err's, unmasked.
type RequestError struct {
	Err error
	// Secrets is the request's redaction set: policy.Vetted.Redactions once the policy vetted
	// it, policy.KnownRedactions before (the secrets the decision names, or without one the
	// secrets the request declares).
	Secrets []string
}

func (e *RequestError) Error() string { return e.Err.Error() }
func (e *RequestError) Unwrap() error { return e.Err }

// Redactions returns a copy of Secrets.
func (e *RequestError) Redactions() []string { return slices.Clone(e.Secrets) }

// DeclaredRedactions is the redaction set of the secrets the request in body declares itself
// (policy.KnownRedactions without a decision), for reporting an error that carries no
// redaction set (a renderer's panic, say); nil when body does not parse.
func DeclaredRedactions(body []byte) []string {
	req, _, err := spec.Parse(body)
	if err != nil {
		return nil
	}
	return policy.KnownRedactions(req, nil)
}

// Execute renders a prepared request with its harness's plugin, checks the plan and (unless
// rr.DryRun) writes it under rr.Roots.
func (h *Host) Execute(ctx context.Context, p *Prepared, rr RenderRequest) (*Result, error) {
	areq := p.Vetted.Request()
	areq.Harness = p.Harness
	body, err := json.Marshal(areq)
	if err != nil {
		return nil, fmt.Errorf("encode plugin request: %w", err)
	}
	out, err := p.plugin.Plugin.Render(ctx, body)
	if err != nil {
		return nil, &PluginFailure{Plugin: p.plugin.Info.Name, Err: err}
	}
	pl, err := plan.Decode(out)
	if err != nil {
		return nil, &PluginFailure{Plugin: p.plugin.Info.Name, Err: err}
	}
	in := plan.Input{
		Manifest: p.plugin.Plugin.Manifest(),
		Profile:  p.plugin.Profile,
		Request:  areq,
		Limits:   h.cfg.Limits,
	}
	for _, s := range p.Vetted.Secrets() {
		for _, u := range s.Uses {
			in.Secrets = append(in.Secrets, plan.Secret{Placeholder: s.Placeholder, Value: s.Value, Server: u.Server, Field: u.Field, Key: u.Key})
		}
	}
	for _, b := range p.Vetted.Blobs() {
		in.Blobs = append(in.Blobs, plan.Blob{Placeholder: b.Placeholder, Value: b.Content})
	}
	checked, err := plan.Check(pl, in)
	if err != nil {
		return nil, &PluginFailure{Plugin: p.plugin.Info.Name, Err: fmt.Errorf("plan check: %w", err)}
	}
	var mres *materialize.Result
	if rr.DryRun {
		mres, err = materialize.DryRun(ctx, checked, materialize.Roots{})
	} else {
		if rr.Roots.Config == "" || rr.Roots.Run == "" || rr.Roots.Checkout == "" {
			return nil, &UsageError{Msg: "roots: config, run and checkout directories are required unless dry-run (--out DIR, or --config-dir, --run-dir and --checkout)"}
		}
		mres, err = materialize.Write(ctx, checked, materialize.Roots(rr.Roots))
	}
	if err != nil {
		return nil, fmt.Errorf("write plan: %w", err)
	}
	return h.result(p, rr, mres)
}

// result assembles the render result; it holds no secret value.
func (h *Host) result(p *Prepared, rr RenderRequest, m *materialize.Result) (*Result, error) {
	areq := p.Vetted.Request()
	details, err := serverDetails(p, areq)
	if err != nil {
		return nil, err
	}
	res := &Result{
		Harness:        p.Harness,
		DryRun:         rr.DryRun,
		PolicyRevision: h.policy.Revision(),
		Servers:        make([]string, 0, len(areq.Servers)),
		ServerDetails:  details,
		Skills:         make([]string, 0, len(areq.Skills)),
		Resources:      make(ResourceList, 0, len(areq.Skills)),
		BuiltinTools:   append([]string{}, areq.Run.BuiltinTools...),
		Dropped:        slices.Concat(p.Diags, p.Vetted.Dropped()),
		Files:          make([]FileResult, 0, len(m.Files)),
		Args:           m.Args,
		Env:            make([]EnvVar, 0, len(m.Env)),
		Prompt:         withSharedNotices(m.Prompt, details, p.Vetted.Redactor()),
		Warnings:       []Warning{},
		Decision:       p.Vetted.Decision(),
	}
	if res.Dropped == nil {
		res.Dropped = []spec.Diagnostic{}
	}
	if res.Args == nil {
		res.Args = []string{}
	}
	for _, s := range areq.Servers {
		res.Servers = append(res.Servers, s.ID)
	}
	for _, sk := range areq.Skills {
		res.Skills = append(res.Skills, sk.Name)
		sr := SkillResources{Skill: sk.Name, Paths: make([]string, 0, len(sk.Resources))}
		for _, r := range sk.Resources {
			sr.Paths = append(sr.Paths, r.Path)
		}
		res.Resources = append(res.Resources, sr)
	}
	for _, f := range m.Files {
		fr := FileResult{Root: f.Root, Path: f.Path, Mode: f.Mode, Bytes: f.Bytes, Secret: f.Secret, SHA256: f.SHA256, Written: f.Written}
		if rr.DryRun && rr.ShowContent {
			fr.Content = p.Vetted.Redactor().String(f.Content)
		}
		res.Files = append(res.Files, fr)
	}
	for _, e := range m.Env {
		v := e.Value
		if e.Secret {
			v = redact.Mask
		}
		res.Env = append(res.Env, EnvVar{Name: e.Name, Value: v})
	}
	for _, w := range p.Vetted.Warnings() {
		res.Warnings = append(res.Warnings, Warning{Code: w.Code, Message: w.Message, Server: w.Server, Skill: w.Skill})
	}
	for _, w := range m.Warnings {
		res.Warnings = append(res.Warnings, Warning{Code: w.Code, Message: w.Message, Server: w.Server, Skill: w.Skill})
	}
	res.Warnings = append(res.Warnings, headerWarnings(p.Vetted, p.Profile())...)
	res.Warnings = append(res.Warnings, checkoutEnvWarnings(p.Profile())...)
	return res, nil
}

// UsageError is a render the caller asked for wrongly (no harness, unknown harness, no roots).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// PluginFailure is a plugin that failed: a trap, a timeout, an ABI mismatch, an error it
// returned, or a plan that failed the check.
type PluginFailure struct {
	Plugin string
	Err    error
}

func (e *PluginFailure) Error() string { return "plugin " + e.Plugin + ": " + e.Err.Error() }
func (e *PluginFailure) Unwrap() error { return e.Err }

// Class is the kind of failure an error from Render is, for exit codes and HTTP statuses.
type Class int

const (
	ClassInternal Class = iota // a bug or the environment
	ClassUsage                 // the caller's options are wrong
	ClassRejected              // the request is invalid or the policy denied it
	ClassPlugin                // the plugin failed or its plan failed the check
)

// Classify tells which Class err belongs to.
func Classify(err error) Class {
	var re *spec.RejectError
	var ue *UsageError
	var pf *PluginFailure
	var root *materialize.RootError
	switch {
	case errors.As(err, &re), policy.IsRejected(err):
		return ClassRejected
	case errors.As(err, &ue), errors.As(err, &root):
		return ClassUsage
	case errors.As(err, &pf):
		return ClassPlugin
	}
	return ClassInternal
}

// RenderRequest is one render.
type RenderRequest struct {
	// Body is the request JSON, byte for byte.
	Body []byte
	// Harness, when set, is the harness to render for; it overrides the request's "harness"
	// (a capability spec is harness-neutral: the same spec renders for every harness).
	Harness string
	// HostEnv is the host environment the policy filters into each stdio server's spawn
	// environment (in the CLI, loadout's own environment).
	HostEnv []spec.Pair
	// DryRun stops before anything is written.
	DryRun bool
	// ShowContent, on a dry run, puts each planned file's content in the result
	// (FileResult.Content): placeholders of secrets are masked, and any secret spelling left
	// is masked again by host/redact.
	ShowContent bool
	// Roots are the directories the plan's roots resolve to; required unless DryRun.
	Roots Roots
	// Minter mints the run tokens the request's servers ask for; nil refuses such a request.
	Minter Minter
}

// Sweep finishes what a render killed while writing into roots left (materialize.Sweep): it
// is rolled forward or back, and its staging directories removed.
func Sweep(roots Roots) error {
	return materialize.Sweep(materialize.Roots(roots))
}

// Roots are the absolute directories a plan's named roots resolve to.
type Roots struct {
	Config   string `json:"config"`   // the harness's isolated config home
	Run      string `json:"run"`      // per-run scratch, outside the checkout
	Checkout string `json:"checkout"` // the repository
	// MakeCheckout: Checkout is a directory loadout makes for the run (render --out), created
	// when missing once every check passed.
	MakeCheckout bool `json:"-"`
}
