package policy

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/conformity/corpus"
	"github.com/loadout-dev/loadout/host/spec"
)

// requireSameDecision holds the residual's decision for req to OPA's evaluation of the
// prepared query, value for value.
func requireSameDecision(t testing.TB, e *Engine, req *spec.Request, hostEnv []spec.Pair) {
	t.Helper()
	interned.RLock() // as Decide does: other tests load policies meanwhile
	defer interned.RUnlock()
	ctx := context.Background()
	facts := computeFacts(req, hostEnv, e.tunables)
	input := inputValue(req, &facts, e.tunables)
	want, wantErr := e.evalQuery(ctx, input)
	got, ok := e.residual.eval(ctx, input)
	if wantErr != nil {
		require.False(t, ok, "residual decided %v where OPA's evaluation fails: %v", got, wantErr)
		return
	}
	require.True(t, ok, "residual did not decide where OPA's evaluation gives %v", want)
	require.Equal(t, 0, ast.Compare(want.Value, got.Value), "residual decision differs from OPA's evaluation\nresidual: %v\nOPA:      %v", got, want)
}

// TestResidualDefaultPolicy holds the embedded policies inside the fragment a residual runs,
// so that their decisions never need OPA's evaluator.
func TestResidualDefaultPolicy(t *testing.T) {
	t.Parallel()
	e, err := New(context.Background(), Config{})
	require.NoError(t, err, "New with the embedded policies")
	require.NotNil(t, e.residual, "the embedded policies' partially evaluated decision has no residual")
	assert.Len(t, e.residual.bodies, 2, "residual bodies (one per value of run.hasUser)")
	for _, n := range []int{0, 1, 5, 50} {
		req := benchRequest(n)
		requireSameDecision(t, e, req, benchHostEnv)
		req.Run = spec.Run{}
		requireSameDecision(t, e, req, benchHostEnv)
	}
}

// TestResidualMatchesOPAOnCorpus holds the residual to OPA's evaluation on every request of
// the conformity corpus.
func TestResidualMatchesOPAOnCorpus(t *testing.T) {
	t.Parallel()
	cases, err := corpus.Load(*casesDir)
	require.NoError(t, err, "corpus.Load(%s)", *casesDir)
	e, err := New(context.Background(), Config{})
	require.NoError(t, err, "New with the embedded policies")
	decided := 0
	for _, c := range cases {
		req, _, err := spec.Parse(c.Body())
		if err != nil {
			continue
		}
		req.Tokens = sortedPairs(c.Context.Tokens)
		t.Run(c.File, func(t *testing.T) { requireSameDecision(t, e, req, sortedPairs(c.Context.HostEnv)) })
		decided++
	}
	assert.Greater(t, decided, 10, "corpus requests that parse")
}

// FuzzResidualMatchesOPA holds the residual to OPA's evaluation on requests built from the
// fuzzer's bytes: servers of every transport, credentials, users, URLs, env keys, headers and
// tools the rules treat differently, and with the run's user or without.
func FuzzResidualMatchesOPA(f *testing.F) {
	e, err := New(context.Background(), Config{})
	require.NoError(f, err, "New with the embedded policies")
	f.Add([]byte{})
	f.Add([]byte("\x03\x01\x00\x02\x05\x07\x01\x03\x02\x04\x06\x00\x01"))
	f.Add([]byte("\x08\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6\xf5\xf4\xf3\xf2\xf1\xf0\x10\x20\x30"))
	f.Fuzz(func(t *testing.T, data []byte) {
		requireSameDecision(t, e, fuzzRequest(data), benchHostEnv)
	})
}

