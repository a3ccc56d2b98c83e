package policy

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/spec"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// vet runs the embedded policy and Vet on req.
func vet(t *testing.T, req *spec.Request, hostEnv []spec.Pair, opts VetOptions) *Vetted {
	t.Helper()
	ctx := context.Background()
	e, err := New(ctx, Config{})
	require.NoError(t, err, "New with the embedded policies")
	d, err := e.Decide(ctx, req, hostEnv, "")
	require.NoError(t, err, "Decide")
	v, err := Vet(req, d, hostEnv, opts)
	require.NoError(t, err, "Vet")
	return v
}

func TestVetServers(t *testing.T) {
	t.Parallel()
	req := &spec.Request{
		Harness: "claude",
		Servers: []spec.Server{
			{Index: 0, ID: "dup", Transport: "http", URL: "http://evil.example/"},
			{Index: 1, ID: "dup", Transport: "stdio", Command: "npx", Enabled: true,
				Env:        []spec.Pair{{Name: "TMPDIR", Value: "/srv"}, {Name: "LD_PRELOAD", Value: "x.so"}, {Name: "KEY", Value: "k-secret"}},
				SecretKeys: []string{"KEY"}, ToolsDeclared: true, AllowedTools: []string{"read", "x,Bash"}},
			{Index: 2, ID: "dup", Transport: "stdio", Command: "other"},
			{Index: 3, ID: "web", Transport: "http", URL: "https://mcp.example.com/", Credentials: "user",
				Headers:    []spec.Pair{{Name: "Authorization", Value: "Bearer configured"}, {Name: "X-Key", Value: "k-secret"}},
				SecretKeys: []string{"X-Key"}},
		},
		Tokens: []spec.Pair{{Name: "dup", Value: "tok-dup"}, {Name: "web", Value: "tok-web"}},
	}
	hostEnv := []spec.Pair{{Name: "PATH", Value: "/bin"}, {Name: "HOME", Value: "/home/u"}, {Name: "TMPDIR", Value: "/tmp"}, {Name: "LC_ALL", Value: "C"}, {Name: "AWS_SECRET", Value: "no"}}
	v := vet(t, req, hostEnv, VetOptions{})
	got := v.Request()

	require.Len(t, got.Servers, 2, "Vet: kept servers")
	fs, web := got.Servers[0], got.Servers[1]
	assert.Equal(t, "dup", fs.ID, "the first allowed server claims the id")
	assert.Equal(t, "npx", fs.Command, "the first allowed dup is the stdio one")
	assert.Equal(t, []abi.Pair{
		{Name: "TMPDIR", Value: "/srv"},
		{Name: "KEY", Value: "{{loadout.secret.1}}", Secret: true},
		{Name: "MCP_ACCESS_TOKEN", Value: "{{loadout.secret.2}}", Secret: true},
	}, fs.Env, "Vet: stdio env with drops applied, secrets replaced and the token last")
	assert.Equal(t, []abi.Pair{{Name: "PATH", Value: "/bin"}, {Name: "HOME", Value: "/home/u"}, {Name: "TMPDIR", Value: "/tmp"}, {Name: "LC_ALL", Value: "C"}}, fs.HostEnv,
		"Vet: host env filtered by the allowlist")
	assert.True(t, fs.ToolsRestricted, "declared allowedTools restrict")
	assert.Equal(t, []string{"read"}, fs.AllowedTools, "invalid tool removed")
	assert.Equal(t, []spec.Pair{
		{Name: "PATH", Value: "/bin"}, {Name: "HOME", Value: "/home/u"}, {Name: "TMPDIR", Value: "/srv"}, {Name: "LC_ALL", Value: "C"},
		{Name: "KEY", Value: "k-secret"}, {Name: "MCP_ACCESS_TOKEN", Value: "tok-dup"},
	}, v.SpawnEnv("dup"), "SpawnEnv: host allowlist, then kept env (overriding TMPDIR), then the token")

	assert.Equal(t, []abi.Pair{
		{Name: "X-Key", Value: "{{loadout.secret.3}}", Secret: true},
		{Name: "Authorization", Value: "Bearer {{loadout.secret.4}}", Secret: true},
	}, web.Headers, "Vet: per-user server loses its Authorization; the token is the bearer; a secret equal to an env value has a placeholder of its own (a harness may spell a header otherwise)")
	assert.Nil(t, v.SpawnEnv("web"), "SpawnEnv of an http server")
	assert.Nil(t, web.HostEnv, "an http server gets no host env")

	assert.Equal(t, []Secret{
		{Placeholder: "{{loadout.secret.1}}", Value: "k-secret", Uses: []SecretUse{{Server: "dup", Field: "env", Key: "KEY"}}},
		{Placeholder: "{{loadout.secret.2}}", Value: "tok-dup", Uses: []SecretUse{{Server: "dup", Field: "env", Key: "MCP_ACCESS_TOKEN"}}},
		{Placeholder: "{{loadout.secret.3}}", Value: "k-secret", Uses: []SecretUse{{Server: "web", Field: "headers", Key: "X-Key"}}},
		{Placeholder: "{{loadout.secret.4}}", Value: "tok-web", Uses: []SecretUse{{Server: "web", Field: "headers", Key: "Authorization"}}},
	}, v.Secrets(), "Secrets")
	assert.Equal(t, []string{"k-secret", "tok-dup", "tok-web", "Bearer configured"}, v.Redactions(),
		"Redactions: the rendered secrets, the tokens, and the credential the run's token replaced (a drop the rule marks secret)")

	dropped := v.Dropped()
	for i, d := range dropped {
		if d.Code == "duplicate_id" {
			assert.Empty(t, d.Rule, "Dropped[%d]: duplicate ids are the host's, not a rule's", i)
		} else {
			assert.Regexp(t, `^loadout/\w+/\w+\.rego:\d+$`, d.Rule, "Dropped[%d] names the rule that decided it", i)
		}
		dropped[i].Rule = ""
	}
	assert.Equal(t, []spec.Diagnostic{
		{Kind: "server", Name: "dup", Field: "mcpServers[0].url", Code: "url_not_allowed", Message: `scheme "http" may not reach host "evil.example": https anywhere, plain http only to loopback`},
		{Kind: "server", Name: "dup", Field: "mcpServers[1].env.LD_PRELOAD", Code: "env_key_refused", Message: `env "LD_PRELOAD" removed: the key can inject code or redirect trust`},
		{Kind: "server", Name: "dup", Field: "mcpServers[1].allowedTools", Code: "tool_name_invalid", Message: `allowedTools "x,Bash" removed: the tool name does not match ^[A-Za-z0-9_.-]{1,64}$`},
		{Kind: "server", Name: "dup", Field: "mcpServers[2].id", Code: "duplicate_id", Message: `server id "dup" is already used by an earlier server (first wins)`},
		{Kind: "server", Name: "web", Field: "mcpServers[3].headers.Authorization", Code: "credentials_user", Message: `headers "Authorization" removed: a per-user server gets this from the run's own token`},
		{Kind: "server", Name: "web", Field: "mcpServers[3].headers.Authorization", Code: "replaced_by_token", Message: `headers "Authorization" removed: the run's stored token supplies it`},
	}, dropped, "Dropped: an entry two rules remove is reported once per code")
}

