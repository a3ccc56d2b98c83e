package policy

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/loader"
	"github.com/open-policy-agent/opa/v1/metrics"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/loadout-dev/loadout/host/spec"
	"github.com/loadout-dev/loadout/policies"
)

// Query is the one decision the host evaluates.
const Query = "data.loadout.decision"

// evalTime is the clock every evaluation sees: policies cannot branch on the wall clock.
var evalTime = time.Unix(0, 0).UTC()

// Config configures an Engine. The zero value works: the embedded default policies, no logs.
type Config struct {
	// FS holds the policy tree (Rego modules and JSON/YAML data, each data file at its
	// directory's path, as the opa CLI loads it). Files ending in _test.rego are not loaded for
	// decisions. Nil means the embedded defaults (policies.FS).
	FS fs.FS
	// Logger receives startup and decision logs; nil discards them. Values are never logged.
	Logger *slog.Logger
}

// Engine is a compiled policy: one prepared query over the policy tree. It is built once by
// New, never changes afterwards, and is safe for concurrent use.
type Engine struct {
	query    rego.PreparedEvalQuery
	residual *residual // nil: every decision is the query's evaluation
	tunables *tunables
	logger   *slog.Logger
}

// ErrNoDecision is returned by Decide when the policy leaves data.loadout.decision undefined.
// The request is refused (fail closed).
var ErrNoDecision = errors.New("policy produced no decision")

// MalformedError is returned by Decide when the decision document does not have the shape
// host/policy/doc.go documents. The request is refused (fail closed).
type MalformedError struct {
	Path string // where in the document, e.g. "servers[2].drop[0].field"
	Msg  string
}

func (e *MalformedError) Error() string {
	return "policy decision is malformed: " + e.Path + ": " + e.Msg
}

