package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/loader"
	"github.com/open-policy-agent/opa/v1/metrics"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/util"

	"github.com/loadout-dev/loadout/host/spec"
	"github.com/loadout-dev/loadout/policies"
)

// Namespace is the package prefix whose rules make the decision: every package under
// data.loadout may contribute deny, drop, secret and warn sets and a spawn_env object
// (docs/POLICIES.md §2).
const Namespace = "data.loadout"

// ruleNames are the rules the host collects from every package under Namespace.
var ruleNames = []string{"deny", "drop", "secret", "warn", "spawn_env"}

// FixturesDir is the top directory of a policy tree that holds test inputs: loaded for
// tests (data.fixtures), not for decisions.
const FixturesDir = "fixtures"

// evalTime is the clock every evaluation sees: policies cannot branch on the wall clock.
var evalTime = time.Unix(0, 0).UTC()

// Config configures an Engine. The zero value works: the embedded default policies, no logs.
type Config struct {
	// FS holds a team's policy tree (Rego modules and JSON/YAML data, each data file at its
	// directory's path, as the opa CLI loads it), laid over the embedded defaults
	// (policies.FS): the defaults' rules all stay, the team's rules are added and its data
	// overrides theirs by path. Files ending in _test.rego and the fixtures directory are not
	// loaded for decisions. Nil means the defaults alone.
	FS fs.FS
	// Bundle, when set, is the team's policy tree instead of FS: an OPA bundle (LoadBundle),
	// laid over the defaults as FS is.
	Bundle *Bundle
	// Name says where FS or Bundle comes from (a path or URL): Sources reports it, and with
	// the defaults underneath, the team's files are named Name/<path> in file:row.
	Name string
	// ReplaceDefaults makes FS or Bundle the whole policy, without the defaults underneath.
	ReplaceDefaults bool
	// Data, when set, is laid over the tree's data documents before the policy compiles:
	// objects merge key by key, any other value replaces the tree's
	// ({"tunables": {"userservers": {"userServers": "remote"}}} changes that one setting). A
	// conformity case sets it to pin a rule's interaction with the policy's data. Not with
	// Bundle: a bundle is the whole, signed policy.
	Data map[string]any
	// Logger receives startup and decision logs; nil discards them. Values are never logged.
	Logger *slog.Logger
}

// Engine is a compiled policy: one prepared query that reads every contributing rule. It is
// built once by New, never changes afterwards, and is safe for concurrent use.
type Engine struct {
	query    rego.PreparedEvalQuery
	sources  []source // what each element of the query's result is
	rules    ruleIndex
	revision string
	trees    []Source // the policy trees in force
	logger   *slog.Logger
}

// source is one rule the decision reads.
type source struct {
	pkg  string // package path, e.g. "data.loadout.url"
	name string // one of ruleNames
}

// ErrNoDecision is returned by Decide when a rule the decision reads is undefined (a
// spawn_env whose body fails, say). The request is refused (fail closed).
var ErrNoDecision = errors.New("policy produced no decision: a rule it reads is undefined")

// UndefinedError is a rule the decision reads that is undefined (a spawn_env whose body
// fails), with where it lives. It is ErrNoDecision (errors.Is).
type UndefinedError struct {
	Rule string // package.rule, e.g. data.loadout.allow.spawn_env
	At   string // file:row of its first definition
}

func (e *UndefinedError) Error() string {
	return fmt.Sprintf("policy produced no decision: %s (%s) is undefined: its body failed, so no host variable list was decided", e.Rule, e.At)
}

func (e *UndefinedError) Is(target error) bool { return target == ErrNoDecision }

// MalformedError is returned by Decide when an element a rule produced does not have the
// shape docs/POLICIES.md §2 documents (an index out of range, a missing code, a key the
// request does not have). The request is refused (fail closed).
type MalformedError struct {
	Path string // the rule and element, e.g. "data.loadout.corp.deny[2].server"
	Msg  string
}

func (e *MalformedError) Error() string {
	return "policy decision is malformed: " + e.Path + ": " + e.Msg
}

// EvalError is a policy that failed while it evaluated (a built-in error in strict mode, a
// conflict between rules, a cancelled context). The request is refused (fail closed).
type EvalError struct{ Err error }

