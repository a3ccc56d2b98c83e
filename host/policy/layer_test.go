package policy

import (
	"bytes"
	"context"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/spec"
)

// teamOnly is a directory that holds only a team's rule and one tunable, as a security team
// writes it: no copy of the defaults.
func teamOnly() fstest.MapFS {
	return fstest.MapFS{
		"loadout/corp.rego":                {Data: []byte(corpRules)},
		"tunables/userservers/data.yaml":   {Data: []byte("userServers: remote\n")},
		"loadout/corp_hosts_note.txt":      {Data: []byte("not a policy file")},
		"tunables/allow/unrelated_key.txt": {Data: []byte("ignored")},
	}
}

// hostileRequest has what the defaults refuse: a plain-http external server, NODE_OPTIONS in
// a stdio server's env and an X-Api-Key header not listed in secretKeys.
func hostileRequest() *spec.Request {
	return &spec.Request{
		Harness: "claude",
		Servers: []spec.Server{
			{Index: 0, ID: "plain", Transport: "http", URL: "http://mcp.corp.example/mcp", Enabled: true},
			{Index: 1, ID: "node", Transport: "stdio", Command: "mcp-files", Enabled: true,
				Env: []spec.Pair{{Name: "NODE_OPTIONS", Value: "--require /tmp/x.js"}}},
			{Index: 2, ID: "keyed", Transport: "http", URL: "https://mcp.corp.example/mcp", Enabled: true,
				Headers: []spec.Pair{{Name: "X-Api-Key", Value: "k-123"}}},
			{Index: 3, ID: "outside", Transport: "http", URL: "https://mcp.example.com/mcp", Enabled: true},
		},
	}
}

// assertDefaultsHold checks that the default rules decided d: the plain-http server refused,
// NODE_OPTIONS dropped, X-Api-Key a secret.
func assertDefaultsHold(t *testing.T, d *Decision) {
	t.Helper()
	assert.False(t, d.Servers[0].Allow, "a plain-http external server is refused by the defaults")
	require.Len(t, d.Servers[1].Drop, 1, "NODE_OPTIONS is dropped by the defaults")
	assert.Equal(t, "NODE_OPTIONS", d.Servers[1].Drop[0].Key)
	assert.Contains(t, d.Secrets, SecretRef{Server: 2, Field: "headers", Key: "X-Api-Key"}, "X-Api-Key is a secret by the defaults")
}

func TestTeamPoliciesLayerOverDefaults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, err := New(ctx, Config{FS: teamOnly(), Name: "team"})
	require.NoError(t, err, "a directory of team rules loads over the defaults")
	assert.Equal(t, []Source{{Kind: "defaults", Name: "embedded"}, {Kind: "directory", Name: "team"}}, e.Sources())
	d, err := e.Decide(ctx, hostileRequest(), nil, "")
	require.NoError(t, err)
	assertDefaultsHold(t, d)
	assert.False(t, d.Servers[3].Allow, "the team's rule decides too")
	assert.Equal(t, "team/loadout/corp.rego:5", d.Servers[3].Reasons[0].Rule, "a team rule is named by its file under the team's directory")

	// The team's data overrides one tunable by path; the other tunables of that area and the
	// other areas stay the defaults'.
	userReq := &spec.Request{Servers: []spec.Server{{Source: spec.SourceUser, ID: spec.UserIDPrefix + "notes", Transport: "http", URL: "https://notes.corp.example/mcp", Enabled: true}}}
	d, err = e.Decide(ctx, userReq, nil, "")
	require.NoError(t, err)
	assert.True(t, d.Servers[0].Allow, "userServers: remote from the team's data keeps an http user server: %+v", d.Servers[0].Reasons)

	// The same tree as a bundle is laid over the defaults the same way.
	b, err := ReadBundle(bytes.NewReader(writeBundle(t, teamOnly(), "team-1", "")), BundleOptions{})
	require.NoError(t, err)
	e, err = New(ctx, Config{Bundle: b, Name: "bundle.tar.gz"})
	require.NoError(t, err)
	assert.Equal(t, []Source{{Kind: "defaults", Name: "embedded"}, {Kind: "bundle", Name: "bundle.tar.gz", Revision: "team-1"}}, e.Sources())
	d, err = e.Decide(ctx, hostileRequest(), nil, "")
	require.NoError(t, err)
	assertDefaultsHold(t, d)
	assert.False(t, d.Servers[3].Allow, "the bundle's rule decides too")
}

func TestReplaceDefaultPolicies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, err := New(ctx, Config{FS: teamOnly(), Name: "team", ReplaceDefaults: true})
	require.NoError(t, err)
	assert.Equal(t, []Source{{Kind: "directory", Name: "team"}}, e.Sources(), "only the team's tree is in force")
	d, err := e.Decide(ctx, hostileRequest(), nil, "")
	require.NoError(t, err)
	assert.True(t, d.Servers[0].Allow, "replaced: only the team's rules decide")
	assert.False(t, d.Servers[3].Allow)

	_, err = New(ctx, Config{ReplaceDefaults: true})
	assert.ErrorContains(t, err, "needs a policy directory or bundle")
}

func TestTeamPoliciesCannotChangeDefaultPackages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// A copy of the defaults next to the team's rules is the defaults: it loads.
	_, err := New(ctx, Config{FS: withDefaults(t, map[string]string{"loadout/corp.rego": corpRules}), Name: "team"})
	require.NoError(t, err)

	// A file in a default package changes the defaults' rules in place: refused, by name.
	_, err = New(ctx, Config{FS: fstest.MapFS{"loadout/more_url.rego": {Data: []byte("package loadout.url\n\nwarn contains {\"code\": \"x\"} if false\n")}}, Name: "team"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "team/loadout/more_url.rego:1: package loadout.url belongs to the default policies")
	assert.Contains(t, err.Error(), "--replace-default-policies")

	// An edited copy of a default file is refused too.
	_, err = New(ctx, Config{FS: fstest.MapFS{"loadout/url/url.rego": {Data: []byte("package loadout.edited\n\nwarn contains {\"code\": \"x\"} if false\n")}}, Name: "team"})
	assert.ErrorContains(t, err, "team/loadout/url/url.rego: has the path of a default policy file")
}

func TestRunTestsLayersOverDefaults(t *testing.T) {
	t.Parallel()
	// A team test that reads a default tunable passes only with the defaults underneath.
	tree := fstest.MapFS{
		"loadout/corp.rego":      {Data: []byte(corpRules)},
		"loadout/corp_test.rego": {Data: []byte("package loadout.corp_test\n\nimport data.loadout.corp\n\ntest_defaults_present if \"x-api-key\" in data.tunables.secrets.always_secret_headers\n\ntest_rule if count(corp.deny) == 1 with input as {\"servers\": [{\"id\": \"o\", \"transport\": \"http\", \"facts\": {\"url\": {\"host\": \"evil.example\"}}}]}\n")},
	}
	rep, err := RunTests(context.Background(), tree, TestOptions{Name: "team"})
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%+v", rep.Results)
	assert.Equal(t, 2, rep.Passed, "only the team's tests run")

	rep, err = RunTests(context.Background(), tree, TestOptions{Name: "team", ReplaceDefaults: true})
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Failed, "without the defaults the tunable is missing")
}