// IsRejected reports whether err means the policy refuses the request (exit 3): no decision,
// a malformed decision, or a request that smuggles a reserved placeholder.
func IsRejected(err error) bool {
	var me *MalformedError
	return errors.Is(err, ErrNoDecision) || errors.Is(err, ErrPlaceholder) || errors.As(err, &me)
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

// New loads and compiles the policies of cfg.FS and prepares the decision query once, in strict
// mode with pinned capabilities. A policy that does not compile is an error naming each
// file:row and OPA error code.
func New(ctx context.Context, cfg Config) (*Engine, error) {
	interned.Lock() // see interned
	defer interned.Unlock()
	fsys := cfg.FS
	if fsys == nil {
		fsys = policies.FS
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	modules, store, docs, err := load(fsys, false)
	if err != nil {
		return nil, err
	}
	tun, err := readTunables(docs["tunables"])
	if err != nil {
		return nil, err
	}
	opts := []func(*rego.Rego){
		rego.Store(store),
		rego.Capabilities(Capabilities()),
		rego.Strict(true),
		rego.StrictBuiltinErrors(true),
		rego.SetRegoVersion(ast.RegoV1),
	}
	for _, name := range slices.Sorted(maps.Keys(modules)) {
		m := modules[name]
		if m.Package.Path.HasPrefix(partialPath) {
			return nil, &CompileError{Errors: ast.Errors{ast.NewError(ast.CompileErr, m.Package.Location,
				"package %s is the host's: a policy may not define it", partialPackage)}}
		}
		opts = append(opts, rego.ParsedModule(m))
	}
	pq, res, err := prepare(ctx, opts)
	if err != nil {
		return nil, compileError(err)
	}
	logger.Debug("policy prepared", "modules", len(modules), "query", Query, "residual", res != nil)
	return &Engine{query: pq, residual: res, tunables: tun, logger: logger}, nil
}

// interned guards OPA's process-wide interned terms (ast.InternedEmptySet, small numbers,
// ...). Partial evaluation rewrites the terms of what it returns in place (its copy
// propagation, and rego's rewriting of the result), interned ones included: the values it
// writes are equal, but the writes race with any code in the process that reads those terms
// (go test -race found it with policies whose comprehensions hold set() and small numbers).
// New and RunTests, which load, compile and partially evaluate, hold it exclusively; Decide
// and Decision.Raw, which build and read AST values, hold it shared. Outside a policy load
// (startup, loadout serve's reload) the shared lock is uncontended. Only this package uses
// OPA, so the discipline is complete within it.
var interned sync.RWMutex

// partialPackage is the package of the rule prepare builds from the partially evaluated
// decision (under data, as the default rego partial namespace is): New refuses a policy tree
// that defines it.
const partialPackage = "loadout_partial"

var partialPath = ast.Ref{ast.DefaultRootDocument, ast.StringTerm(partialPackage)}

// prepare compiles the policy (opts: store, capabilities, modules) and prepares the decision
// query. The query is partially evaluated once here, with the input unknown: the rules it
// reaches are inlined into one body per case the data decides (the tunables and constant
// tables resolved now), and the query evaluated per request is a rule whose bodies are those,
// so an evaluation runs only the expressions that read the input. Nothing about a request is
// known at this point; each Decide evaluates in full.
//
// The rule is built here rather than by rego.WithPartialEval, which makes the shared
// ast.Wildcard term its value and so writes to it while compiling (a data race with every
// other evaluation in the process). A policy whose decision partial evaluation cannot
// flatten into plain bodies is prepared as written. When the bodies are in the fragment a
// residual runs, prepare compiles them into one as well (nil otherwise).
func prepare(ctx context.Context, opts []func(*rego.Rego)) (rego.PreparedEvalQuery, *residual, error) {
	const result = "result"
	parts, err := rego.New(append(slices.Clip(opts), rego.Query(result+" = "+Query), rego.Unknowns([]string{"input"}))...).Partial(ctx)
	if err != nil {
		return rego.PreparedEvalQuery{}, nil, err
	}
	if len(parts.Queries) == 0 || len(parts.Support) > 0 {
		pq, err := rego.New(append(slices.Clip(opts), rego.Query(Query))...).PrepareForEval(ctx)
		return pq, nil, err
	}
	module := &ast.Module{Package: &ast.Package{Path: partialPath.Copy(), Location: &ast.Location{File: partialPackage + ".rego"}}}
	for _, body := range parts.Queries {
		module.Rules = append(module.Rules, &ast.Rule{
			Head:   ast.NewHead(ast.Var("decision"), nil, ast.VarTerm(result)),
			Body:   body,
			Module: module,
		})
	}
	pq, err := rego.New(append(slices.Clip(opts), rego.ParsedModule(module), rego.Query("data."+partialPackage+".decision"))...).PrepareForEval(ctx)
	if err != nil {
		return pq, nil, err
	}
	return pq, compileResidual(parts.Queries, ast.Var(result)), nil
}

// load reads the policy tree: Rego modules (with tests when withTests), the store of its data
// documents, and those documents (the tunables are read from them).
func load(fsys fs.FS, withTests bool) (map[string]*ast.Module, storage.Store, map[string]any, error) {
	res, err := loader.NewFileLoader().
		WithFS(fsys).
		WithProcessAnnotation(true).
		WithRegoVersion(ast.RegoV1).
		WithCapabilities(Capabilities()).
		Filtered([]string{"."}, func(_ string, info fs.FileInfo, _ int) bool {
			return !withTests && !info.IsDir() && strings.HasSuffix(info.Name(), "_test.rego")
		})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("load policies: %w", compileError(err))
	}
	modules := res.ParsedModules()
	if len(modules) == 0 {
		return nil, nil, nil, errors.New("load policies: no Rego module found")
	}
	store := inmem.NewFromObjectWithOpts(res.Documents, inmem.OptRoundTripOnWrite(false), inmem.OptReturnASTValuesOnRead(true))
	return modules, store, res.Documents, nil
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

// Decide evaluates the policy over req and the facts Go computes from it and from hostEnv (only
// the host variables' names reach the policy, never their values). An undefined decision is
// ErrNoDecision and a decision of the wrong shape a *MalformedError: both refuse the request.
// Safe for concurrent use.
func (e *Engine) Decide(ctx context.Context, req *spec.Request, hostEnv []spec.Pair) (*Decision, error) {
	interned.RLock() // see interned
	defer interned.RUnlock()
	facts := computeFacts(req, hostEnv, e.tunables)
	t, err := e.evaluate(ctx, inputValue(req, &facts, e.tunables))
	if err != nil {
		return nil, err
	}
	d, err := decodeDecision(t.Value, req)
	if err != nil {
		return nil, err
	}
	e.logger.Debug("policy decided", "servers", len(d.Servers), "skills", len(d.Skills), "secrets", len(d.Secrets))
	return d, nil
}

// evaluate is the decision document for input: the residual's when it decides, otherwise
// OPA's evaluation of the prepared query.
func (e *Engine) evaluate(ctx context.Context, input ast.Value) (*ast.Term, error) {
	if e.residual != nil && ctx.Err() == nil {
		if t, ok := e.residual.eval(ctx, input); ok {
			return t, nil
		}
	}
	return e.evalQuery(ctx, input)
}

// evalQuery evaluates the prepared query over input with OPA's topdown.
func (e *Engine) evalQuery(ctx context.Context, input ast.Value) (*ast.Term, error) {
	// Cancellation: OPA would start a goroutine per evaluation to watch ctx; a callback
	// registered on ctx (none for a context that is never done) costs less.
	cancel := topdown.NewCancel()
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, cancel.Cancel)
		defer stop()
	}
	rs, err := e.query.Eval(ctx,
		rego.EvalParsedInput(input),
		rego.EvalExternalCancel(cancel),
		evalTimeOption, evalMetricsOption, evalKeepASTOption,
	)
	if err != nil {
		return nil, fmt.Errorf("evaluate %s: %w", Query, err)
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return nil, ErrNoDecision
	}
	t, ok := rs[0].Expressions[0].Value.(*ast.Term)
	if !ok {
		return nil, fmt.Errorf("evaluate %s: result is %T, want an AST term", Query, rs[0].Expressions[0].Value)
	}
	return t, nil
}

// The evaluation options every Decide passes, built once: the clock, no metrics, the result
// kept as AST.
var (
	evalTimeOption    = rego.EvalTime(evalTime)
	evalMetricsOption = rego.EvalMetrics(metrics.NoOp())
	evalKeepASTOption = rego.EvalGenerateJSON(keepAST)
)

// keepAST hands the evaluated term to Decide as it is: decodeDecision reads the AST, and the
// JSON form is only built if Decision.Raw asks for it.
func keepAST(t *ast.Term, _ *rego.EvalContext) (any, error) { return t, nil }