func (e *EvalError) Error() string { return "evaluate policy: " + e.Err.Error() }
func (e *EvalError) Unwrap() error { return e.Err }

// IsRejected reports whether err means the policy refuses the request (exit 3): an undefined
// rule, a malformed element, an evaluation error, a request-level deny, or a request that
// smuggles a reserved placeholder.
func IsRejected(err error) bool {
	var me *MalformedError
	var ee *EvalError
	var de *DeniedError
	return errors.Is(err, ErrNoDecision) || errors.Is(err, ErrPlaceholder) || errors.As(err, &me) || errors.As(err, &ee) || errors.As(err, &de)
}

// Capabilities are the built-ins a policy may call: this OPA version's, minus everything that
// reaches the network or reads the clock, entropy or the runtime.
func Capabilities() *ast.Capabilities {
	denied := map[string]bool{
		"http.send":          true,
		"net.lookup_ip_addr": true,
		"time.now_ns":        true,
		"rand.intn":          true,
		"uuid.rfc4122":       true,
		"opa.runtime":        true,
	}
	caps := ast.CapabilitiesForThisVersion()
	kept := caps.Builtins[:0]
	for _, b := range caps.Builtins {
		if !denied[b.Name] {
			kept = append(kept, b)
		}
	}
	caps.Builtins = kept
	caps.AllowNet = []string{}
	return caps
}

// New loads and compiles the policies of cfg.FS (or cfg.Bundle) in strict mode with pinned
// capabilities, finds every rule under Namespace that contributes to the decision, prepares
// one query over them, and evaluates it once over a plain sample request: a policy that does
// not compile, or that errors on a plain request, stops loadout instead of refusing every
// render. A policy that does not compile is a *CompileError naming each file:row and OPA
// error code.
func New(ctx context.Context, cfg Config) (*Engine, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Bundle != nil && cfg.Data != nil {
		return nil, errors.New("load policies: data cannot be laid over a bundle")
	}
	t, trees, revision, err := assemble(cfg.FS, cfg.Bundle, cfg.Name, cfg.ReplaceDefaults, false)
	if err != nil {
		return nil, err
	}
	if err := checkRuleNames(t.modules); err != nil {
		return nil, err
	}
	docs, err := overlay(t.data, cfg.Data)
	if err != nil {
		return nil, err
	}
	if err := checkData(t, docs, cfg.FS, cfg.Name, !cfg.ReplaceDefaults || (cfg.FS == nil && cfg.Bundle == nil)); err != nil {
		return nil, err
	}
	modules := t.modules
	store := inmem.NewFromObjectWithOpts(docs, inmem.OptRoundTripOnWrite(false), inmem.OptReturnASTValuesOnRead(true))
	sources, rules := collect(modules)
	refs := make([]string, len(sources))
	for i, src := range sources {
		refs[i] = src.pkg + "." + src.name
		if src.name == "spawn_env" {
			// A complete rule may be undefined; as a comprehension it is an empty list
			// instead, so the decision can name it (UndefinedError).
			refs[i] = "[x | x := " + refs[i] + "]"
		}
	}
	opts := []func(*rego.Rego){
		rego.Store(store),
		rego.Capabilities(Capabilities()),
		rego.Strict(true),
		rego.StrictBuiltinErrors(true),
		rego.SetRegoVersion(ast.RegoV1),
		rego.Query("[" + strings.Join(refs, ", ") + "]"),
	}
	for _, name := range slices.Sorted(maps.Keys(modules)) {
		opts = append(opts, rego.ParsedModule(modules[name]))
	}
	pq, err := rego.New(opts...).PrepareForEval(ctx)
	if err != nil {
		return nil, compileError(err)
	}
	if len(sources) == 0 {
		return nil, fmt.Errorf("load policies: no package under %s defines %s", Namespace, strings.Join(ruleNames, ", "))
	}
	e := &Engine{query: pq, sources: sources, rules: rules, revision: revision, trees: trees, logger: logger}
	if _, err := e.Decide(ctx, sampleRequest(), nil, ""); err != nil {
		return nil, fmt.Errorf("load policies: the policy fails on a plain request: %w", err)
	}
	logger.Debug("policy prepared", "modules", len(modules), "rules", len(sources), "revision", revision)
	return e, nil
}