func TestVetRequestIsACopy(t *testing.T) {
	t.Parallel()
	req := &spec.Request{Servers: []spec.Server{{ID: "a", Transport: "stdio", Command: "npx", Args: []string{"x"}, Env: []spec.Pair{{Name: "K", Value: "v"}}}}}
	v := vet(t, req, nil, VetOptions{})
	r1 := v.Request()
	r1.Servers[0].Args[0] = "changed"
	r1.Servers[0].Env[0].Value = "changed"
	r2 := v.Request()
	assert.Equal(t, []string{"x"}, r2.Servers[0].Args, "Request() must return a copy (args)")
	assert.Equal(t, "v", r2.Servers[0].Env[0].Value, "Request() must return a copy (env)")
}

func TestVetContentByRef(t *testing.T) {
	t.Parallel()
	req := &spec.Request{Skills: []spec.Skill{{Name: "review", Description: "d", Instructions: "Do it.",
		Resources: []spec.Resource{{RelPath: "a.md", Content: "A"}, {RelPath: "b.md", Content: "B"}}}}}
	byRef := vet(t, req, nil, VetOptions{ContentByRef: true})
	sk := byRef.Request().Skills[0]
	assert.Equal(t, "{{loadout.blob.1}}", sk.Instructions, "instructions by reference")
	assert.Equal(t, []abi.Resource{{Path: "a.md", Content: "{{loadout.blob.2}}"}, {Path: "b.md", Content: "{{loadout.blob.3}}"}}, sk.Resources, "resources by reference")
	assert.Equal(t, []Blob{{"{{loadout.blob.1}}", "Do it."}, {"{{loadout.blob.2}}", "A"}, {"{{loadout.blob.3}}", "B"}}, byRef.Blobs(), "Blobs")

	inline := vet(t, req, nil, VetOptions{})
	assert.Equal(t, "Do it.", inline.Request().Skills[0].Instructions, "instructions inline")
	assert.Empty(t, inline.Blobs(), "no blobs inline")
}

