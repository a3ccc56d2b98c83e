package spec_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/spec"
)

func TestParseUserServers(t *testing.T) {
	t.Parallel()
	// userServers is read before mcpServers here: user servers still come after the catalog's.
	body := `{"userServers":[
		{"id":"notes","transport":"http","url":"https://notes.example/mcp","headers":{"X-Key":"k"}},
		{"id":"Bad","command":"npx"},
		{"id":"-dash","command":"npx"},
		{"id":"x","command":"npx","colour":"red"},
		7
	],"mcpServers":[{"id":"docs","transport":"http","url":"https://docs.example/mcp"}]}`
	req, diags := mustParse(t, body)
	var got []string
	for _, s := range req.Servers {
		got = append(got, s.Source+" "+s.ID+" "+s.Path())
	}
	assert.Equal(t, []string{
		"catalog docs mcpServers[0]",
		"user u_notes userServers[0]",
		"user u_-dash userServers[2]",
	}, got, "kept servers: catalog first, user ids prefixed, the id rules applied to the prefixed id, a server with an unknown member dropped")
	assert.Equal(t, []diag{
		{"server", "userServers[1].id", spec.CodeInvalidID},
		{"server", "userServers[3].colour", spec.CodeUnknownField},
		{"server", "userServers[4]", spec.CodeNotAnObject},
	}, diagsOf(diags), "diagnostics name the userServers path")
	assert.Equal(t, "u_x", diags[1].Name, "a diagnostic names the prefixed id")
	assert.Contains(t, diags[0].Message, `"u_Bad"`, "an invalid id is reported as the prefixed id")
	assert.Equal(t, []spec.Pair{{Name: "X-Key", Value: "k"}}, req.Servers[1].Headers, "a user server keeps its fields")
	assert.Contains(t, diags[1].Message, "server dropped", "an unknown member drops the user server")
}

func TestParseUserServersIDLength(t *testing.T) {
	t.Parallel()
	id62 := "a123456789b123456789c123456789d123456789e123456789f123456789gh"
	require.Len(t, id62, 62)
	req, diags := mustParse(t, `{"userServers":[{"id":"`+id62+`","command":"npx"},{"id":"`+id62+`i","command":"npx"}]}`)
	require.Len(t, req.Servers, 1, "the prefixed id may have 64 characters, not 65")
	assert.Equal(t, "u_"+id62, req.Servers[0].ID)
	assert.Equal(t, []diag{{"server", "userServers[1].id", spec.CodeInvalidID}}, diagsOf(diags))
}

func TestParseUserServersRefusals(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ body, field, code string }{
		"folded member":          {`{"userServers":[{"id":"a","Command":"npx"}]}`, "userServers[0].Command", spec.CodeFoldedMember},
		"folded token member":    {`{"userServers":[{"id":"a","command":"npx","token":{"Mint":true}}]}`, "userServers[0].token.Mint", spec.CodeFoldedMember},
		"folded list name":       {`{"UserServers":[]}`, "UserServers", spec.CodeFoldedMember},
		"token on a user server": {`{"userServers":[{"id":"a","command":"npx","token":{"mint":true}}]}`, "userServers[0].token", spec.CodeUserServerToken},
		"empty token object":     {`{"userServers":[{"id":"a","command":"npx","token":{}}]}`, "userServers[0].token", spec.CodeUserServerToken},
		"token beside a bad id":  {`{"userServers":[{"id":"A","command":"npx","token":{"mint":true}}]}`, "userServers[0].token", spec.CodeUserServerToken},
		"duplicate member":       {`{"userServers":[{"id":"a","id":"b","command":"npx"}]}`, "userServers[0].id", spec.CodeDuplicateMember},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			req, _, err := spec.Parse([]byte(tc.body))
			assert.Nil(t, req, "a refused request returns no request")
			var re *spec.RejectError
			require.True(t, errors.As(err, &re), "Parse(%s): want a *RejectError, got %v", tc.body, err)
			assert.Equal(t, tc.code, re.Code, "Parse(%s) code", tc.body)
			assert.Equal(t, tc.field, re.Field, "Parse(%s) field", tc.body)
		})
	}
}

func TestParseUserServersWrongType(t *testing.T) {
	t.Parallel()
	req, diags := mustParse(t, `{"userServers":{"id":"a"},"mcpServers":[]}`)
	assert.Empty(t, req.Servers)
	assert.Equal(t, []diag{{"request", "userServers", spec.CodeWrongType}}, diagsOf(diags))
	req, diags = mustParse(t, `{"userServers":null}`)
	assert.Empty(t, req.Servers)
	assert.Empty(t, diags)
}
