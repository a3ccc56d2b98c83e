package policy

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/loader"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/spec"
	"github.com/loadout-dev/loadout/policies"
)

// withDefaults is the embedded policy tree plus extra files.
func withDefaults(t *testing.T, extra map[string]string) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	err := fs.WalkDir(policies.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(policies.FS, path)
		m[path] = &fstest.MapFile{Data: data}
		return err
	})
	require.NoError(t, err)
	for name, src := range extra {
		m[name] = &fstest.MapFile{Data: []byte(src)}
	}
	return m
}

// corpRules are the two rules of docs/POLICIES.md §4, verbatim: a new file, no other change.
const corpRules = `package loadout.corp

import rego.v1

deny contains {"server": i, "code": "host_not_allowed", "msg": sprintf("%s: host %s is not on the corporate list", [s.id, s.facts.url.host])} if {
	some i, s in input.servers
	s.transport == "http"
	not endswith(s.facts.url.host, ".corp.example")
}

deny contains {"server": i, "code": "command_denied", "msg": sprintf("%s may not run %s", [s.id, s.facts.commandBase])} if {
	some i, s in input.servers
	s.transport == "stdio"
	s.facts.commandBase in {"curl", "wget", "sh", "bash"}
}
`

func corpRequest() *spec.Request {
	return &spec.Request{
		Harness: "claude",
		Servers: []spec.Server{
			{Index: 0, ID: "docs", Transport: "http", URL: "https://mcp.corp.example/mcp", Enabled: true},
			{Index: 1, ID: "outside", Transport: "http", URL: "https://mcp.example.com/mcp", Enabled: true},
			{Index: 2, ID: "fetch", Transport: "stdio", Command: "/usr/bin/curl", Enabled: true},
			{Index: 3, ID: "files", Transport: "stdio", Command: "mcp-files", Enabled: true},
		},
	}
}

func TestRulesFromAnyPackage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, err := New(ctx, Config{FS: withDefaults(t, map[string]string{"loadout/corp.rego": corpRules})})
	require.NoError(t, err, "New with a new package added")
	assert.Contains(t, e.Rules(), "data.loadout.corp.deny", "the new package's deny is collected")
	d, err := e.Decide(ctx, corpRequest(), nil, "")
	require.NoError(t, err)
	allowed := []bool{}
	for _, s := range d.Servers {
		allowed = append(allowed, s.Allow)
	}
	assert.Equal(t, []bool{true, false, false, true}, allowed, "outside and fetch are refused by the new rules")
	assert.Equal(t, []Reason{{Code: "host_not_allowed", Message: "outside: host mcp.example.com is not on the corporate list", Rule: "loadout/corp.rego:5"}},
		d.Servers[1].Reasons, "the reason carries the rule's message and where it lives")
	assert.Equal(t, []Reason{{Code: "command_denied", Message: "fetch may not run curl", Rule: "loadout/corp.rego:11"}}, d.Servers[2].Reasons)

	// Without the file, the same request passes.
	base, err := New(ctx, Config{})
	require.NoError(t, err)
	d, err = base.Decide(ctx, corpRequest(), nil, "")
	require.NoError(t, err)
	for i, s := range d.Servers {
		assert.True(t, s.Allow, "server %d passes the default policies", i)
	}
}

func TestDecideSeesTheHarness(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rule := `package loadout.h

deny contains {"server": 0, "code": "not_for_codex", "msg": input.harness} if input.harness == "codex"
`
	e, err := New(ctx, Config{FS: withDefaults(t, map[string]string{"loadout/h.rego": rule})})
	require.NoError(t, err)
	req := corpRequest()
	d, err := e.Decide(ctx, req, nil, "")
	require.NoError(t, err)
	assert.True(t, d.Servers[0].Allow, "the request's own harness is claude")
	d, err = e.Decide(ctx, req, nil, "codex")
	require.NoError(t, err)
	assert.False(t, d.Servers[0].Allow, "the harness the caller renders for overrides the request's")
}