// Revision is the bundle revision the engine was built from ("" for a directory).
func (e *Engine) Revision() string { return e.revision }

// Sources lists the policy trees in force, the defaults first when the team's tree is laid
// over them.
func (e *Engine) Sources() []Source { return slices.Clone(e.trees) }

// assemble returns the policy tree of fsys or b (nil, nil: the embedded defaults alone), laid
// over the defaults unless replace, with the sources in force and the bundle's revision.
// withTests keeps the team's tests and fixtures (the defaults underneath keep neither).
func assemble(fsys fs.FS, b *Bundle, name string, replace, withTests bool) (tree, []Source, string, error) {
	if fsys == nil && b == nil {
		if replace {
			return tree{}, nil, "", errors.New("load policies: replacing the default policies needs a policy directory or bundle")
		}
		t, err := load(policies.FS, withTests)
		if err == nil && len(t.modules) == 0 {
			err = errors.New("load policies: no Rego module found")
		}
		return t, []Source{defaultsSource}, "", err
	}
	var (
		team     tree
		src      = Source{Kind: "directory", Name: name}
		revision string
		err      error
	)
	if b != nil {
		team, err = b.tree(withTests)
		revision = b.Revision()
		src = Source{Kind: "bundle", Name: name, Revision: revision}
	} else {
		team, err = load(fsys, withTests)
	}
	if err != nil {
		return tree{}, nil, "", err
	}
	if replace {
		if len(team.modules) == 0 {
			return tree{}, nil, "", errors.New("load policies: no Rego module found")
		}
		return team, []Source{src}, revision, nil
	}
	base, err := load(policies.FS, false)
	if err != nil {
		return tree{}, nil, "", err
	}
	t, err := layer(base, team, name)
	return t, []Source{defaultsSource, src}, revision, err
}

// Rules lists the rules the decision reads, as package.rule, in the order they are read.
func (e *Engine) Rules() []string {
	out := make([]string, len(e.sources))
	for i, s := range e.sources {
		out[i] = s.pkg + "." + s.name
	}
	return out
}

// sampleRequest is the request New evaluates once: a stdio and an http server, a user server
// and a skill, every field a plain value.
func sampleRequest() *spec.Request {
	return &spec.Request{
		Harness: "sample-harness",
		Run:     spec.Run{User: "alice", HasUser: true},
		Skills:  []spec.Skill{{Name: "review", Description: "Review code", Instructions: "Read the diff."}},
		Servers: []spec.Server{
			{Index: 0, Source: spec.SourceCatalog, ID: "files", Transport: "stdio", Command: "mcp-files", Args: []string{"."},
				Env: []spec.Pair{{Name: "LOG_LEVEL", Value: "info"}}, Enabled: true},
			{Index: 1, Source: spec.SourceCatalog, ID: "docs", Transport: "http", URL: "https://mcp.example.com/mcp",
				Headers: []spec.Pair{{Name: "X-Client", Value: "loadout"}}, Enabled: true},
			{Index: 0, Source: spec.SourceUser, ID: spec.UserIDPrefix + "notes", Transport: "http",
				URL: "https://notes.example.com/mcp", Enabled: true},
		},
	}
}

// load reads a policy tree: Rego modules (with tests and fixtures when withTests) and its
// data documents.
func load(fsys fs.FS, withTests bool) (tree, error) {
	res, err := loader.NewFileLoader().
		WithFS(fsys).
		WithProcessAnnotation(true).
		WithRegoVersion(ast.RegoV1).
		WithCapabilities(Capabilities()).
		Filtered([]string{"."}, func(_ string, info fs.FileInfo, depth int) bool {
			switch {
			case withTests:
				return false
			case info.IsDir():
				return info.Name() == FixturesDir && depth == 1
			}
			return strings.HasSuffix(info.Name(), "_test.rego")
		})
	if err != nil {
		return tree{}, fmt.Errorf("load policies: %w", compileError(err))
	}
	t := tree{modules: res.ParsedModules(), raw: map[string][]byte{}, data: res.Documents}
	for name, f := range res.Modules {
		t.raw[name] = f.Raw
	}
	return t, nil
}

