package tokens

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/spec"
)

func newService(t *testing.T) (*Service, *clock) {
	t.Helper()
	c := newClock()
	svc, err := New(Config{Store: NewMemory(c.Now), Now: c.Now, MaxTTL: 24 * time.Hour})
	require.NoError(t, err)
	return svc, c
}

func parse(t *testing.T, body string) *spec.Request {
	t.Helper()
	req, _, err := spec.Parse([]byte(body))
	require.NoError(t, err)
	return req
}

func TestMintCommitResolve(t *testing.T) {
	ctx := context.Background()
	svc, c := newService(t)
	req := parse(t, `{"run":{"id":"run-1","user":"alice"},"mcpServers":[
		{"id":"docs","command":"docs-mcp","token":{"mint":true,"ttl":"2h"}},
		{"id":"web","transport":"http","url":"https://mcp.example.com","token":{"mint":true}},
		{"id":"plain","command":"plain-mcp"},
		{"id":"docs","command":"other","token":{"mint":true,"ttl":"5m"}}]}`)
	m := svc.Begin()
	pairs, err := m.Mint(ctx, req)
	require.NoError(t, err)
	require.Len(t, pairs, 2, "one token per id that asks")
	assert.Equal(t, "docs", pairs[0].Name)
	assert.Equal(t, "web", pairs[1].Name)
	for _, p := range pairs {
		assert.True(t, WellFormed(p.Value), "token %q", p.Value)
		assert.True(t, strings.HasPrefix(p.Value, Prefix))
		_, err := svc.Resolve(ctx, p.Value)
		assert.ErrorIs(t, err, ErrNotFound, "resolvable before Commit")
	}
	assert.NotEqual(t, pairs[0].Value, pairs[1].Value)

	// The render kept docs only: web's token is never stored.
	recs, err := m.Commit(ctx, []string{"docs", "plain"})
	require.NoError(t, err)
	require.Len(t, recs, 1)
	rec, err := svc.Resolve(ctx, pairs[0].Value)
	require.NoError(t, err)
	assert.Equal(t, Record{Run: "run-1", Server: "docs", User: "alice", Expires: c.Now().Add(2 * time.Hour)}, rec)
	assert.Equal(t, recs[0], rec)
	_, err = svc.Resolve(ctx, pairs[1].Value)
	assert.ErrorIs(t, err, ErrNotFound, "a dropped server's token")

	c.Advance(2*time.Hour - time.Nanosecond)
	_, err = svc.Resolve(ctx, pairs[0].Value)
	require.NoError(t, err)
	c.Advance(time.Nanosecond)
	_, err = svc.Resolve(ctx, pairs[0].Value)
	assert.ErrorIs(t, err, ErrNotFound, "at expiry")
}

func TestMintDefaultTTL(t *testing.T) {
	ctx := context.Background()
	svc, c := newService(t)
	m := svc.Begin()
	pairs, err := m.Mint(ctx, parse(t, `{"run":{"id":"r"},"mcpServers":[{"id":"a","command":"a","token":{"mint":true}}]}`))
	require.NoError(t, err)
	recs, err := m.Commit(ctx, []string{"a"})
	require.NoError(t, err)
	assert.Equal(t, c.Now().Add(DefaultDefaultTTL), recs[0].Expires)
	rec, err := svc.Resolve(ctx, pairs[0].Value)
	require.NoError(t, err)
	assert.Empty(t, rec.User, "a run without a user")
}