func TestVetRefusesPlaceholders(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		req  spec.Request
	}{
		{name: "args", req: spec.Request{Servers: []spec.Server{{ID: "a", Transport: "stdio", Command: "npx", Args: []string{"{{loadout.secret.1}}"}}}}},
		{name: "env value", req: spec.Request{Servers: []spec.Server{{ID: "a", Transport: "stdio", Command: "npx", Env: []spec.Pair{{Name: "K", Value: "x{{loadout.root.run}}"}}}}}},
		{name: "skill body", req: spec.Request{Skills: []spec.Skill{{Name: "s", Instructions: "{{loadout.blob.1}}"}}}},
		{name: "resource", req: spec.Request{Skills: []spec.Skill{{Name: "s", Instructions: "x", Resources: []spec.Resource{{RelPath: "a", Content: "{{loadout.x"}}}}}},
		{name: "token", req: spec.Request{Tokens: []spec.Pair{{Name: "a", Value: "{{loadout.secret.9}}"}}}},
	}
	ctx := context.Background()
	e, err := New(ctx, Config{})
	require.NoError(t, err, "New")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := tc.req
			d, err := e.Decide(ctx, &req, nil, "")
			require.NoError(t, err, "Decide(%s)", tc.name)
			_, err = Vet(&req, d, nil, VetOptions{})
			assert.ErrorIs(t, err, ErrPlaceholder, "Vet(%s): want ErrPlaceholder", tc.name)
			assert.True(t, IsRejected(err), "Vet(%s): a placeholder in the request is a rejection", tc.name)
		})
	}
}

func TestVetRejectsForeignDecision(t *testing.T) {
	t.Parallel()
	req := &spec.Request{Servers: []spec.Server{{ID: "a", Transport: "stdio", Command: "npx"}}}
	_, err := Vet(req, &Decision{}, nil, VetOptions{})
	var me *MalformedError
	assert.ErrorAs(t, err, &me, "Vet with a decision for another request")
	_, err = Vet(req, nil, nil, VetOptions{})
	assert.ErrorIs(t, err, ErrNoDecision, "Vet without a decision")
}

func TestVetSharedUsers(t *testing.T) {
	t.Parallel()
	shared := spec.Server{ID: "team", Transport: "http", URL: "https://team.example/", Credentials: "shared",
		SharedAuthority: "team-a", HasUsers: true, Users: []string{"alice"}}
	tests := []struct {
		name string
		run  spec.Run
		want []string
	}{
		{name: "listed user", run: spec.Run{User: "alice", HasUser: true}, want: []string{"team"}},
		{name: "other user", run: spec.Run{User: "bob", HasUser: true}, want: []string{}},
		{name: "no user fails closed", run: spec.Run{}, want: []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := vet(t, &spec.Request{Run: tc.run, Servers: []spec.Server{shared}}, nil, VetOptions{})
			ids := []string{}
			for _, s := range v.Request().Servers {
				ids = append(ids, s.ID)
			}
			assert.Equal(t, tc.want, ids, "Vet(run %+v): kept servers", tc.run)
		})
	}
}

