package policy

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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
	req := &spec.Request{Servers: []spec.Server{{ID: "a", Transport: "stdio", Command: "npx", Env: []spec.Pair{{Name: "K", Value: "v"}}}}, Skills: []spec.Skill{}}
	// part is a decision of one valid part followed by a part of the given statements.
	part := func(statements string) string {
		return `decision := [["server", "id_invalid", set(), "spawn_env", [], []], [` + statements + `]]`
	}
	tests := []struct {
		name      string
		body      string
		wantPath  string // "" means ErrNoDecision
		wantNoDec bool
	}{
		{name: "undefined", body: `decision := 1 if { false }`, wantNoDec: true},
		{name: "no decision rule", body: `other := 1`, wantNoDec: true},
		{name: "not a list", body: `decision := {"servers": []}`, wantPath: "decision"},
		{name: "part not a list", body: `decision := [[], {}]`, wantPath: "decision[1]"},
		{name: "unknown statement", body: part(`"allow", "x", {0}`), wantPath: "decision[1][0]"},
		{name: "statement not a string", body: part(`{0}`), wantPath: "decision[1][0]"},
		{name: "statement cut short", body: part(`"server", "id_invalid"`), wantPath: "decision[1][0]"},
		{name: "codes not a set", body: part(`"server", "id_invalid", 0`), wantPath: "decision[1][2]"},
		{name: "server out of range", body: part(`"server", "id_invalid", {1}`), wantPath: "decision[1][2]"},
		{name: "empty code", body: part(`"server", "", {0}`), wantPath: "decision[1][1]"},
		{name: "code not a string", body: part(`"server", 1, {0}`), wantPath: "decision[1][1]"},
		{name: "skill out of range", body: part(`"skill", "skill_name_denied", {0}`), wantPath: "decision[1][2]"},
		{name: "drop of an unknown field", body: part(`"drop", "args", "x", set()`), wantPath: "decision[1][1]"},
		{name: "drop without code", body: part(`"drop", "env", "", {[0, "K"]}`), wantPath: "decision[1][2]"},
		{name: "drop entry not a pair", body: part(`"drop", "env", "env_key_refused", {"K"}`), wantPath: "decision[1][3]"},
		{name: "drop entries not a set", body: part(`"drop", "env", "env_key_refused", "K"`), wantPath: "decision[1][3]"},
		{name: "secret server out of range", body: part(`"secret", "env", {[1, "K"]}`), wantPath: "decision[1][2]"},
		{name: "secret of an unknown field", body: part(`"secret", "args", set()`), wantPath: "decision[1][1]"},
		{name: "token not an index", body: part(`"secret", "token", {"a"}`), wantPath: "decision[1][2]"},
		{name: "spawn keys not a list", body: part(`"spawn_env", "PATH", []`), wantPath: "decision[1][1]"},
		{name: "spawn key not a string", body: part(`"spawn_env", [1], []`), wantPath: "decision[1][1][0]"},
		{name: "empty spawn prefix", body: part(`"spawn_env", [], ["LC_", ""]`), wantPath: "decision[1][2][1]"},
		{name: "warning without code", body: part(`"warn", "", "m", {0}`), wantPath: "decision[1][1]"},
		{name: "warning message not a string", body: part(`"warn", "c", 1, {0}`), wantPath: "decision[1][2]"},
		{name: "warning server out of range", body: part(`"warn", "c", "m", {1}`), wantPath: "decision[1][3]"},
		{name: "warning servers not a set", body: part(`"warn", "c", "m", 0`), wantPath: "decision[1][3]"},
		{name: "warning skill out of range", body: part(`"warn_skill", "c", "m", {0}`), wantPath: "decision[1][3]"},
		{name: "second statement bad", body: part(`"server", "id_invalid", {0}, "skill", "x"`), wantPath: "decision[1][3]"},
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

// TestDecideBodiesTheDataDecides holds a decision that partial evaluation leaves as several
// bodies, one per case of the input, to the body the request meets.
func TestDecideBodiesTheDataDecides(t *testing.T) {
	t.Parallel()
	body := `codes := {true: "with_user", false: "without_user"}

decision := [["server", codes[input.request.run.hasUser], {0}]]`
	e, err := New(context.Background(), Config{FS: withDecision(body)})
	require.NoError(t, err, "New(two-case decision)")
	for _, tc := range []struct {
		run  spec.Run
		want string
	}{
		{run: spec.Run{User: "alice", HasUser: true}, want: "with_user"},
		{run: spec.Run{}, want: "without_user"},
	} {
		req := &spec.Request{Run: tc.run, Servers: []spec.Server{{ID: "a"}}, Skills: []spec.Skill{}}
		d, err := e.Decide(context.Background(), req, nil)
		require.NoError(t, err, "Decide(run %+v)", tc.run)
		assert.Equal(t, []string{tc.want}, d.Servers[0].Reasons, "Decide(run %+v): servers[0].Reasons", tc.run)
	}
}

// TestNewReservesThePartialPackage holds a tree that defines the package New builds the
// partially evaluated decision in to an error: its rules would join the decision's.
func TestNewReservesThePartialPackage(t *testing.T) {
	t.Parallel()
	fsys := withDecision(`decision := [["server", "id_invalid", {0}]]`)
	fsys["loadout_partial/p.rego"] = &fstest.MapFile{Data: []byte("package loadout_partial\n\ndecision := []\n")}
	_, err := New(context.Background(), Config{FS: fsys})
	var ce *CompileError
	require.ErrorAs(t, err, &ce, "New(tree defining loadout_partial): want a *CompileError")
	require.NotNil(t, ce.Errors[0].Location, "New(tree defining loadout_partial): error without a location")
	assert.Equal(t, "loadout_partial/p.rego", ce.Errors[0].Location.File, "New(tree defining loadout_partial): error file")
}

// TestDecideWarnings holds the decoded warnings to the statements that name them: one per
// server (skill) of each statement, in order; a refused server's left out.
func TestDecideWarnings(t *testing.T) {
	t.Parallel()
	body := `decision := [["server", "id_invalid", {2}], [` +
		`"warn", "a", "m", {2, 1, 0}, "warn_skill", "a", "m", {0}, ` +
		`"warn", "b", "n", [1], "warn", "d", "p", set()]]`
	e, err := New(context.Background(), Config{FS: withDecision(body)})
	require.NoError(t, err, "New(warnings decision)")
	req := &spec.Request{
		Servers: []spec.Server{{ID: "zero"}, {ID: "one", Index: 1}, {ID: "two", Index: 2}},
		Skills:  []spec.Skill{{Name: "review"}},
	}
	d, err := e.Decide(context.Background(), req, nil)
	require.NoError(t, err, "Decide(warnings decision)")
	assert.Equal(t, []Warning{
		{Code: "a", Server: "zero", Message: "m"},
		{Code: "a", Server: "one", Message: "m"},
		{Code: "a", Skill: "review", Message: "m"},
		{Code: "b", Server: "one", Message: "n"},
	}, d.Warnings, "Decide(warnings decision): warnings (server two is refused, an empty set warns about nobody)")
}

// TestInputMatchesJSON holds the hand-built ast input equal to the JSON encoding of Input, the
// form policy authors write their test inputs in (each set a sorted JSON array).
func TestInputMatchesJSON(t *testing.T) {
	t.Parallel()
	req := benchRequest(6)
	req.Servers[1].Credentials, req.Servers[1].HasUsers, req.Servers[1].Users = "shared", true, []string{"alice"}
	req.Servers[1].SharedAuthority = "team"
	req.Servers[2].Env = append(req.Servers[2].Env, spec.Pair{Name: "EMPTY", Value: ""})
	req.Servers[2].SecretKeys = append(req.Servers[2].SecretKeys, "EMPTY")
	req.Servers[3].Env = []spec.Pair{{Name: "A=B", Value: "\x00"}}
	req.Servers[3].URL = `http://u@x\y:0/`
	req.Servers[4].AllowedTools = []string{"x,Bash", "*"}
	req.Servers[5].Credentials = "user"
	req.Tokens = append(req.Tokens, spec.Pair{Name: "srv-3", Value: "t"})
	req.Skills = append(req.Skills, spec.Skill{Index: 1, Name: "deploy"})
	hostEnv := []spec.Pair{{Name: "PATH", Value: "/bin"}}
	facts := defaultFacts(t, req, hostEnv)
	e, err := defaultEngine()
	require.NoError(t, err, "New with the embedded policies")
	interned.RLock() // as Decide does: other tests load policies meanwhile
	got, err := ast.JSON(inputValue(req, &facts, e.tunables))
	interned.RUnlock()
	require.NoError(t, err, "ast.JSON(inputValue)")

	in := policyInput(req, &facts, e.tunables)
	b, err := json.Marshal(in.sorted())
	require.NoError(t, err, "json.Marshal(Input)")
	var want any
	require.NoError(t, json.Unmarshal(b, &want), "json.Unmarshal(Input)")
	gotJSON, err := json.Marshal(got)
	require.NoError(t, err, "json.Marshal(ast input)")
	wantJSON, err := json.Marshal(want)
	require.NoError(t, err, "json.Marshal(JSON input)")
	assert.JSONEq(t, string(wantJSON), string(gotJSON), "inputValue differs from the JSON encoding of Input")
	assert.Contains(t, string(gotJSON), `"keyRefused":[[0,"LD_PRELOAD"],[2,"LD_PRELOAD"],[4,"LD_PRELOAD"]]`,
		"inputValue: want every refused env key as a [server, key] pair")
	assert.Contains(t, string(gotJSON), `"noneValid":[4]`,
		"inputValue: want the restricted server left without a valid tool")
	assert.Contains(t, string(gotJSON), `"credentials":{"shared":[1],"user":[5]}`,
		"inputValue: want the servers grouped by their credentials")
	assert.Contains(t, string(gotJSON), `"userCredential":{"":[[3,"Authorization"]],"shared":[[1,"Authorization"]],"user":[[5,"Authorization"]]}`,
		"inputValue: want the user-credential headers grouped by their server's credentials")
	assert.Contains(t, string(gotJSON), `"tokenHeader":{"http":[[3,"Authorization"]],"stdio":[]}`,
		"inputValue: want the Authorization header of the http server with a stored token")
	assert.Contains(t, string(gotJSON), `"hasUsers":[1]`, "inputValue: the server with a users list")
	assert.Contains(t, string(gotJSON), `"userListed":[1]`, "inputValue: the server listing the run's user")
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

facts := {
	"http": {0}, "url": {"baseMatch": set(), "schemeAnywhere": set(), "schemeLoopback": set(), "loopback": set()},
	"flags": {"urlMissing": set(), "urlBadBytes": set(), "urlUserinfo": set(), "urlHostsDisagree": set(), "urlBadPort": set(), "urlEmptyHost": set()},
}

test_passes if {
	v := url.verdict with input as {"facts": facts}
	v[20] == {0}
}

test_fails if {
	v := url.verdict with input as {"facts": facts}
	v[20] == set()
}

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
	raw, ok := d.Raw().([]any)
	require.True(t, ok, "Decision.Raw() = %T, want the JSON list of parts", d.Raw())
	require.Len(t, raw, 3, "Decision.Raw(): the URL, allowlist and secret parts")
	// benchRequest(4): servers 0 and 2 lose LD_PRELOAD; every server's named secret is listed.
	allow := raw[1].([]any)
	at := slices.Index(allow, any("env_key_refused"))
	require.Positive(t, at, "Decision.Raw() allowlist part: want an env_key_refused drop")
	assert.Equal(t, []any{"drop", "env", "env_key_refused", []any{[]any{json.Number("0"), "LD_PRELOAD"}, []any{json.Number("2"), "LD_PRELOAD"}}},
		allow[at-2:at+2], "Decision.Raw(): the refused keys as [server, key] pairs")
	secrets := raw[2].([]any)
	assert.Equal(t, []any{"secret", "headers", []any{[]any{json.Number("1"), "Authorization"}, []any{json.Number("3"), "Authorization"}}},
		secrets[3:6], "Decision.Raw(): the secret part's headers")
	assert.Len(t, d.Secrets, 6, "Decide: secrets of benchRequest(4) (FS_TOKEN and token of 0 and 2, Authorization of 1 and 3)")
	again, _ := d.Raw().([]any)
	assert.Equal(t, fmt.Sprintf("%p", raw), fmt.Sprintf("%p", again), "Decision.Raw() twice: want the same converted document")
}

// TestDecideTurnsSetsIntoVerdicts holds the decoded Decision (aligned verdicts, drops and
// secrets in request order, warnings of allowed servers only) to what the default policy's
// sets say, request by request.
func TestDecideTurnsSetsIntoVerdicts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, err := New(ctx, Config{})
	require.NoError(t, err, "New with the embedded policies")
	restricted := func(id, transport, url string) spec.Server {
		return spec.Server{ID: id, Transport: transport, URL: url, Command: "npx", ToolsDeclared: true, AllowedTools: []string{"x,Bash"}}
	}
	tests := []struct {
		name         string
		servers      []spec.Server
		tokens       []spec.Pair
		wantAllow    []bool
		wantReasons  [][]string
		wantDrops    [][]Drop
		wantSecrets  []SecretRef
		wantWarnedOn []string
	}{
		{
			name: "drops in request order, first reason wins",
			servers: []spec.Server{{ID: "fs", Transport: "stdio", Command: "npx", Credentials: "user",
				Env:        []spec.Pair{{Name: "LD_PRELOAD", Value: "x"}, {Name: "KEEP", Value: "1"}, {Name: "MCP_ACCESS_TOKEN", Value: "t"}, {Name: "A=B", Value: "v"}},
				SecretKeys: []string{"KEEP", "LD_PRELOAD"}}},
			wantAllow:   []bool{true},
			wantReasons: [][]string{{}},
			wantDrops: [][]Drop{{
				{Field: "env", Key: "LD_PRELOAD", Reason: "env_key_refused"},
				{Field: "env", Key: "MCP_ACCESS_TOKEN", Reason: "env_key_refused"},
				{Field: "env", Key: "A=B", Reason: "env_key_invalid"},
			}},
			wantSecrets: []SecretRef{{Server: 0, Field: "env", Key: "KEEP"}},
		},
		{
			name:         "a refused server has no secrets and no warnings",
			servers:      []spec.Server{restricted("web", "http", "http://evil.example/"), restricted("local", "http", "https://mcp.example.com/")},
			tokens:       []spec.Pair{{Name: "web", Value: "t1"}, {Name: "local", Value: "t2"}},
			wantAllow:    []bool{false, true},
			wantReasons:  [][]string{{"url_not_allowed"}, {}},
			wantDrops:    [][]Drop{{{Field: "allowedTools", Key: "x,Bash", Reason: "tool_name_invalid"}}, {{Field: "allowedTools", Key: "x,Bash", Reason: "tool_name_invalid"}}},
			wantSecrets:  []SecretRef{{Server: 1, Field: "token", Key: "Authorization"}},
			wantWarnedOn: []string{"local"},
		},
		{
			name: "a stored token replaces Authorization, a per-user server loses it first",
			servers: []spec.Server{
				{ID: "tok", Transport: "http", URL: "https://a.example/", Headers: []spec.Pair{{Name: "authorization", Value: "Bearer x"}, {Name: "X-Key", Value: "k"}}, SecretKeys: []string{"X-Key"}},
				{ID: "own", Transport: "http", URL: "https://b.example/", Credentials: "user", Headers: []spec.Pair{{Name: "Authorization", Value: "Bearer y"}}},
				{ID: "plain", Transport: "http", URL: "https://c.example/", Headers: []spec.Pair{{Name: "Authorization", Value: "Bearer z"}}},
			},
			tokens:      []spec.Pair{{Name: "tok", Value: "t1"}, {Name: "own", Value: "t2"}},
			wantAllow:   []bool{true, true, true},
			wantReasons: [][]string{{}, {}, {}},
			wantDrops: [][]Drop{
				{{Field: "headers", Key: "authorization", Reason: "replaced_by_token"}},
				{{Field: "headers", Key: "Authorization", Reason: "credentials_user"}},
				{},
			},
			wantSecrets: []SecretRef{
				{Server: 0, Field: "headers", Key: "X-Key"}, {Server: 0, Field: "token", Key: "Authorization"},
				{Server: 1, Field: "token", Key: "Authorization"},
			},
		},
		{
			name:        "several codes, sorted",
			servers:     []spec.Server{{ID: "Bad_", Transport: "stdio", Command: "-e"}},
			wantAllow:   []bool{false},
			wantReasons: [][]string{{"command_invalid", "id_invalid", "id_trailing_underscore"}},
			wantDrops:   [][]Drop{{}},
			wantSecrets: []SecretRef{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := &spec.Request{Run: spec.Run{}, Servers: tc.servers, Tokens: tc.tokens, Skills: []spec.Skill{}}
			for i := range req.Servers {
				req.Servers[i].Index = i
			}
			d, err := e.Decide(ctx, req, nil)
			require.NoError(t, err, "Decide(%s)", tc.name)
			require.Len(t, d.Servers, len(tc.servers), "Decide(%s): one verdict per server", tc.name)
			for i, sd := range d.Servers {
				assert.Equal(t, tc.wantAllow[i], sd.Allow, "Decide(%s): servers[%d].Allow", tc.name, i)
				assert.Equal(t, tc.wantReasons[i], sd.Reasons, "Decide(%s): servers[%d].Reasons", tc.name, i)
				assert.Equal(t, tc.wantDrops[i], sd.Drop, "Decide(%s): servers[%d].Drop", tc.name, i)
			}
			if tc.wantSecrets == nil {
				tc.wantSecrets = []SecretRef{}
			}
			assert.Equal(t, tc.wantSecrets, d.Secrets, "Decide(%s): secrets", tc.name)
			var warned []string
			for _, w := range d.Warnings {
				warned = append(warned, w.Server)
			}
			assert.Equal(t, tc.wantWarnedOn, warned, "Decide(%s): servers warned about", tc.name)
		})
	}
}