// TestDecideRefusesMalformedElements: every element a rule produces is checked against the
// request; anything else refuses the request (fail closed) and names the rule.
func TestDecideRefusesMalformedElements(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, rule, want string }{
		{"server index out of range", `deny contains {"server": 9, "code": "x"}`, "data.loadout.t.deny[0].server"},
		{"negative index", `deny contains {"server": -1, "code": "x"}`, "want an index below"},
		{"index not a number", `deny contains {"server": "docs", "code": "x"}`, "want an index below"},
		{"missing code", `deny contains {"server": 0, "msg": "m"}`, `has no "code"`},
		{"empty code", `deny contains {"server": 0, "code": ""}`, "want a non-empty string"},
		{"neither server nor skill", `deny contains {"code": "x"}`, "names neither"},
		{"server and skill", `deny contains {"server": 0, "skill": 0, "code": "x"}`, "names both"},
		{"unknown key", `deny contains {"server": 0, "code": "x", "mesage": "typo"}`, "key \"mesage\""},
		{"element not an object", `drop contains "x"`, "want an object"},
		{"number in deny", `deny contains 7`, "want an object"},
		{"deny not a set", "default deny := set()\n\ndeny := 1", "want a set of objects"},
		{"drop of a key the server has not", `drop contains {"server": 0, "field": "env", "key": "NOPE", "code": "x"}`, "has no env entry"},
		{"drop of an unknown field", `drop contains {"server": 0, "field": "args", "key": "x", "code": "x"}`, ".field"},
		{"drop secret not a boolean", `drop contains {"server": 0, "field": "env", "key": "K", "code": "x", "secret": "yes"}`, "want a boolean"},
		{"secret of allowedTools", `secret contains {"server": 0, "field": "allowedTools", "key": "read"}`, ".field"},
		{"warn index out of range", `warn contains {"skill": 3, "code": "x"}`, ".skill"},
		{"spawn_env not an object", `spawn_env := ["PATH"]`, "want an object"},
		{"spawn_env unknown key", `spawn_env := {"keys": [], "all": true}`, "neither keys nor prefixes"},
		{"spawn_env empty prefix", `spawn_env := {"keys": [], "prefixes": [""]}`, "non-empty string"},
	}
	req := &spec.Request{Servers: []spec.Server{{ID: "s", Transport: "stdio", Command: "npx",
		Env: []spec.Pair{{Name: "K", Value: "v"}}, ToolsDeclared: true, AllowedTools: []string{"read"}}},
		Skills: []spec.Skill{{Name: "review"}}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			// The rule fires only for a request with a server K env entry, so New's own
			// sample evaluation passes and the refusal is Decide's.
			src := "package loadout.t\n\n" + tc.rule + " if input.servers[0].env.K == \"v\"\n"
			if strings.HasPrefix(tc.rule, "spawn_env") {
				src = "package loadout.t\n\ndefault " + strings.Replace(tc.rule, ":=", ":= {\"keys\": [], \"prefixes\": []}\n\n", 1)
				src = "package loadout.t\n\ndefault spawn_env := {\"keys\": [], \"prefixes\": []}\n\n" + tc.rule + " if input.servers[0].env.K == \"v\"\n"
			}
			e, err := New(ctx, Config{FS: withDefaults(t, map[string]string{"loadout/t.rego": src})})
			require.NoError(t, err, "New")
			_, err = e.Decide(ctx, req, nil, "")
			require.Error(t, err, "Decide must refuse")
			assert.True(t, IsRejected(err), "a malformed element refuses the request (exit 3): %v", err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestDecideRefusesEvalErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct{ name, rule string }{
		{"built-in error", `deny contains {"server": 0, "code": sprintf("%d", [to_number(input.servers[0].env.K)])} if input.servers[0].env.K`},
		{"conflicting values", "default spawn_env := {\"keys\": [], \"prefixes\": []}\n\nspawn_env := {\"keys\": [\"A\"], \"prefixes\": []} if input.servers[0].env.K\n\nspawn_env := {\"keys\": [\"B\"], \"prefixes\": []} if input.servers[0].env.K"},
		{"undefined spawn_env", `spawn_env := {"keys": [], "prefixes": []} if not input.servers[0].env.K`},
	}
	req := &spec.Request{Servers: []spec.Server{{ID: "s", Transport: "stdio", Command: "npx", Env: []spec.Pair{{Name: "K", Value: "v"}}}}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, err := New(ctx, Config{FS: withDefaults(t, map[string]string{"loadout/t.rego": "package loadout.t\n\n" + tc.rule + "\n"})})
			require.NoError(t, err, "New: the rule is quiet on the sample request")
			_, err = e.Decide(ctx, req, nil, "")
			require.Error(t, err)
			assert.True(t, IsRejected(err), "an evaluation error refuses the request: %v", err)
		})
	}
}