// TestVetManyServers holds Vet on a request past the size where its lookups switch from scans
// to maps: every id, secret value and redaction is still claimed once, and a decision whose
// secrets are in another order vets the same.
func TestVetManyServers(t *testing.T) {
	t.Parallel()
	const n = 3 * manyEntries
	req := &spec.Request{Harness: "claude"}
	for i := range n {
		// Every third server repeats the id of the one before it; every second shares its
		// secret with the one before it.
		id := fmt.Sprintf("s-%d", i-i%3/2)
		secret := fmt.Sprintf("secret-%d", i/2)
		req.Servers = append(req.Servers, spec.Server{Index: i, ID: id, Transport: "stdio", Command: "npx",
			Env: []spec.Pair{{Name: "KEY", Value: secret}}, SecretKeys: []string{"KEY"}})
	}
	ctx := context.Background()
	e, err := New(ctx, Config{})
	require.NoError(t, err, "New with the embedded policies")
	d, err := e.Decide(ctx, req, nil, "")
	require.NoError(t, err, "Decide(%d servers)", n)
	v, err := Vet(req, d, nil, VetOptions{})
	require.NoError(t, err, "Vet(%d servers)", n)

	ids := map[string]bool{}
	values := map[string]bool{}
	for _, s := range v.Request().Servers {
		assert.False(t, ids[s.ID], "Vet(%d servers): id %s kept twice", n, s.ID)
		ids[s.ID] = true
		values[req.Servers[slices.IndexFunc(req.Servers, func(r spec.Server) bool { return r.ID == s.ID })].Env[0].Value] = true
	}
	assert.Len(t, ids, n-n/3, "Vet(%d servers): one server per id", n)
	var dups int
	for _, dr := range v.Dropped() {
		if dr.Code == "duplicate_id" {
			dups++
		}
	}
	assert.Equal(t, n/3, dups, "Vet(%d servers): duplicate_id drops", n)
	assert.Len(t, v.Secrets(), len(values), "Vet(%d servers): one placeholder per distinct secret value", n)
	assert.Len(t, v.Redactions(), len(values), "Vet(%d servers): one redaction per distinct value", n)
	assert.Equal(t, len(v.Redactions()), len(slices.Compact(slices.Sorted(slices.Values(v.Redactions())))),
		"Vet(%d servers): redactions without repeats", n)

	reversed := *d
	reversed.Secrets = slices.Clone(d.Secrets)
	slices.Reverse(reversed.Secrets)
	w, err := Vet(req, &reversed, nil, VetOptions{})
	require.NoError(t, err, "Vet(%d servers, secrets reversed)", n)
	assert.Equal(t, v.Request(), w.Request(), "Vet(%d servers): secrets in another order give another request", n)
	assert.Equal(t, v.Secrets(), w.Secrets(), "Vet(%d servers): secrets in another order give other secrets", n)
}

func TestPlaceholder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind string
		n    int
		want string
	}{
		{kind: "secret.", n: 1, want: "{{loadout.secret.1}}"},
		{kind: "secret.", n: 63, want: "{{loadout.secret.63}}"},
		{kind: "secret.", n: 64, want: "{{loadout.secret.64}}"},
		{kind: "secret.", n: 1000, want: "{{loadout.secret.1000}}"},
		{kind: "blob.", n: 2, want: "{{loadout.blob.2}}"},
		{kind: "blob.", n: 70, want: "{{loadout.blob.70}}"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, placeholder(tc.kind, tc.n), "placeholder(%q, %d)", tc.kind, tc.n)
	}
}

// TestVetSecretKeysMatchHeadersInAnyCase: header names are case-insensitive, so secretKeys
// "authorization" makes the Authorization header's value a secret; env keys stay exact.
func TestVetSecretKeysMatchHeadersInAnyCase(t *testing.T) {
	t.Parallel()
	req := &spec.Request{Harness: "claude", Servers: []spec.Server{
		{Index: 0, ID: "web", Transport: "http", URL: "https://mcp.example.com/", Enabled: true,
			Headers:    []spec.Pair{{Name: "Authorization", Value: "Bearer header-secret-1"}},
			SecretKeys: []string{"authorization"}},
		{Index: 1, ID: "fs", Transport: "stdio", Command: "npx", Enabled: true,
			Env:        []spec.Pair{{Name: "API_KEY", Value: "env-value-not-named"}},
			SecretKeys: []string{"api_key"}},
	}}
	v := vet(t, req, nil, VetOptions{})
	got := v.Request()
	require.Len(t, got.Servers, 2, "Vet: kept servers")
	assert.Equal(t, []abi.Pair{{Name: "Authorization", Value: "{{loadout.secret.1}}", Secret: true}}, got.Servers[0].Headers,
		"Vet: secretKeys authorization names the header Authorization")
	assert.Contains(t, v.Redactions(), "Bearer header-secret-1", "Redactions")
	assert.Equal(t, []abi.Pair{{Name: "API_KEY", Value: "env-value-not-named"}}, got.Servers[1].Env, "Vet: env keys match secretKeys exactly")
}

