package policy

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/cover"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/tester"
	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/open-policy-agent/opa/v1/storage/inmem"
)

// Report is the outcome of RunTests: one TestResult per test rule, in OPA's order. The counts
// are opa test's: each case of a data-driven test counts as one test.
type Report struct {
	Results []TestResult `json:"results"`
	Passed  int          `json:"passed"`
	Failed  int          `json:"failed"`
	Errored int          `json:"errored"`
	Skipped int          `json:"skipped"`
	// Coverage is OPA's coverage report, with TestOptions.Coverage.
	Coverage *cover.Report `json:"coverage,omitempty"`
}

// OK reports whether the run has at least one test and none failed or errored: the verdict
// of `opa test --fail-on-empty`.
func (r Report) OK() bool { return r.Passed > 0 && r.Failed == 0 && r.Errored == 0 }

// TestResult is one test rule's outcome.
type TestResult struct {
	Package  string   `json:"package"`
	Name     string   `json:"name"`
	Location string   `json:"location"` // file:row
	Pass     bool     `json:"pass"`
	Skip     bool     `json:"skip,omitempty"`
	Error    string   `json:"error,omitempty"`
	Failed   []string `json:"failed,omitempty"` // failed sub-cases of a data-driven test
	// FailedAt is, with TestOptions.Verbose, the expression that failed, for each failed
	// test (and each failed sub-case): "file:row: expression", as opa test -v shows it.
	FailedAt []string      `json:"failedAt,omitempty"`
	Duration time.Duration `json:"duration"`
}

// TestOptions are opa test's options.
type TestOptions struct {
	// Timeout bounds each test (opa test --timeout); 0 means DefaultTestTimeout.
	Timeout time.Duration
	// Run keeps the tests whose package.name matches this regular expression (opa test --run).
	Run string
	// Coverage collects a coverage report (opa test --coverage).
	Coverage bool
	// Verbose traces each test and reports the expression a failed test failed at
	// (TestResult.FailedAt; opa test -v).
	Verbose bool
	// Name says where the tree comes from (Config.Name); ReplaceDefaults runs the tree
	// without the defaults underneath (Config.ReplaceDefaults).
	Name            string
	ReplaceDefaults bool
}

// DefaultTestTimeout is a test's time limit when TestOptions.Timeout is 0: far above what a
// policy test takes, so a slow or loaded machine does not fail a correct test.
const DefaultTestTimeout = time.Minute