func TestNewRefusesAPolicyThatFailsOnAPlainRequest(t *testing.T) {
	t.Parallel()
	_, err := New(context.Background(), Config{FS: withDefaults(t, map[string]string{
		"loadout/t.rego": "package loadout.t\n\ndeny contains {\"server\": 7, \"code\": \"x\"} if true\n",
	})})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "fails on a plain request")
}

func TestNewNeedsARule(t *testing.T) {
	t.Parallel()
	_, err := New(context.Background(), Config{FS: fstest.MapFS{"other/x.rego": {Data: []byte("package other\n\nallow := true\n")}}, ReplaceDefaults: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no package under data.loadout")
}

func TestDecideWarnings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rules := `package loadout.w

warn contains {"code": "run_note", "msg": "about the run"} if true

warn contains {"server": i, "code": "remote", "msg": s.id} if {
	some i, s in input.servers
	s.transport == "http"
}

deny contains {"server": 1, "code": "refused"} if count(input.servers) > 2
`
	e, err := New(ctx, Config{FS: withDefaults(t, map[string]string{"loadout/w.rego": rules})})
	require.NoError(t, err)
	d, err := e.Decide(ctx, corpRequest(), nil, "")
	require.NoError(t, err)
	assert.Equal(t, []Warning{
		{Code: "run_note", Message: "about the run", Rule: "loadout/w.rego:3"},
		{Code: "remote", Server: "docs", Message: "docs", Rule: "loadout/w.rego:5"},
	}, d.Warnings, "run warnings first, then by server; none about a refused server")
}

func TestInputDocumentMasksSecrets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// The policy receives the values: this rule sees the raw secret.
	rule := `package loadout.t

deny contains {"server": 0, "code": "saw_secret"} if input.servers[0].env.TOKEN == "raw-secret"
`
	e, err := New(ctx, Config{FS: withDefaults(t, map[string]string{"loadout/t.rego": rule})})
	require.NoError(t, err)
	req := &spec.Request{
		Run: spec.Run{User: "alice", HasUser: true},
		Servers: []spec.Server{
			{ID: "a", Transport: "stdio", Command: "npx", SecretKeys: []string{"TOKEN"},
				Env: []spec.Pair{{Name: "TOKEN", Value: "raw-secret"}, {Name: "LEVEL", Value: "debug"}}},
			{Index: 1, ID: "b", Transport: "http", URL: "https://x.example/m",
				Headers: []spec.Pair{{Name: "X-Declared", Value: "by-rule"}}},
		},
		Tokens: []spec.Pair{{Name: "b", Value: "stored-token"}},
	}
	d, err := e.Decide(ctx, req, []spec.Pair{{Name: "PATH", Value: "/secret/path"}}, "")
	require.NoError(t, err)
	assert.False(t, d.Servers[0].Allow, "the policy sees the raw value")
	doc, err := e.InputDocument(req, []spec.Pair{{Name: "PATH", Value: "/secret/path"}}, "pi", []SecretRef{{Server: 1, Field: "headers", Key: "X-Declared"}})
	require.NoError(t, err)
	m := doc.(map[string]any)
	servers := m["servers"].([]any)
	a, b := servers[0].(map[string]any), servers[1].(map[string]any)
	assert.Equal(t, map[string]any{"TOKEN": "[REDACTED]", "LEVEL": "debug"}, a["env"], "secretKeys values are masked")
	assert.Equal(t, map[string]any{"X-Declared": "[REDACTED]"}, b["headers"], "a value the policy declares secret is masked")
	assert.Equal(t, "[REDACTED]", b["token"], "a stored token is masked")
	assert.Equal(t, true, b["hasToken"])
	assert.Equal(t, "pi", m["harness"], "the harness given overrides the request's")
	assert.Equal(t, []any{"PATH"}, m["hostEnv"], "host variables by name only")
	facts := b["facts"].(map[string]any)["url"].(map[string]any)
	assert.Equal(t, "x.example", facts["host"])
	assert.Equal(t, map[string]any{"commandBase": "npx"}, a["facts"])
}