// TestVetRedactsSecretsThatAreNotRendered: a declared static credential replaced by the run's
// token and a token of a server that is not kept are still credentials that may appear in a
// log, so they stay in the redaction set.
func TestVetRedactsSecretsThatAreNotRendered(t *testing.T) {
	t.Parallel()
	req := &spec.Request{Harness: "claude", Servers: []spec.Server{
		{Index: 0, ID: "web", Transport: "http", URL: "https://mcp.example.com/", Credentials: "user", Enabled: true,
			Headers:    []spec.Pair{{Name: "Authorization", Value: "Bearer static-admin-credential"}},
			SecretKeys: []string{"Authorization"}},
		{Index: 1, ID: "plain", Transport: "http", URL: "http://evil.example/", Enabled: true,
			Headers:    []spec.Pair{{Name: "X-Key", Value: "dropped-server-secret"}},
			SecretKeys: []string{"X-Key"}},
	}, Tokens: []spec.Pair{{Name: "web", Value: "run-token-for-web"}, {Name: "plain", Value: "run-token-for-plain"}}}
	v := vet(t, req, nil, VetOptions{})
	require.Len(t, v.Request().Servers, 1, "Vet: the plain-http server is dropped")
	for _, want := range []string{"Bearer static-admin-credential", "run-token-for-web", "run-token-for-plain", "dropped-server-secret"} {
		assert.Contains(t, v.Redactions(), want, "Redactions keeps a secret that is not rendered")
	}
}

// TestVetRedactsEveryMarkedSecret: a value a rule marks secret stays in the redaction set
// whatever became of it: a refused server's declared secret, a refused env key, an env key of
// the wrong shape, a header value with a line break (declared, or a header that is always a
// secret), and a server that lost its id to an earlier one. A value nobody marked is no secret,
// dropped or not.
func TestVetRedactsEveryMarkedSecret(t *testing.T) {
	t.Parallel()
	req := &spec.Request{Harness: "claude", Servers: []spec.Server{
		{Index: 0, ID: "plain", Transport: "http", URL: "http://evil.example/", Enabled: true,
			Headers:    []spec.Pair{{Name: "X-Key", Value: "refused-server-header"}, {Name: "X-Trace", Value: "unmarked-refused-value"}},
			Env:        []spec.Pair{},
			SecretKeys: []string{"X-Key"}},
		{Index: 1, ID: "tools", Transport: "stdio", Command: "npx", Enabled: true,
			Env: []spec.Pair{{Name: "LD_PRELOAD", Value: "refused-env-key-secret"}, {Name: "BAD-KEY", Value: "bad-env-key-secret"},
				{Name: "NODE_OPTIONS", Value: "unmarked-refused-env"}, {Name: "TOKEN", Value: "kept-env-secret"}},
			SecretKeys: []string{"LD_PRELOAD", "BAD-KEY", "TOKEN"}},
		{Index: 2, ID: "web", Transport: "http", URL: "https://mcp.example.com/", Enabled: true,
			Headers:    []spec.Pair{{Name: "X-Api", Value: "bad-header\r\nsecret"}, {Name: "Authorization", Value: "Bearer bad\nheader"}},
			SecretKeys: []string{"X-Api"}},
		{Index: 3, ID: "tools", Transport: "stdio", Command: "other", Enabled: true,
			Env: []spec.Pair{{Name: "TOKEN", Value: "duplicate-id-secret"}}, SecretKeys: []string{"TOKEN"}},
	}}
	v := vet(t, req, nil, VetOptions{})
	kept := []string{}
	for _, s := range v.Request().Servers {
		kept = append(kept, s.ID)
	}
	require.Equal(t, []string{"tools", "web"}, kept, "Vet: kept servers")
	env := map[string]string{}
	for _, p := range v.Request().Servers[0].Env {
		env[p.Name] = p.Value
	}
	require.NotContains(t, env, "LD_PRELOAD", "the refused env key is dropped")
	require.NotContains(t, env, "BAD-KEY", "the env key of the wrong shape is dropped")
	require.Empty(t, v.Request().Servers[1].Headers, "both headers with a line break are dropped")
	for _, want := range []string{"kept-env-secret", "refused-server-header", "refused-env-key-secret", "bad-env-key-secret",
		"bad-header\r\nsecret", `bad-header\r\nsecret`, "Bearer bad\nheader", "duplicate-id-secret"} {
		assert.Contains(t, v.Redactions(), want, "Redactions holds every value marked secret")
	}
	for _, no := range []string{"unmarked-refused-value", "unmarked-refused-env"} {
		assert.NotContains(t, v.Redactions(), no, "a dropped value nobody marked is no secret")
	}
}

