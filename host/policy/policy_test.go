package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/spec"
	"github.com/loadout-dev/loadout/policies"
)

// withDecision is a policy tree whose decision is the given Rego body.
func withDecision(body string) fstest.MapFS {
	return fstest.MapFS{"loadout/decision.rego": {Data: []byte("package loadout\n\n" + body + "\n")}}
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
	_, err := New(context.Background(), Config{FS: fstest.MapFS{"data.json": {Data: []byte(`{}`)}}})
	assert.Error(t, err, "New on a tree without Rego: want an error")
}

func TestDecideRefusesBadDecisions(t *testing.T) {
	t.Parallel()
	req := &spec.Request{Servers: []spec.Server{{ID: "a", Transport: "stdio", Command: "npx"}}, Skills: []spec.Skill{}}
	valid := `"skills": [], "secrets": [], "spawnEnv": {"keys": [], "prefixes": []}, "warnings": []`
	tests := []struct {
		name      string
		body      string
		wantPath  string // "" means ErrNoDecision
		wantNoDec bool
	}{
		{name: "undefined", body: `decision := 1 if { false }`, wantNoDec: true},
		{name: "no decision rule", body: `other := 1`, wantNoDec: true},
		{name: "not an object", body: `decision := [1]`, wantPath: "decision"},
		{name: "servers missing", body: `decision := {` + valid + `}`, wantPath: "servers"},
		{name: "servers misaligned", body: `decision := {"servers": [], ` + valid + `}`, wantPath: "servers"},
		{name: "allow without reasons rule", body: `decision := {"servers": [{"allow": false, "reasons": [], "drop": []}], ` + valid + `}`, wantPath: "servers[0]"},
		{name: "allow not bool", body: `decision := {"servers": [{"allow": "yes", "reasons": [], "drop": []}], ` + valid + `}`, wantPath: "servers[0].allow"},
		{
			name:     "drop field unknown",
			body:     `decision := {"servers": [{"allow": true, "reasons": [], "drop": [{"field": "args", "key": "x", "reason": "r"}]}], ` + valid + `}`,
			wantPath: "servers[0].drop[0].field",
		},
		{
			name: "secret server out of range",
			body: `decision := {"servers": [{"allow": true, "reasons": [], "drop": []}], "skills": [],
				"secrets": [{"server": 1, "field": "env", "key": "K"}], "spawnEnv": {"keys": [], "prefixes": []}, "warnings": []}`,
			wantPath: "secrets[0].server",
		},
		{
			name: "empty spawn prefix",
			body: `decision := {"servers": [{"allow": true, "reasons": [], "drop": []}], "skills": [],
				"secrets": [], "spawnEnv": {"keys": [], "prefixes": [""]}, "warnings": []}`,
			wantPath: "spawnEnv.prefixes[0]",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, err := New(context.Background(), Config{FS: withDecision(tc.body)})
			require.NoError(t, err, "New(%s)", tc.name)
			d, err := e.Decide(context.Background(), req, nil)
			assert.Nil(t, d, "Decide(%s): want no decision", tc.name)
			assert.True(t, IsRejected(err), "Decide(%s) = %v: want a rejection", tc.name, err)
			if tc.wantNoDec {
				assert.ErrorIs(t, err, ErrNoDecision, "Decide(%s)", tc.name)
				return
			}
			var me *MalformedError
			require.ErrorAs(t, err, &me, "Decide(%s): want a *MalformedError", tc.name)
			assert.Equal(t, tc.wantPath, me.Path, "Decide(%s): malformed path", tc.name)
		})
	}
}

// TestInputMatchesJSON holds the hand-built ast input equal to the JSON encoding of Input, the
// form policy authors write their test inputs in.
func TestInputMatchesJSON(t *testing.T) {
	t.Parallel()
	req := benchRequest(6)
	req.Servers[1].Credentials, req.Servers[1].HasUsers, req.Servers[1].Users = "shared", true, []string{"alice"}
	req.Servers[1].ToolExposure = []spec.Pair{{Name: "*", Value: "deferred"}}
	req.Servers[2].Timeout = 2.5
	req.Servers[3].Env = []spec.Pair{{Name: "A=B", Value: "\x00"}}
	req.Servers[3].URL = `http://u@x\y:0/`
	hostEnv := []spec.Pair{{Name: "PATH", Value: "/bin"}}
	facts := defaultFacts(t, req, hostEnv)
	got := inputValue(req, &facts)
	// The ast input sends a nil list as [] (spec.Parse never returns nil lists); so does JSON
	// once the nil lists are filled.
	for i := range req.Servers {
		s := &req.Servers[i]
		for _, l := range []*[]string{&s.Args, &s.AllowedTools, &s.SecretKeys, &s.Users} {
			if *l == nil {
				*l = []string{}
			}
		}
		for _, l := range []*[]spec.Pair{&s.Env, &s.Headers, &s.ToolExposure} {
			if *l == nil {
				*l = []spec.Pair{}
			}
		}
	}

	b, err := json.Marshal(Input{Request: req, Facts: facts})
	require.NoError(t, err, "json.Marshal(Input)")
	want, err := ast.ValueFromReader(bytesReader(b))
	require.NoError(t, err, "ast.ValueFromReader(json input)")
	assert.Equal(t, 0, want.Compare(got), "inputValue differs from the JSON input:\n got %v\nwant %v", got, want)
}