func TestDecideConcurrently(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, err := New(ctx, Config{FS: withDefaults(t, map[string]string{"loadout/corp.rego": corpRules})})
	require.NoError(t, err)
	want, err := e.Decide(ctx, corpRequest(), nil, "")
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 20 {
				d, err := e.Decide(ctx, corpRequest(), nil, "")
				if err != nil {
					errs <- err
					return
				}
				if d.Servers[1].Allow != want.Servers[1].Allow || len(d.Servers[2].Reasons) != 1 {
					errs <- errors.New("a concurrent decision differs")
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestRunTestsEmbedded(t *testing.T) {
	t.Parallel()
	rep, err := RunTests(context.Background(), nil, TestOptions{Coverage: true})
	require.NoError(t, err)
	assert.True(t, rep.OK(), "the default policies' tests pass: %+v", rep)
	require.NotNil(t, rep.Coverage, "coverage was asked for")
	assert.Greater(t, rep.Coverage.Coverage, 90.0, "the default rules are covered by their tests")
}

func TestRunTestsOptions(t *testing.T) {
	t.Parallel()
	tree := fstest.MapFS{
		"p/p.rego":      {Data: []byte("package loadout.p\n\ndeny contains {\"server\": 0, \"code\": \"x\"} if input.servers[0]\n")},
		"p/p_test.rego": {Data: []byte("package loadout.p_test\n\nimport data.loadout.p\n\ntest_pass if count(p.deny) == 1 with input as {\"servers\": [{}]}\n\ntest_fail if count(p.deny) == 2 with input as {\"servers\": [{}]}\n")},
	}
	rep, err := RunTests(context.Background(), tree, TestOptions{})
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Passed)
	assert.Equal(t, 1, rep.Failed, "a failing test is reported")
	assert.False(t, rep.OK())

	rep, err = RunTests(context.Background(), tree, TestOptions{Run: "test_pass$"})
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Passed)
	assert.Zero(t, rep.Failed, "--run keeps only the matching tests")
	require.Len(t, rep.Results, 1)
}

func TestRunTestsTimeout(t *testing.T) {
	t.Parallel()
	// A test that takes far longer than its limit: a comprehension over a large range.
	tree := fstest.MapFS{
		"p/p_test.rego": {Data: []byte("package p_test\n\ntest_slow if count({x | some x in numbers.range(1, 100000000)}) > 0\n")},
	}
	rep, err := RunTests(context.Background(), tree, TestOptions{Timeout: time.Millisecond})
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Errored, "a test past its timeout errors: %+v", rep.Results)
}

func TestNewCompileErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		fsys     fstest.MapFS
		wantCode string
		wantFile string
		wantRow  int
	}{
		{
			name:     "parse error",
			fsys:     fstest.MapFS{"p/x.rego": {Data: []byte("package p\n\nallow if {\n")}},
			wantCode: ast.ParseErr, wantFile: "p/x.rego", wantRow: 4,
		},
		{
			name:     "unsafe variable",
			fsys:     fstest.MapFS{"p/x.rego": {Data: []byte("package p\n\nallow if {\n\tx == y\n}\n")}},
			wantCode: ast.UnsafeVarErr, wantFile: "p/x.rego", wantRow: 4,
		},
		{
			name:     "network built-in is not a capability",
			fsys:     fstest.MapFS{"p/x.rego": {Data: []byte("package p\n\nr := http.send({\"method\": \"get\", \"url\": \"https://x\"})\n")}},
			wantCode: ast.TypeErr, wantFile: "p/x.rego", wantRow: 3,
		},
		{
			name:     "clock built-in is not a capability",
			fsys:     fstest.MapFS{"p/x.rego": {Data: []byte("package p\n\nr := time.now_ns()\n")}},
			wantCode: ast.TypeErr, wantFile: "p/x.rego", wantRow: 3,
		},
		{
			name:     "strict mode: unused import",
			fsys:     fstest.MapFS{"p/x.rego": {Data: []byte("package p\n\nimport data.q\n\nr := 1\n")}},
			wantCode: ast.CompileErr, wantFile: "p/x.rego", wantRow: 3,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := New(context.Background(), Config{FS: tc.fsys})
			var ce *CompileError
			require.ErrorAs(t, err, &ce, "New(%s): want a *CompileError", tc.name)
			require.NotEmpty(t, ce.Errors, "New(%s): CompileError without OPA errors", tc.name)
			first := ce.Errors[0]
			assert.Equal(t, tc.wantCode, first.Code, "New(%s): OPA error code", tc.name)
			require.NotNil(t, first.Location, "New(%s): error without a location", tc.name)
			assert.Equal(t, tc.wantFile, first.Location.File, "New(%s): error file", tc.name)
			assert.Equal(t, tc.wantRow, first.Location.Row, "New(%s): error row", tc.name)
		})
	}
}

func TestNewWithoutModules(t *testing.T) {
	t.Parallel()
	_, err := New(context.Background(), Config{FS: fstest.MapFS{"data.json": {Data: []byte(`{}`)}}, ReplaceDefaults: true})
	assert.Error(t, err, "New on a tree without Rego: want an error")
}

// writeBundle is the tree fsys as an OPA bundle file with revision, signed with the HMAC
// secret key when it is not empty (what `opa build --signing-key` makes).
func writeBundle(t *testing.T, fsys fs.FS, revision, key string) []byte {
	t.Helper()
	b, err := loader.NewFileLoader().WithFS(fsys).WithRegoVersion(ast.RegoV1).AsBundle(".")
	require.NoError(t, err, "load the tree as a bundle")
	b.Manifest.Revision = revision
	if key != "" {
		require.NoError(t, b.GenerateSignature(bundle.NewSigningConfig(key, "HS256", ""), "default", false), "sign")
	}
	var buf bytes.Buffer
	require.NoError(t, bundle.NewWriter(&buf).Write(*b), "write the bundle")
	return buf.Bytes()
}

func TestBundle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tree := withDefaults(t, map[string]string{"loadout/corp.rego": corpRules})
	raw := writeBundle(t, tree, "rev-7", "")
	b, err := ReadBundle(bytes.NewReader(raw), BundleOptions{})
	require.NoError(t, err)
	e, err := New(ctx, Config{Bundle: b})
	require.NoError(t, err, "New from a bundle")
	assert.Equal(t, "rev-7", e.Revision())
	d, err := e.Decide(ctx, corpRequest(), nil, "")
	require.NoError(t, err)
	assert.False(t, d.Servers[1].Allow, "the bundle's rules decide")
	assert.True(t, d.Servers[0].Allow)
}

func TestBundleSignature(t *testing.T) {
	t.Parallel()
	tree := withDefaults(t, nil)
	signed := writeBundle(t, tree, "rev-1", "team-secret")
	_, err := ReadBundle(bytes.NewReader(signed), BundleOptions{VerificationKey: "team-secret", Algorithm: "HS256"})
	require.NoError(t, err, "a bundle signed with the key verifies")

	_, err = ReadBundle(bytes.NewReader(signed), BundleOptions{VerificationKey: "other-secret", Algorithm: "HS256"})
	assert.Error(t, err, "a bundle signed with another key is refused")

	unsigned := writeBundle(t, tree, "rev-1", "")
	_, err = ReadBundle(bytes.NewReader(unsigned), BundleOptions{VerificationKey: "team-secret", Algorithm: "HS256"})
	assert.Error(t, err, "an unsigned bundle is refused when a key is given")
}

