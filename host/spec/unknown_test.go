package spec_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/spec"
)

// TestUnknownFieldDropsTheEntry pins that a misspelt field of a server or skill drops that
// entry, never keeps it with the restriction unread: allowedTool would give every tool, user
// would hand the server to anyone, harness would render it for every harness.
func TestUnknownFieldDropsTheEntry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		entry   string
		field   string
		meaning string
	}{
		{"allowedTool", `{"id":"docs","command":"npx","allowedTool":["search"]}`, "mcpServers[0].allowedTool", "did you mean allowedTools?"},
		{"user", `{"id":"docs","command":"npx","credentials":"shared","user":["alice"]}`, "mcpServers[0].user", "did you mean users?"},
		{"harness", `{"id":"docs","command":"npx","harness":["codex"]}`, "mcpServers[0].harness", "did you mean harnesses?"},
		{"not near any field", `{"id":"docs","command":"npx","zzzzzzzzzz":1}`, "mcpServers[0].zzzzzzzzzz", "the fields are id, transport, command"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := `{"mcpServers":[` + tc.entry + `,{"id":"other","command":"npx"}]}`
			req, diags := mustParse(t, body)
			require.Len(t, req.Servers, 1, "Parse(%q) servers", body)
			assert.Equal(t, "other", req.Servers[0].ID, "Parse(%q): the server with the typo is dropped, the other kept", body)
			require.Len(t, diags, 1, "Parse(%q) diagnostics: %+v", body, diags)
			assert.Equal(t, diag{"server", tc.field, spec.CodeUnknownField}, diagsOf(diags)[0])
			assert.Equal(t, "docs", diags[0].Name, "the diagnostic names the server")
			assert.Contains(t, diags[0].Message, tc.meaning, "the message helps fix the typo")
			assert.Contains(t, diags[0].Message, "server dropped", "the message says what happened")
		})
	}
}

func TestUnknownSkillFieldDropsTheSkill(t *testing.T) {
	t.Parallel()
	body := `{"skills":[{"name":"a","instructions":"i","descripton":"d"},{"name":"b","instructions":"i"}]}`
	req, diags := mustParse(t, body)
	require.Len(t, req.Skills, 1)
	assert.Equal(t, "b", req.Skills[0].Name)
	require.Len(t, diags, 1, "diagnostics: %+v", diags)
	assert.Equal(t, diag{"skill", "skills[0].descripton", spec.CodeUnknownField}, diagsOf(diags)[0])
	assert.Contains(t, diags[0].Message, "did you mean description?")
	assert.Contains(t, diags[0].Message, "skill dropped")
}

// TestUnknownFieldRefuses pins the refusals: an unknown member of the request or of run, and a
// request that a typo left with nothing to render.
func TestUnknownFieldRefuses(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ body, field, text string }{
		"mcpServer at the top":       {`{"mcpServer":[{"id":"docs","command":"npx"}]}`, "mcpServer", "did you mean mcpServers?"},
		"unknown top-level member":   {`{"version":1,"mcpServers":[{"id":"docs","command":"npx"}]}`, "version", "the fields are harness, run"},
		"unknown run member":         {`{"run":{"usr":"alice"},"mcpServers":[{"id":"docs","command":"npx"}]}`, "run.usr", "did you mean user?"},
		"only server had a typo":     {`{"mcpServers":[{"id":"docs","command":"npx","allowedTool":["a"]}]}`, "mcpServers[0].allowedTool", "nothing else is left to render"},
		"only skill had a typo":      {`{"skills":[{"name":"s","instruction":"i"}]}`, "skills[0].instruction", "nothing else is left to render"},
		"harness typo on its server": {`{"mcpServers":[{"id":"docs","command":"npx","harness":["codex"]}]}`, "mcpServers[0].harness", "did you mean harnesses?"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			req, diags, err := spec.Parse([]byte(tc.body))
			var re *spec.RejectError
			require.True(t, errors.As(err, &re), "Parse(%q) error = %v, want a *RejectError", tc.body, err)
			assert.Nil(t, req)
			assert.Nil(t, diags)
			assert.Equal(t, spec.CodeUnknownField, re.Code, "Parse(%q) refusal code", tc.body)
			assert.Equal(t, tc.field, re.Field, "Parse(%q) refusal field", tc.body)
			assert.Contains(t, re.Message, tc.text, "Parse(%q) refusal message", tc.body)
		})
	}
}

// TestUnknownFieldDiagnosticsAreCapped pins that many unknown members produce at most
// MaxUnknownFieldDiagnostics diagnostics and one that counts the rest.
func TestUnknownFieldDiagnosticsAreCapped(t *testing.T) {
	t.Parallel()
	const n = 100_000
	var one, many strings.Builder
	one.WriteString(`{"mcpServers":[{"id":"a","command":"x"`)
	many.WriteString(`{"mcpServers":[`)
	for i := range n {
		one.WriteString(`,"u` + strconv.Itoa(i) + `":1`)
		many.WriteString(`{"id":"s` + strconv.Itoa(i) + `","command":"x","u":1},`)
	}
	one.WriteString(`},{"id":"kept","command":"x"}]}`)
	many.WriteString(`{"id":"kept","command":"x"}]}`)
	for name, body := range map[string]string{"in one server": one.String(), "one in each server": many.String()} {
		t.Run(name, func(t *testing.T) {
			req, diags := mustParse(t, body)
			require.Len(t, req.Servers, 1)
			assert.Equal(t, "kept", req.Servers[0].ID)
			require.Len(t, diags, spec.MaxUnknownFieldDiagnostics+1, "diagnostics")
			for _, d := range diags {
				assert.Equal(t, spec.CodeUnknownField, d.Code)
			}
			last := diags[len(diags)-1]
			assert.Contains(t, last.Message, strconv.Itoa(n-spec.MaxUnknownFieldDiagnostics)+" more unknown fields",
				"the last diagnostic counts the unknown fields not listed")
		})
	}
}