// TestVetRedactsSecretsOfServersTheParserDrops: a server the parser drops (a bad transport,
// command or id, a field that narrows access out of its domain) never reaches the policy, yet
// the values its own secretKeys declare (env[key], the header named key in any case) stay in
// the redaction set; its other values are no secrets.
func TestVetRedactsSecretsOfServersTheParserDrops(t *testing.T) {
	t.Parallel()
	body := `{"harness": "claude", "mcpServers": [
	  {"id": "ftp", "transport": "ftp", "url": "ftp://x.example/", "headers": {"authorization": "Bearer ftp-declared-1"}, "secretKeys": ["Authorization"]},
	  {"id": "bad-cmd", "command": "-rf", "env": {"API_TOKEN": "cmd-declared-2", "LOG": "cmd-unmarked"}, "secretKeys": ["API_TOKEN"]},
	  {"id": "Bad Id", "command": "npx", "env": {"K": "id-declared-3"}, "secretKeys": ["K", 7]},
	  {"id": "narrow", "command": "npx", "users": "alice", "env": {"K": "users-declared-4"}, "secretKeys": ["K"]},
	  {"id": "kept", "command": "npx", "env": {"K": "kept-declared-5"}, "secretKeys": ["K"]}]}`
	req, diags, err := spec.Parse([]byte(body))
	require.NoError(t, err, "Parse")
	require.Len(t, req.Servers, 1, "the parser keeps one server (diagnostics: %v)", diags)
	v := vet(t, req, nil, VetOptions{})
	for _, want := range []string{"Bearer ftp-declared-1", "cmd-declared-2", "id-declared-3", "users-declared-4", "kept-declared-5"} {
		assert.Contains(t, v.Redactions(), want, "Redactions holds a declared secret of a server the parser drops")
	}
	assert.NotContains(t, v.Redactions(), "cmd-unmarked", "a value nobody marked is no secret")
}

// TestKnownRedactions: before the policy decides, the redaction set is what the request
// declares (secretKeys values, headers matched in any case, declared secrets of dropped
// servers, stored tokens) and nothing else; with a decision it is the vetted set.
func TestKnownRedactions(t *testing.T) {
	t.Parallel()
	body := `{"harness": "claude", "mcpServers": [
	  {"id": "web", "transport": "http", "url": "https://x.example/", "headers": {"authorization": "Bearer hdr-declared-1", "X-Client": "loadout"}, "secretKeys": ["Authorization"]},
	  {"id": "cli", "command": "npx", "env": {"API_KEY": "env-declared-2", "LOG": "env-unmarked", "k": "case-unmarked"}, "secretKeys": ["API_KEY", "K"]},
	  {"id": "bad-cmd", "command": "-rf", "env": {"T": "dropped-declared-3"}, "secretKeys": ["T"]}],
	  "tokens": {"web": "tok-stored-4"}}`
	req, _, err := spec.Parse([]byte(body))
	require.NoError(t, err, "Parse")
	got := KnownRedactions(req, nil)
	for _, want := range []string{"Bearer hdr-declared-1", "env-declared-2", "dropped-declared-3", "tok-stored-4"} {
		assert.Contains(t, got, want, "KnownRedactions(req, nil) holds a declared secret")
	}
	for _, no := range []string{"loadout", "env-unmarked", "case-unmarked"} {
		assert.NotContains(t, got, no, "KnownRedactions(req, nil): a value nobody declared is no secret")
	}
	v := vet(t, req, nil, VetOptions{})
	assert.ElementsMatch(t, v.Redactions(), KnownRedactions(req, v.Decision()), "with the decision, the vetted set")
	assert.Equal(t, "[REDACTED] and [REDACTED], loadout", v.Redactor().String("Bearer hdr-declared-1 and hdr-declared-1, loadout"),
		"the vetted redactor masks the secret and its credential alone, not an ordinary header")
}