// TestDecideCredentialRules runs the credential rules of the default policy end to end: the
// facts Go groups and the codes the Rego gives them.
func TestDecideCredentialRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, err := New(ctx, Config{})
	require.NoError(t, err, "New with the embedded policies")
	srv := func(creds, authority string, users ...string) spec.Server {
		return spec.Server{ID: "a", Transport: "stdio", Command: "npx", Credentials: creds, SharedAuthority: authority,
			HasUsers: users != nil, Users: users}
	}
	alice := spec.Run{User: "alice", HasUser: true}
	tests := []struct {
		name string
		srv  spec.Server
		run  spec.Run
		want []string
	}{
		{name: "no credentials", srv: srv("", ""), run: alice, want: []string{}},
		{name: "per-user", srv: srv("user", ""), run: spec.Run{}, want: []string{}},
		{name: "unknown mode", srv: srv("admin", ""), run: alice, want: []string{"credentials_invalid"}},
		{name: "shared without authority", srv: srv("shared", " "), run: alice, want: []string{"shared_authority_invalid"}},
		{name: "shared", srv: srv("shared", "team"), run: alice, want: []string{}},
		{name: "users on a per-user server", srv: srv("user", "", "alice"), run: alice, want: []string{"users_not_shared"}},
		{name: "shared, user listed", srv: srv("shared", "team", "bob", "alice"), run: alice, want: []string{}},
		{name: "shared, user not listed", srv: srv("shared", "team", "bob"), run: alice, want: []string{"user_not_allowed"}},
		{name: "shared, empty users", srv: srv("shared", "team", []string{}...), run: alice, want: []string{"user_not_allowed"}},
		{name: "shared, no run user", srv: srv("shared", "team", "alice"), run: spec.Run{}, want: []string{"user_missing"}},
		{
			name: "unknown mode with users", srv: srv("admin", "", "alice"), run: alice,
			want: []string{"credentials_invalid", "users_not_shared"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := &spec.Request{Run: tc.run, Servers: []spec.Server{tc.srv}, Skills: []spec.Skill{}}
			d, err := e.Decide(ctx, req, nil)
			require.NoError(t, err, "Decide(%s)", tc.name)
			assert.Equal(t, tc.want, d.Servers[0].Reasons, "Decide(%s): servers[0].Reasons", tc.name)
		})
	}
}