func TestMintRefusals(t *testing.T) {
	ctx := context.Background()
	svc, _ := newService(t)
	const srv = `{"id":"docs","command":"docs-mcp","token":{"mint":true,"ttl":"2h"}}`
	tests := []struct {
		name, body, field, code string
	}{
		{"no run", `{"mcpServers":[` + srv + `]}`, "run.id", spec.CodeInvalidRunID},
		{"no run id", `{"run":{"user":"alice"},"mcpServers":[` + srv + `]}`, "run.id", spec.CodeInvalidRunID},
		{"run id not a string", `{"run":{"id":7},"mcpServers":[` + srv + `]}`, "run.id", spec.CodeInvalidRunID},
		{"run id with a slash", `{"run":{"id":"a/b"},"mcpServers":[` + srv + `]}`, "run.id", spec.CodeInvalidRunID},
		{"run id with a space", `{"run":{"id":"a b"},"mcpServers":[` + srv + `]}`, "run.id", spec.CodeInvalidRunID},
		{"ttl over the max", `{"run":{"id":"r"},"mcpServers":[{"id":"a","command":"a"},{"id":"docs","command":"d","token":{"mint":true,"ttl":"25h"}}]}`,
			"mcpServers[1].token.ttl", spec.CodeInvalidToken},
		{"stored token too", `{"run":{"id":"r"},"tokens":{"docs":"stored"},"mcpServers":[` + srv + `]}`,
			"mcpServers[0].token.mint", spec.CodeTokenConflict},
	}
	for _, tc := range tests {
		_, err := svc.Begin().Mint(ctx, parse(t, tc.body))
		var re *spec.RejectError
		require.True(t, errors.As(err, &re), "%s: err = %v", tc.name, err)
		assert.Equal(t, tc.field, re.Field, tc.name)
		assert.Equal(t, tc.code, re.Code, tc.name)
		assert.NotEmpty(t, re.Message, tc.name)
	}
	// No server asks: nothing is checked, nothing minted.
	pairs, err := svc.Begin().Mint(ctx, parse(t, `{"mcpServers":[{"id":"a","command":"a","token":{"mint":false}}]}`))
	require.NoError(t, err)
	assert.Empty(t, pairs)
}

func TestRevokeService(t *testing.T) {
	ctx := context.Background()
	svc, _ := newService(t)
	body := `{"run":{"id":"run-9"},"mcpServers":[{"id":"a","command":"a","token":{"mint":true}},{"id":"b","command":"b","token":{"mint":true}}]}`
	m := svc.Begin()
	pairs, err := m.Mint(ctx, parse(t, body))
	require.NoError(t, err)
	_, err = m.Commit(ctx, []string{"a", "b"})
	require.NoError(t, err)
	n, err := svc.Revoke(ctx, "run-9")
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	for _, p := range pairs {
		_, err := svc.Resolve(ctx, p.Value)
		assert.ErrorIs(t, err, ErrNotFound)
	}
	// A render of the revoked run that commits later gets no live token.
	m = svc.Begin()
	_, err = m.Mint(ctx, parse(t, body))
	require.NoError(t, err)
	_, err = m.Commit(ctx, []string{"a"})
	assert.ErrorIs(t, err, ErrRevoked)

	_, err = svc.Revoke(ctx, "../x")
	assert.Error(t, err)
}

func TestResolveMalformed(t *testing.T) {
	svc, _ := newService(t)
	for _, v := range []string{"", "lrt_", "Bearer x", strings.Repeat("a", 47), Prefix + strings.Repeat("!", 43), Prefix + strings.Repeat("A", 44)} {
		_, err := svc.Resolve(context.Background(), v)
		assert.ErrorIs(t, err, ErrNotFound, "%q", v)
	}
}

func TestValidRunID(t *testing.T) {
	for _, ok := range []string{"r", "run-1", "R_2.x", "0" + strings.Repeat("a", 127)} {
		assert.True(t, ValidRunID(ok), ok)
	}
	for _, bad := range []string{"", "-r", ".r", "_r", "a/b", "a b", "a:b", "ü", strings.Repeat("a", 129), "a\x00"} {
		assert.False(t, ValidRunID(bad), bad)
	}
}

func TestNewConfig(t *testing.T) {
	_, err := New(Config{})
	assert.Error(t, err, "no store")
	_, err = New(Config{Store: NewMemory(nil), MaxTTL: time.Hour, DefaultTTL: 2 * time.Hour})
	assert.Error(t, err, "default over max")
	svc, err := New(Config{Store: NewMemory(nil), MaxTTL: 10 * time.Minute})
	require.NoError(t, err)
	assert.Equal(t, 10*time.Minute, svc.defaultTTL, "the default is capped at the max")
}