func TestDecideConcurrently(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, err := New(ctx, Config{})
	require.NoError(t, err, "New with the embedded policies")
	req := benchRequest(10)
	want, err := e.Decide(ctx, req, benchHostEnv)
	require.NoError(t, err, "Decide")
	wantJSON, err := json.Marshal(want)
	require.NoError(t, err, "json.Marshal(decision)")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 20 {
				d, err := e.Decide(ctx, req, benchHostEnv)
				if err != nil {
					errs <- err
					return
				}
				got, _ := json.Marshal(d)
				if string(got) != string(wantJSON) {
					errs <- errors.New("decision differs between concurrent calls: " + string(got))
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
	rep, err := RunTests(context.Background(), nil)
	require.NoError(t, err, "RunTests(embedded policies)")
	assert.True(t, rep.OK(), "RunTests(embedded policies): want every test to pass, got %+v", rep)
	assert.Greater(t, rep.Passed, 10, "RunTests(embedded policies): too few tests ran")
	for _, r := range rep.Results {
		assert.True(t, r.Pass, "policy test %s.%s (%s) failed: %s %v", r.Package, r.Name, r.Location, r.Error, r.Failed)
	}
}

func TestRunTestsReportsFailures(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{}
	for _, name := range []string{"tunables/url.yaml", "loadout/url/url.rego"} {
		data, err := policies.FS.ReadFile(name)
		require.NoError(t, err, "read embedded %s", name)
		fsys[name] = &fstest.MapFile{Data: data}
	}
	fsys["loadout/url/url_test.rego"] = &fstest.MapFile{Data: []byte(`package loadout.url_test

import data.loadout.url

test_passes if url.flag_codes.urlMissing == "url_missing"

test_fails if url.flag_codes.urlMissing == "url_userinfo"

cases := {"a": 1, "b": 2}

test_table[name] if {
	some name, v in cases
	v == 1
}
`)}
	rep, err := RunTests(context.Background(), fsys)
	require.NoError(t, err, "RunTests")
	assert.False(t, rep.OK(), "RunTests with a failing test: want not OK")
	assert.Equal(t, 2, rep.Passed, "RunTests: passed (test_passes, test_table[a])")
	assert.Equal(t, 2, rep.Failed, "RunTests: failed (test_fails, test_table[b])")
	var failed []string
	for _, r := range rep.Results {
		failed = append(failed, r.Failed...)
	}
	assert.Equal(t, []string{"[b]"}, failed, "RunTests: failed sub-cases")
}

func TestRunTestsEmpty(t *testing.T) {
	t.Parallel()
	rep, err := RunTests(context.Background(), withDecision(`decision := {}`))
	require.NoError(t, err, "RunTests on a tree without tests")
	assert.False(t, rep.OK(), "RunTests without tests: want not OK (--fail-on-empty)")
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// TestDecisionRaw holds the JSON form of the decision (built on first use from the evaluated
// AST) to the decoded decision.
func TestDecisionRaw(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, err := New(ctx, Config{})
	require.NoError(t, err, "New with the embedded policies")
	req := benchRequest(4)
	d, err := e.Decide(ctx, req, benchHostEnv)
	require.NoError(t, err, "Decide")
	raw, ok := d.Raw().(map[string]any)
	require.True(t, ok, "Decision.Raw() = %T, want a JSON object", d.Raw())
	rawJSON, err := json.Marshal(raw)
	require.NoError(t, err, "json.Marshal(Decision.Raw())")
	var fromRaw Decision
	require.NoError(t, json.Unmarshal(rawJSON, &fromRaw), "json.Unmarshal(Decision.Raw())")
	assert.Equal(t, d.Servers, fromRaw.Servers, "Decision.Raw() servers vs decoded servers")
	assert.Equal(t, d.Secrets, fromRaw.Secrets, "Decision.Raw() secrets vs decoded secrets")
	assert.Equal(t, d.SpawnEnv, fromRaw.SpawnEnv, "Decision.Raw() spawnEnv vs decoded spawnEnv")
	again, _ := d.Raw().(map[string]any)
	assert.Equal(t, fmt.Sprintf("%p", raw), fmt.Sprintf("%p", again), "Decision.Raw() twice: want the same converted document")
}
