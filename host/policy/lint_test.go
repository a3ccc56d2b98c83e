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

// A rule the decision would never read refuses the policy at load, naming file:row.
func TestLoadRefusesRulesThatAreNeverRead(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, src, want string }{
		{"typo", "package loadout.corp\n\ndney contains {\"server\": 0, \"code\": \"x\"} if false\n", "team/loadout/x.rego:3: rule dney looks like deny"},
		{"case", "package loadout.corp\n\nDeny contains {\"server\": 0, \"code\": \"x\"} if false\n", "team/loadout/x.rego:3: rule Deny looks like deny"},
		{"plural", "package loadout.corp\n\ndrops contains {\"server\": 0, \"code\": \"x\"} if false\n", "rule drops looks like drop"},
		{"long kind", "package loadout.corp\n\nspanw_evn := {\"keys\": [], \"prefixes\": []}\n", "rule spanw_evn looks like spawn_env"},
		{"secret typo", "package loadout.corp\n\nsercet contains {\"server\": 0} if false\n", "rule sercet looks like secret"},
		{"conftest prefix", "package loadout.corp\n\ndeny_http contains \"x\" if false\n", "rule deny_http looks like conftest's deny"},
		{"conftest violation", "package loadout.corp\n\nviolation contains \"x\" if false\n", "rule violation looks like conftest's violation"},
		{"package main", "package main\n\ndeny contains \"x\" if false\n", "team/loadout/x.rego:3: deny in package main is never read"},
		{"outside data.loadout", "package corp.rules\n\nwarn contains {\"code\": \"x\"} if false\n", "warn in package corp.rules is never read"},
		{"ref head", "package loadout.corp\n\ndeny.http contains {\"server\": 0, \"code\": \"x\"} if false\n", "deny is never read: its head is deny.http"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tree := fstest.MapFS{"loadout/x.rego": {Data: []byte(tc.src)}}
			_, err := New(context.Background(), Config{FS: tree, Name: "team"})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			_, err = RunTests(context.Background(), tree, TestOptions{Name: "team"})
			assert.ErrorContains(t, err, tc.want, "policy test refuses it too")
		})
	}
}

// Helpers whose names are ordinary words or longer names load.
func TestLoadKeepsHelpersThatAreNotLookalikes(t *testing.T) {
	t.Parallel()
	src := "package loadout.corp\n\nwant := 1\n\nprop := 2\n\ndenied_commands := {\"curl\"}\n\nsecure := true\n\ndeny contains {\"server\": 0, \"code\": \"x\"} if {\n\twant == prop\n\tsecure\n\tdenied_commands\n}\n"
	_, err := New(context.Background(), Config{FS: fstest.MapFS{"loadout/x.rego": {Data: []byte(src)}}})
	require.NoError(t, err)
}

// conftest's string form of deny and warn decides for the whole request.
func TestConftestStringDenyAndWarn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := `package loadout.conftest

deny contains msg if {
	some s in input.servers
	s.transport == "http"
	s.headers["X-Token"]
	msg := sprintf("%s sends X-Token %s", [s.id, s.headers["X-Token"]])
}

warn contains "runs are audited"
`
	e, err := New(ctx, Config{FS: fstest.MapFS{"loadout/conftest.rego": {Data: []byte(src)}}, Name: "team"})
	require.NoError(t, err, "a conftest-style policy loads")

	plain := &spec.Request{Servers: []spec.Server{{ID: "docs", Transport: "http", URL: "https://mcp.example.com/mcp", Enabled: true}}}
	d, err := e.Decide(ctx, plain, nil, "")
	require.NoError(t, err)
	v, err := Vet(plain, d, nil, VetOptions{})
	require.NoError(t, err, "no deny: the request passes")
	assert.Contains(t, v.Warnings(), Warning{Code: CodeRequestWarning, Message: "runs are audited", Rule: "team/loadout/conftest.rego:10"})

	bad := &spec.Request{Servers: []spec.Server{{ID: "docs", Transport: "http", URL: "https://mcp.example.com/mcp", Enabled: true,
		Headers: []spec.Pair{{Name: "X-Token", Value: "tok-5521"}}, SecretKeys: []string{"X-Token"}}}}
	d, err = e.Decide(ctx, bad, nil, "")
	require.NoError(t, err)
	_, err = Vet(bad, d, nil, VetOptions{})
	var de *DeniedError
	require.True(t, errors.As(err, &de), "a string deny refuses the request: %v", err)
	assert.True(t, IsRejected(err), "exit 3 / 422")
	assert.Equal(t, "request denied by policy: docs sends X-Token [REDACTED] [team/loadout/conftest.rego:3]", err.Error(), "the message, masked, and the rule")
}