// overlay returns docs with over laid on it (Config.Data). The overlay goes through JSON so
// that its numbers and lists are the loader's kinds.
func overlay(docs, over map[string]any) (map[string]any, error) {
	if over == nil {
		return docs, nil
	}
	b, err := json.Marshal(over)
	if err != nil {
		return nil, fmt.Errorf("load policies: data overlay: %w", err)
	}
	var o map[string]any
	if err := util.UnmarshalJSON(b, &o); err != nil {
		return nil, fmt.Errorf("load policies: data overlay: %w", err)
	}
	return mergeData(docs, o), nil
}

// mergeData returns base with over laid on it: where both hold an object the two merge key by
// key, anywhere else over's value wins. Neither argument is changed.
func mergeData(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(over))
	maps.Copy(out, base)
	for k, v := range over {
		bo, bok := out[k].(map[string]any)
		oo, ook := v.(map[string]any)
		if bok && ook {
			out[k] = mergeData(bo, oo)
			continue
		}
		out[k] = v
	}
	return out
}

// CompileError is a policy that does not parse or compile. Errors keeps OPA's errors, each
// with its code (e.g. rego_type_error) and location.
type CompileError struct {
	Errors ast.Errors
}

func (e *CompileError) Error() string {
	var b strings.Builder
	b.WriteString("compile policies:")
	for _, ae := range e.Errors {
		b.WriteString(" ")
		if ae.Location != nil {
			fmt.Fprintf(&b, "%s:%d: ", ae.Location.File, ae.Location.Row)
		}
		fmt.Fprintf(&b, "%s: %s;", ae.Code, ae.Message)
	}
	return strings.TrimSuffix(b.String(), ";")
}

func (e *CompileError) Unwrap() error { return e.Errors }

func compileError(err error) error {
	var errs ast.Errors
	if errors.As(err, &errs) {
		return &CompileError{Errors: errs}
	}
	var le loader.Errors
	if errors.As(err, &le) {
		var out ast.Errors
		for _, e := range le {
			var ae *ast.Error
			var aes ast.Errors
			switch {
			case errors.As(e, &aes):
				out = append(out, aes...)
			case errors.As(e, &ae):
				out = append(out, ae)
			default:
				return err
			}
		}
		return &CompileError{Errors: out}
	}
	return err
}

// Decide evaluates the policy over the input document of req and hostEnv (only the host
// variables' names reach the policy, never their values) for harness ("" means the
// request's own), and collects every contributing rule into a Decision aligned with req. An
// evaluation error, an undefined rule or an element of the wrong shape refuses the request
// (IsRejected). Safe for concurrent use.
func (e *Engine) Decide(ctx context.Context, req *spec.Request, hostEnv []spec.Pair, harness string) (*Decision, error) {
	// Cancellation: OPA would start a goroutine per evaluation to watch ctx; a callback
	// registered on ctx (none for a context that is never done) costs less.
	cancel := topdown.NewCancel()
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, cancel.Cancel)
		defer stop()
	}
	rs, err := e.query.Eval(ctx,
		rego.EvalParsedInput(inputValue(req, hostEnv, harness)),
		rego.EvalExternalCancel(cancel),
		evalTimeOption, evalMetricsOption, evalKeepASTOption,
	)
	if err != nil {
		return nil, &EvalError{Err: err}
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return nil, ErrNoDecision
	}
	t, ok := rs[0].Expressions[0].Value.(*ast.Term)
	if !ok {
		return nil, fmt.Errorf("evaluate policy: result is %T, want an AST term", rs[0].Expressions[0].Value)
	}
	d, err := e.decode(t.Value, req)
	if err != nil {
		return nil, err
	}
	e.logger.Debug("policy decided", "servers", len(d.Servers), "skills", len(d.Skills), "secrets", len(d.Secrets))
	return d, nil
}

// The evaluation options every Decide passes, built once: the clock, no metrics, the result
// kept as AST.
var (
	evalTimeOption    = rego.EvalTime(evalTime)
	evalMetricsOption = rego.EvalMetrics(metrics.NoOp())
	evalKeepASTOption = rego.EvalGenerateJSON(keepAST)
)

// keepAST hands the evaluated term to Decide as it is: decode reads the AST.
func keepAST(t *ast.Term, _ *rego.EvalContext) (any, error) { return t, nil }