// fuzzRequest builds a request from data, one choice per byte (zero once data runs out).
func fuzzRequest(data []byte) *spec.Request {
	next := func(n int) int {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return int(b) % n
	}
	pick := func(ss ...string) string { return ss[next(len(ss))] }
	req := &spec.Request{Harness: "claude", Skills: []spec.Skill{}}
	if next(2) == 1 {
		req.Run = spec.Run{User: "alice", HasUser: true}
	}
	for range next(4) {
		req.Skills = append(req.Skills, spec.Skill{Name: pick("review", "servers", "a_b", "bad name")})
	}
	for i := range next(9) {
		s := spec.Server{
			Index:       i,
			ID:          pick("fs", "u_x", "servers", "a__b", "b_", fmt.Sprintf("s%d", i), "bad id"),
			Transport:   pick("stdio", "http", "sse", ""),
			Credentials: pick("", "", "user", "shared", "bogus"),
			Enabled:     true,
		}
		switch s.Transport {
		case "stdio":
			s.Command = pick("/usr/bin/mcp", "npx", "", "bad\ncommand")
		default:
			s.URL = pick("https://mcp.example.com/mcp", "http://127.0.0.1:8080/mcp", "http://example.com/",
				"https://u:p@example.com/", "", "https://example.com:99999/", "ftp://example.com/", "https://exa mple.com/")
		}
		if next(3) == 0 {
			s.SharedAuthority = pick("", "team", "two\nlines")
		}
		if next(3) == 0 {
			s.HasUsers = true
			s.Users = []string{pick("alice", "bob")}
		}
		for range next(4) {
			s.Env = append(s.Env, spec.Pair{
				Name:  pick("FS_TOKEN", "LD_PRELOAD", "LOG_LEVEL", "MCP_ACCESS_TOKEN", "bad key", "PATH", "GITHUB_TOKEN"),
				Value: pick("v", "", "line\nbreak"),
			})
		}
		for range next(4) {
			s.Headers = append(s.Headers, spec.Pair{
				Name:  pick("Authorization", "X-Trace", "Cookie", "bad name", "X-Api-Key"),
				Value: pick("Bearer t", "", "a\r\nb"),
			})
		}
		if next(2) == 1 {
			s.ToolsDeclared = true
			for range next(3) {
				s.AllowedTools = append(s.AllowedTools, pick("read", "x,Bash", "*", "write"))
			}
		}
		for range next(3) {
			s.SecretKeys = append(s.SecretKeys, pick("FS_TOKEN", "Authorization", "X-Trace"))
		}
		if next(2) == 1 {
			req.Tokens = append(req.Tokens, spec.Pair{Name: s.ID, Value: "token"})
		}
		req.Servers = append(req.Servers, s)
	}
	return req
}

// TestResidualLeavesTheRestToOPA holds every decision a residual cannot give exactly to OPA's:
// a policy outside the fragment has no residual, and an evaluation the residual cannot finish
// (a reference the input lacks, a built-in error, conflicting bodies, no body defined) ends as
// OPA's evaluation ends.
func TestResidualLeavesTheRestToOPA(t *testing.T) {
	t.Parallel()
	req := &spec.Request{Harness: "claude", Run: spec.Run{User: "alice", HasUser: true},
		Servers: []spec.Server{{ID: "a", Transport: "http", URL: "https://example.com/"}}, Skills: []spec.Skill{}}
	tests := []struct {
		name        string
		body        string
		residual    bool
		wantReasons []string // the server's reasons when the decision is defined
		wantErr     string   // a substring of the error otherwise ("" with wantNoDec)
		wantNoDec   bool
	}{
		{name: "in the fragment", residual: true, wantReasons: []string{"c"},
			body: `decision := [["server", "c", (input.facts.http | set()) - input.facts.token]]`},
		{name: "comprehension", residual: false, wantReasons: []string{"c"},
			body: `decision := [["server", "c", {i | some i in input.facts.http}]]`},
		{name: "built-in outside the fragment", residual: false, wantReasons: []string{"claude"},
			body: `decision := [["server", lower(input.request.harness), input.facts.http]]`},
		{name: "reference the input lacks", residual: true, wantNoDec: true,
			body: `decision := [["server", "c", input.facts.nothing]]`},
		{name: "built-in error", residual: true, wantErr: "minus: operand 2 must be number",
			body: `decision := [["server", "c", input.facts.http - input.request.harness]]`},
		{name: "conflicting bodies", residual: true, wantErr: "produced conflicting values",
			body: "decision := [[\"server\", \"a\", input.facts.http]] if { input.request.harness = \"claude\" }\n" +
				"decision := [[\"server\", \"b\", input.facts.http]] if { input.request.run.user = \"alice\" }"},
		{name: "no body defined", residual: true, wantNoDec: true,
			body: "decision := [[\"server\", \"a\", input.facts.http]] if { input.request.harness = \"codex\" }"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, err := New(context.Background(), Config{FS: withDecision(tc.body)})
			require.NoError(t, err, "New(%s)", tc.name)
			assert.Equal(t, tc.residual, e.residual != nil, "New(%s): has a residual", tc.name)
			d, err := e.Decide(context.Background(), req, nil)
			switch {
			case tc.wantNoDec:
				assert.ErrorIs(t, err, ErrNoDecision, "Decide(%s)", tc.name)
			case tc.wantErr != "":
				require.Error(t, err, "Decide(%s)", tc.name)
				assert.Contains(t, err.Error(), tc.wantErr, "Decide(%s)", tc.name)
			default:
				require.NoError(t, err, "Decide(%s)", tc.name)
				assert.Equal(t, tc.wantReasons, d.Servers[0].Reasons, "Decide(%s): servers[0].Reasons", tc.name)
			}
			if e.residual != nil {
				requireSameDecision(t, e, req, nil)
			}
		})
	}
}