// sorted returns in with every set sorted as the policy's sets are (ints ascending, entries by
// server then key) and nil lists as empty ones: what the policy sees, in JSON.
func (in Input) sorted() Input {
	sortInts := func(s *[]int) {
		*s = slices.Sorted(slices.Values(*s))
		if *s == nil {
			*s = []int{}
		}
	}
	sortRefs := func(s *[]EntryRef) {
		c := slices.Clone(*s)
		slices.SortFunc(c, func(a, b EntryRef) int { return cmp.Or(cmp.Compare(a.Server, b.Server), cmp.Compare(a.Key, b.Key)) })
		*s = slices.CompactFunc(c, func(a, b EntryRef) bool { return a == b })
		if *s == nil {
			*s = []EntryRef{}
		}
	}
	f := &in.Facts
	for _, s := range []*[]int{&f.Flags.IDInvalid, &f.Flags.IDDoubleUnderscore, &f.Flags.IDTrailingUnderscore,
		&f.Flags.IDReserved, &f.Flags.TransportInvalid, &f.Flags.CommandInvalid, &f.Flags.CredentialsUnknown,
		&f.Flags.URLMissing, &f.Flags.URLBadBytes, &f.Flags.URLUserinfo, &f.Flags.URLHostsDisagree,
		&f.Flags.URLBadPort, &f.Flags.URLEmptyHost, &f.URL.BaseMatch, &f.URL.SchemeAnywhere, &f.URL.SchemeLoopback,
		&f.URL.Loopback, &f.HTTP, &f.Token, &f.SharedAuthorityOK, &f.HasUsers, &f.UserListed, &f.Tools.NoneValid,
		&f.Skills.NameDenied} {
		sortInts(s)
	}
	for _, s := range []*[]EntryRef{&f.Env.KeyInvalid, &f.Env.KeyRefused, &f.Env.ValueInvalid,
		&f.Env.SecretNamed, &f.Env.ValueEmpty, &f.Headers.NameInvalid, &f.Headers.ValueInvalid,
		&f.Headers.SecretNamed, &f.Headers.AlwaysSecret, &f.Headers.ValueEmpty, &f.Tools.NameInvalid} {
		sortRefs(s)
	}
	for _, g := range []map[string][]int{f.Credentials} {
		for k, s := range g {
			sortInts(&s)
			g[k] = s
		}
	}
	for _, g := range []map[string][]EntryRef{f.Env.UserCredential, f.Headers.UserCredential, f.Headers.TokenHeader} {
		for k, s := range g {
			sortRefs(&s)
			g[k] = s
		}
	}
	if f.HostEnv == nil {
		f.HostEnv = []string{}
	}
	return in
}
