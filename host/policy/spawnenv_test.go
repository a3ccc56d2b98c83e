package policy

import (
	"context"
	"errors"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/spec"
)

// An undefined spawn_env refuses the request and names the rule and where it lives.
func TestUndefinedSpawnEnvNamesTheRule(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, err := New(ctx, Config{FS: fstest.MapFS{"loadout/t.rego": {Data: []byte("package loadout.t\n\nspawn_env := {\"keys\": [\"LANG\"], \"prefixes\": []} if not input.servers[0].env.K\n")}}, Name: "team"})
	require.NoError(t, err)
	req := &spec.Request{Servers: []spec.Server{{ID: "s", Transport: "stdio", Command: "npx", Env: []spec.Pair{{Name: "K", Value: "v"}}}}}
	_, err = e.Decide(ctx, req, nil, "")
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrNoDecision) && IsRejected(err), "%v", err)
	assert.Contains(t, err.Error(), "data.loadout.t.spawn_env (team/loadout/t.rego:3) is undefined")
}

// A policy without any spawn_env (one that replaces the defaults) lets a stdio server inherit
// no host variable: fail closed.
func TestNoSpawnEnvInheritsNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, err := New(ctx, Config{FS: fstest.MapFS{"loadout/t.rego": {Data: []byte("package loadout.t\n\ndeny contains {\"server\": 0, \"code\": \"x\"} if false\n")}}, ReplaceDefaults: true})
	require.NoError(t, err)
	req := &spec.Request{Servers: []spec.Server{{ID: "s", Transport: "stdio", Command: "npx", Enabled: true, Env: []spec.Pair{{Name: "OWN", Value: "1"}}}}}
	host := []spec.Pair{{Name: "PATH", Value: "/usr/bin"}, {Name: "HOME", Value: "/home/u"}}
	d, err := e.Decide(ctx, req, host, "")
	require.NoError(t, err)
	v, err := Vet(req, d, host, VetOptions{})
	require.NoError(t, err)
	assert.Equal(t, []spec.Pair{{Name: "OWN", Value: "1"}}, v.SpawnEnv("s"), "only the server's own env, no host variable")
}

// -v reports the expression a failed test failed at; several built-in errors of one test are
// listed with their locations, not as Go structs.
func TestRunTestsVerboseAndBuiltinErrors(t *testing.T) {
	t.Parallel()
	tree := fstest.MapFS{"p/p_test.rego": {Data: []byte("package loadout.p_test\n\nn(s) := to_number(s)\n\ntest_two if {\n\tnot n(\"a\")\n\tnot n(\"b\")\n}\n\ntest_fail if {\n\ty := 1\n\ty == 2\n}\n")}}
	rep, err := RunTests(context.Background(), tree, TestOptions{Verbose: true, ReplaceDefaults: true})
	require.NoError(t, err)
	require.Len(t, rep.Results, 2)
	by := map[string]TestResult{}
	for _, r := range rep.Results {
		by[r.Name] = r
	}
	two, fail := by["test_two"], by["test_fail"]
	assert.Equal(t, `p/p_test.rego:3: eval_builtin_error: to_number: strconv.ParseFloat: parsing "a": invalid syntax; p/p_test.rego:3: eval_builtin_error: to_number: strconv.ParseFloat: parsing "b": invalid syntax`, two.Error)
	assert.Equal(t, []string{"p/p_test.rego:12: y == 2"}, fail.FailedAt)

	rep, err = RunTests(context.Background(), tree, TestOptions{ReplaceDefaults: true})
	require.NoError(t, err)
	for _, r := range rep.Results {
		assert.Empty(t, r.FailedAt, "without -v no trace is kept")
	}
}