// TestExamplePolicies: the worked examples of docs/POLICIES.md §4 (examples/policies), a
// directory with nothing but them, load over the defaults with no other change, their tests
// pass, and they decide.
func TestExamplePolicies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tree := os.DirFS("../../examples/policies")
	files, err := fs.Glob(tree, "loadout/*.rego")
	require.NoError(t, err)
	require.Len(t, files, 10, "five examples, each with its test")
	rep, err := RunTests(ctx, tree, TestOptions{Name: "examples/policies"})
	require.NoError(t, err)
	assert.True(t, rep.OK(), "the examples' tests pass: %+v", rep.Results)
	assert.Len(t, rep.Results, 9)

	e, err := New(ctx, Config{FS: tree, Name: "examples/policies"})
	require.NoError(t, err)
	d, err := e.Decide(ctx, corpRequest(), nil, "")
	require.NoError(t, err)
	var refused []string
	for i, s := range d.Servers {
		if !s.Allow {
			refused = append(refused, corpRequest().Servers[i].ID+":"+s.Reasons[0].Code)
		}
	}
	assert.Equal(t, []string{"outside:host_not_allowed", "fetch:command_denied"}, refused)

	req, _, err := spec.Parse([]byte(`{"run":{"builtinTools":["Read","Bash"]}}`))
	require.NoError(t, err)
	d, err = e.Decide(ctx, req, nil, "")
	require.NoError(t, err)
	require.Len(t, d.Run.Drop, 1, "the builtin_tools example trims the shell")
	assert.Equal(t, "Bash", d.Run.Drop[0].Key)
}

// TestMessagesNeverCarrySecrets: a rule that quotes a secret in its message does not leak
// it into dropped or warnings.
func TestMessagesNeverCarrySecrets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rule := `package loadout.leak

drop contains {"server": 0, "field": "env", "key": "LEVEL", "code": "leak", "msg": input.servers[0].env.TOKEN} if input.servers[0].env.TOKEN

warn contains {"server": 0, "code": "leak", "msg": sprintf("token is %s", [input.servers[0].env.TOKEN])} if input.servers[0].env.TOKEN
`
	e, err := New(ctx, Config{FS: withDefaults(t, map[string]string{"loadout/leak.rego": rule})})
	require.NoError(t, err)
	req := &spec.Request{Servers: []spec.Server{{ID: "a", Transport: "stdio", Command: "npx", SecretKeys: []string{"TOKEN"},
		Env: []spec.Pair{{Name: "TOKEN", Value: "raw-secret-42"}, {Name: "LEVEL", Value: "debug"}}}}}
	d, err := e.Decide(ctx, req, nil, "")
	require.NoError(t, err)
	v, err := Vet(req, d, nil, VetOptions{})
	require.NoError(t, err)
	require.Len(t, v.Dropped(), 1)
	assert.Equal(t, `env "LEVEL" removed: [REDACTED]`, v.Dropped()[0].Message)
	require.Len(t, v.Warnings(), 1)
	assert.Equal(t, "token is [REDACTED]", v.Warnings()[0].Message)
}

// TestRunGroupsReachThePolicy: run.groups, parsed from the request, is input.run.groups, so a
// rule grants by group (docs/POLICIES.md §4.4, examples/policies/loadout/shared_admins.rego).
func TestRunGroupsReachThePolicy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rule, err := os.ReadFile("../../examples/policies/loadout/shared_admins.rego")
	require.NoError(t, err)
	e, err := New(ctx, Config{FS: withDefaults(t, map[string]string{"loadout/shared_admins.rego": string(rule)})})
	require.NoError(t, err)
	for groups, want := range map[string]bool{`["dev","admins"]`: true, `["dev"]`: false, `[]`: false, `null`: false} {
		body := `{"run":{"user":"alice","groups":` + groups + `},"mcpServers":[{"id":"ops","transport":"http","url":"https://ops.example/mcp","credentials":"shared","sharedAuthority":"the ops token"}]}`
		req, _, err := spec.Parse([]byte(body))
		require.NoError(t, err, "spec.Parse(%s)", body)
		d, err := e.Decide(ctx, req, nil, "")
		require.NoError(t, err, "Decide(%s)", body)
		assert.Equal(t, want, d.Servers[0].Allow, "groups %s: the shared server is kept only for admins (%+v)", groups, d.Servers[0].Reasons)
	}
}