// RunTests runs the *_test.rego of fsys (nil: the embedded defaults) through the embedded OPA
// tester, with the engine's capabilities, as `opa test` does; fsys is laid over the defaults'
// rules and data as New lays it (unless opts.ReplaceDefaults). A policy tree that does not
// compile is an error (a *CompileError); failing tests are in the Report.
func RunTests(ctx context.Context, fsys fs.FS, opts TestOptions) (Report, error) {
	t, _, _, err := assemble(fsys, nil, opts.Name, opts.ReplaceDefaults, true)
	if err != nil {
		return Report{}, err
	}
	if err := checkRuleNames(t.modules); err != nil {
		return Report{}, err
	}
	if err := checkData(t, t.data, fsys, opts.Name, !opts.ReplaceDefaults || fsys == nil); err != nil {
		return Report{}, err
	}
	modules := t.modules
	store := inmem.NewFromObjectWithOpts(t.data, inmem.OptRoundTripOnWrite(false), inmem.OptReturnASTValuesOnRead(true))
	txn, err := store.NewTransaction(ctx)
	if err != nil {
		return Report{}, fmt.Errorf("run policy tests: %w", err)
	}
	defer store.Abort(ctx, txn)
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTestTimeout
	}
	compiler := ast.NewCompiler().
		WithCapabilities(Capabilities()).
		WithDefaultRegoVersion(ast.RegoV1).
		WithEnablePrintStatements(false)
	runner := tester.NewRunner().
		SetCompiler(compiler).
		SetStore(store).
		SetModules(modules).
		SetDefaultRegoVersion(ast.RegoV1).
		SetTimeout(timeout).
		RaiseBuiltinErrors(true)
	if opts.Run != "" {
		runner = runner.Filter(opts.Run)
	}
	if opts.Verbose {
		runner = runner.EnableTracing(true)
	}
	var cov *cover.Cover
	if opts.Coverage {
		cov = cover.New()
		runner = runner.SetCoverageQueryTracer(cov)
	}
	ch, err := runner.RunTests(ctx, txn)
	if err != nil {
		return Report{}, fmt.Errorf("run policy tests: %w", compileError(err))
	}
	var rep Report
	for r := range ch {
		tr := TestResult{Package: r.Package, Name: r.Name, Duration: r.Duration, Skip: r.Skip}
		if r.Location != nil {
			tr.Location = fmt.Sprintf("%s:%d", r.Location.File, r.Location.Row)
		}
		switch {
		case r.Skip:
			rep.Skipped++
		case r.Error != nil:
			tr.Error = testError(ctx, compiler, store, txn, r)
			rep.Errored++
		case len(r.SubResults) > 0:
			// A data-driven test: every leaf case counts, as in opa test.
			for path, sub := range r.SubResults.Iter {
				if len(sub.SubResults) > 0 {
					continue
				}
				if sub.Fail {
					rep.Failed++
					tr.Failed = append(tr.Failed, fmt.Sprint(path))
					if at := failedAt(sub.Trace); at != "" {
						tr.FailedAt = append(tr.FailedAt, fmt.Sprint(path)+": "+at)
					}
				} else {
					rep.Passed++
				}
			}
			tr.Pass = !r.Fail
		case r.Fail:
			rep.Failed++
			if at := failedAt(r.Trace); at != "" {
				tr.FailedAt = append(tr.FailedAt, at)
			}
		default:
			tr.Pass = true
			rep.Passed++
		}
		rep.Results = append(rep.Results, tr)
	}
	if cov != nil {
		report := cov.Report(modules)
		rep.Coverage = &report
	}
	return rep, nil
}

// failedAt is the last expression that failed in a test's own query, from its trace, as
// "file:row: expression" (what opa test -v prints as the failure line), or "".
func failedAt(trace []*topdown.Event) string {
	for _, e := range slices.Backward(trace) {
		if e.Op != topdown.FailOp || e.Location == nil || e.QueryID == 0 {
			continue
		}
		expr, ok := e.Node.(*ast.Expr)
		if !ok {
			continue
		}
		if _, every := expr.Terms.(*ast.Every); every {
			continue // the failing expression is inside the every body
		}
		text := string(e.Location.Text) // as written; the node's vars are the compiler's
		if text == "" {
			text = expr.String()
		}
		return fmt.Sprintf("%s:%d: %s", e.Location.File, e.Location.Row, text)
	}
	return ""
}

// testError is the error of a test as text. OPA's tester formats several built-in errors of
// one test as a Go slice of structs (pointers included); those are evaluated again here to
// list each error with its location and message.
func testError(ctx context.Context, compiler *ast.Compiler, store storage.Store, txn storage.Transaction, r *tester.Result) string {
	var te *topdown.Error
	if errors.As(r.Error, &te) || !strings.HasPrefix(r.Error.Error(), "[{") {
		return r.Error.Error()
	}
	var list []topdown.Error
	_, _ = rego.New(
		rego.Compiler(compiler),
		rego.Store(store),
		rego.Transaction(txn),
		rego.Query(r.Package+"."+r.Name),
		rego.BuiltinErrorList(&list),
	).Eval(ctx)
	if len(list) == 0 {
		return "built-in errors (see the test's expressions)"
	}
	msgs := make([]string, len(list))
	for i := range list {
		msgs[i] = list[i].Error()
	}
	return strings.Join(msgs, "; ")
}