// TestResidualRunsBodiesInOrder holds a residual of several bodies to the one whose guards the
// input meets.
func TestResidualRunsBodiesInOrder(t *testing.T) {
	t.Parallel()
	body := `codes := {true: "with_user", false: "without_user"}

decision := [["server", codes[input.request.run.hasUser], input.facts.http]]`
	e, err := New(context.Background(), Config{FS: withDecision(body)})
	require.NoError(t, err, "New(two-case decision)")
	require.NotNil(t, e.residual, "two-case decision: no residual")
	require.Len(t, e.residual.bodies, 2, "two-case decision: residual bodies")
	var seed [8]byte
	for i := range 16 {
		binary.LittleEndian.PutUint64(seed[:], uint64(i)*0x9e3779b97f4a7c15)
		requireSameDecision(t, e, fuzzRequest(seed[:]), nil)
	}
}

// TestResidualMatchesOPAOnRandomPolicies holds the residual to OPA's evaluation on policies
// built at random from what the fragment holds (input references, set and array built-ins,
// constants, guards on the request) and from what it does not (comprehensions, other
// built-ins), each decided over random requests. A policy the compiler refuses is skipped;
// enough must compile, and enough must have a residual, for the test to mean anything.
func TestResidualMatchesOPAOnRandomPolicies(t *testing.T) {
	t.Parallel()
	sets := []string{"input.facts.http", "input.facts.token", "input.facts.hasUsers", "input.facts.userListed",
		"input.facts.credentials.shared", "input.facts.flags.idInvalid", "input.facts.url.baseMatch",
		"input.facts.env.keyRefused", "input.facts.env.secretNamed", "input.facts.headers.secretNamed",
		"input.facts.tools.noneValid", "input.facts.nothing", "set()", "{0}", "{0, 1, 2}"}
	var compiled, withResidual, decided int
	for seed := range 120 {
		rng := newRand(uint64(seed))
		var setExpr func(depth int) string
		setExpr = func(depth int) string {
			if depth == 0 || rng.n(3) == 0 {
				return sets[rng.n(len(sets))]
			}
			a, b := setExpr(depth-1), setExpr(depth-1)
			switch rng.n(12) {
			case 0, 1, 2:
				return "(" + a + " - " + b + ")"
			case 3, 4:
				return "(" + a + " & " + b + ")"
			case 5, 6:
				return "(" + a + " | " + b + ")"
			case 7:
				return "intersection({" + a + ", " + b + "})"
			case 8:
				return "union({" + a + "})"
			case 9:
				return "{i | some i in " + a + "}"
			default:
				return a
			}
		}
		var statements []string
		for range 1 + rng.n(4) {
			code := fmt.Sprintf(`"c%d"`, rng.n(3))
			if rng.n(5) == 0 {
				code = `lower("C")`
			}
			statements = append(statements, `"server", `+code+`, `+setExpr(3))
		}
		if rng.n(3) == 0 {
			statements = append(statements, `"spawn_env", ["PATH"], array.concat(["LC_"], [])`)
		}
		body := "decision := [[" + strings.Join(statements, ", ") + "]]"
		switch rng.n(4) {
		case 0:
			body += ` if { input.request.harness = "claude" }`
		case 1:
			body = `codes := {true: "a", false: "b"}` + "\n\ndecision := [[\"server\", codes[input.request.run.hasUser], " + setExpr(2) + "], [" + strings.Join(statements, ", ") + "]]"
		}
		e, err := New(context.Background(), Config{FS: withDecision(body)})
		if err != nil {
			continue
		}
		compiled++
		if e.residual == nil {
			continue
		}
		withResidual++
		for r := range 4 {
			var seedBytes [16]byte
			binary.LittleEndian.PutUint64(seedBytes[:], uint64(seed*31+r)*0x9e3779b97f4a7c15)
			binary.LittleEndian.PutUint64(seedBytes[8:], uint64(seed+r)*0xbf58476d1ce4e5b9)
			req := fuzzRequest(seedBytes[:])
			interned.RLock()
			facts := computeFacts(req, nil, e.tunables)
			if _, err := e.evalQuery(context.Background(), inputValue(req, &facts, e.tunables)); err == nil {
				decided++
			}
			interned.RUnlock()
			if !t.Run(fmt.Sprintf("policy%d/request%d", seed, r), func(t *testing.T) { requireSameDecision(t, e, req, nil) }) {
				t.Logf("policy %d:\n%s", seed, body)
			}
		}
	}
	assert.Greater(t, compiled, 60, "random policies that compile")
	assert.Greater(t, withResidual, 60, "random policies with a residual")
	assert.Greater(t, decided, 120, "decisions OPA's evaluation defines on those policies")
	t.Logf("%d policies compiled, %d with a residual, %d decisions defined", compiled, withResidual, decided)
}

// rand is a small deterministic generator (splitmix64) for the random policies.
type rand struct{ s uint64 }

func newRand(seed uint64) *rand { return &rand{s: seed} }

func (r *rand) n(k int) int {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return int((z ^ (z >> 31)) % uint64(k))
}
