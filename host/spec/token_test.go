package spec_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/spec"
)

func TestParseRunID(t *testing.T) {
	t.Parallel()
	req, diags := mustParse(t, `{"run":{"id":"run-42","user":"alice"}}`)
	assert.Equal(t, spec.Run{ID: "run-42", User: "alice", HasUser: true}, req.Run)
	assert.Empty(t, diags)

	req, diags = mustParse(t, `{"run":{"id":42}}`)
	assert.Empty(t, req.Run.ID)
	assert.Equal(t, []diag{{"request", "run.id", spec.CodeWrongType}}, diagsOf(diags))
}

func TestParseToken(t *testing.T) {
	t.Parallel()
	const server = `{"id":"docs","command":"docs-mcp","token":%s}`
	tests := []struct {
		token string
		want  spec.TokenRequest
	}{
		{`{"mint":true,"ttl":"2h"}`, spec.TokenRequest{Mint: true, TTL: 2 * time.Hour}},
		{`{"mint":true}`, spec.TokenRequest{Mint: true}},
		{`{"mint":false,"ttl":"90m"}`, spec.TokenRequest{TTL: 90 * time.Minute}},
		{`{}`, spec.TokenRequest{}},
		{`{"mint":null,"ttl":null}`, spec.TokenRequest{}},
		{`null`, spec.TokenRequest{}},
	}
	for _, tc := range tests {
		req, diags := mustParse(t, `{"mcpServers":[`+fmt.Sprintf(server, tc.token)+`]}`)
		require.Len(t, req.Servers, 1, "token %s", tc.token)
		assert.Equal(t, tc.want, req.Servers[0].Token, "token %s", tc.token)
		assert.Empty(t, diags, "token %s", tc.token)
	}
}

// A bad token member refuses the whole request, naming the member: a server that asked for
// a credential is never rendered without it.
func TestParseTokenRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		token, field, code string
	}{
		{`true`, "mcpServers[1].token", spec.CodeInvalidToken},
		{`"2h"`, "mcpServers[1].token", spec.CodeInvalidToken},
		{`{"mint":"yes"}`, "mcpServers[1].token.mint", spec.CodeInvalidToken},
		{`{"mint":true,"ttl":7200}`, "mcpServers[1].token.ttl", spec.CodeInvalidToken},
		{`{"mint":true,"ttl":"2 hours"}`, "mcpServers[1].token.ttl", spec.CodeInvalidToken},
		{`{"mint":true,"ttl":"0s"}`, "mcpServers[1].token.ttl", spec.CodeInvalidToken},
		{`{"mint":true,"ttl":"-1h"}`, "mcpServers[1].token.ttl", spec.CodeInvalidToken},
		{`{"mint":true,"scope":"repo"}`, "mcpServers[1].token.scope", spec.CodeInvalidToken},
		{`{"Mint":true}`, "mcpServers[1].token.Mint", spec.CodeFoldedMember},
	}
	for _, tc := range tests {
		body := `{"mcpServers":[{"id":"a","command":"a"},{"id":"docs","command":"docs-mcp","token":` + tc.token + `}]}`
		req, diags, err := spec.Parse([]byte(body))
		var re *spec.RejectError
		require.True(t, errors.As(err, &re), "token %s: err = %v, want a *spec.RejectError", tc.token, err)
		assert.Equal(t, tc.field, re.Field, "token %s", tc.token)
		assert.Equal(t, tc.code, re.Code, "token %s", tc.token)
		assert.NotEmpty(t, re.Message)
		assert.Nil(t, req)
		assert.Nil(t, diags)
	}
}
