package spec_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/spec"
)

func TestParseRejects(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", spec.MaxDepth+1) + strings.Repeat("]", spec.MaxDepth+1)
	tests := []struct {
		name      string
		body      string
		wantCode  string
		wantField string
	}{
		{"empty body", ``, spec.CodeInvalidJSON, ""},
		{"only whitespace", " \n\t", spec.CodeInvalidJSON, ""},
		{"syntax error", `{"skills":[}`, spec.CodeInvalidJSON, "skills[0]"},
		{"unterminated string", `{"harness":"cla`, spec.CodeInvalidJSON, "harness"},
		{"single quotes", `{'harness':'x'}`, spec.CodeInvalidJSON, ""},
		{"trailing comma", `{"harness":"x",}`, spec.CodeInvalidJSON, ""},
		{"raw control character", "{\"harness\":\"a\tb\"}", spec.CodeInvalidJSON, "harness"},
		{"bad escape", `{"harness":"\x"}`, spec.CodeInvalidJSON, "harness"},
		{"leading zero", `{"run":{"ambientAuth":01}}`, spec.CodeInvalidJSON, "run"},
		{"bare minus", `{"a":-}`, spec.CodeInvalidJSON, "a"},
		{"NaN", `{"a":NaN}`, spec.CodeInvalidJSON, "a"},
		{"truncated literal", `{"a":tru}`, spec.CodeInvalidJSON, "a"},
		{"lone high surrogate", `{"harness":"\ud800"}`, spec.CodeInvalidJSON, "harness"},
		{"lone low surrogate", `{"harness":"\udc00x"}`, spec.CodeInvalidJSON, "harness"},
		{"high surrogate then non-surrogate", `{"harness":"\ud800\u0041"}`, spec.CodeInvalidJSON, "harness"},
		{"invalid UTF-8 byte", "{\"harness\":\"\xff\"}", spec.CodeInvalidUTF8, ""},
		{"overlong UTF-8", "{\"harness\":\"\xc0\xaf\"}", spec.CodeInvalidUTF8, ""},
		{"UTF-8 surrogate", "{\"harness\":\"\xed\xa0\x80\"}", spec.CodeInvalidUTF8, ""},
		{"trailing object", `{"harness":"a"}{"harness":"b"}`, spec.CodeTrailingData, ""},
		{"trailing garbage", `{} x`, spec.CodeTrailingData, ""},
		{"top-level array", `[]`, spec.CodeNotObject, ""},
		{"top-level string", `"x"`, spec.CodeNotObject, ""},
		{"top-level null", `null`, spec.CodeNotObject, ""},
		{"duplicate top-level", `{"harness":"a","harness":"b"}`, spec.CodeDuplicateMember, "harness"},
		{"duplicate in server", `{"mcpServers":[{"id":"a","command":"x","command":"y"}]}`, spec.CodeDuplicateMember, "mcpServers[0].command"},
		{"duplicate after unescaping", `{"mcpServers":[{"id":"a","command":"x","comm\u0061nd":"y"}]}`, spec.CodeDuplicateMember, "mcpServers[0].command"},
		{"duplicate env key", `{"mcpServers":[{"id":"a","command":"x","env":{"K":"1","K":"2"}}]}`, spec.CodeDuplicateMember, "mcpServers[0].env.K"},
		{"duplicate in unknown field", `{"extra":{"deep":[{"x":1,"x":2}]}}`, spec.CodeDuplicateMember, "extra.deep[0].x"},
		{"duplicate in big object", `{"env":{` + manyMembers(40) + `,"k7":"again"}}`, spec.CodeDuplicateMember, "env.k7"},
		{"duplicate token", `{"tokens":{"a":"1","a":"2"}}`, spec.CodeDuplicateMember, "tokens.a"},
		{"folded request field", `{"Skills":[]}`, spec.CodeFoldedMember, "Skills"},
		{"folded server field after", `{"mcpServers":[{"id":"a","command":"safe","Command":"evil"}]}`, spec.CodeFoldedMember, "mcpServers[0].Command"},
		{"folded server field first", `{"mcpServers":[{"id":"a","Command":"evil","command":"safe"}]}`, spec.CodeFoldedMember, "mcpServers[0].Command"},
		{"long s folds to s", `{"mcpServers":[{"id":"a","command":"x","arg\u017f":["-e"]}]}`, spec.CodeFoldedMember, "mcpServers[0][\"argſ\"]"},
		{"Kelvin sign folds to K", `{"mcpServers":[{"id":"a","command":"x","secret\u212aeys":["T"]}]}`, spec.CodeFoldedMember, "mcpServers[0][\"secret\u212aeys\"]"},
		{"folded on a dropped server", `{"mcpServers":[{"id":"BAD","command":"x","URL":"y"}]}`, spec.CodeFoldedMember, "mcpServers[0].URL"},
		{"folded run field", `{"run":{"User":"bob"}}`, spec.CodeFoldedMember, "run.User"},
		{"server member folds to a skill field", `{"mcpServers":[{"id":"a","command":"x","Name":"n"}]}`, spec.CodeFoldedMember, "mcpServers[0].Name"},
		{"token member folds to a server field", `{"mcpServers":[{"id":"a","url":"https://a.example","token":{"mint":true,"ID":"x"}}]}`, spec.CodeFoldedMember, "mcpServers[0].token.ID"},
		{"skill member folds to a request field", `{"skills":[{"name":"a","instructions":"x","Harness":"y"}]}`, spec.CodeFoldedMember, "skills[0].Harness"},
		{"folded skill field", `{"skills":[{"name":"a","instructions":"x","Instructions":"y"}]}`, spec.CodeFoldedMember, "skills[0].Instructions"},
		{"folded field of a dropped skill", `{"skills":[{"name":"a","NAME":"b"}]}`, spec.CodeFoldedMember, "skills[0].NAME"},
		{"folded resource field", `{"skills":[{"name":"a","instructions":"x","resources":[{"relPath":"a","content":"","relpath":"b"}]}]}`, spec.CodeFoldedMember, "skills[0].resources[0].relpath"},
		{"placeholder in value", `{"harness":"{{loadout.secret.1}}"}`, spec.CodeReservedPlaceholder, "harness"},
		{"escaped placeholder", `{"mcpServers":[{"id":"a","command":"x","args":["{{loadout\u002eroot.config}}"]}]}`, spec.CodeReservedPlaceholder, "mcpServers[0].args[0]"},
		{"placeholder in member name", `{"mcpServers":[{"id":"a","command":"x","env":{"{{loadout.blob.1}}":"v"}}]}`, spec.CodeReservedPlaceholder, `mcpServers[0].env["{{loadout.blob.1}}"]`},
		{"placeholder in ignored field", `{"x":["{{loadout.secret.2}}"]}`, spec.CodeReservedPlaceholder, "x[0]"},
		{"too deep", `{"x":` + deep + `}`, spec.CodeTooDeep, "x" + strings.Repeat("[0]", spec.MaxDepth-1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, diags, err := spec.Parse([]byte(tc.body))
			var re *spec.RejectError
			require.True(t, errors.As(err, &re), "Parse(%q) error = %v, want a *RejectError", tc.body, err)
			assert.Equal(t, tc.wantCode, re.Code, "Parse(%q) refusal code (error %v)", tc.body, err)
			assert.Equal(t, tc.wantField, re.Field, "Parse(%q) refusal field (error %v)", tc.body, err)
			assert.NotEmpty(t, re.Message, "Parse(%q) refusal message", tc.body)
			assert.Nil(t, req, "Parse(%q) returned a request with its refusal", tc.body)
			assert.Nil(t, diags, "Parse(%q) returned diagnostics with its refusal", tc.body)
		})
	}
}

func manyMembers(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = `"k` + itoa(i) + `":"v"`
	}
	return strings.Join(parts, ",")
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func TestParseAcceptsStrictJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
	}{
		{"empty object", `{}`},
		{"surrounding whitespace", " \r\n\t{}\n "},
		{"free-form env and header keys", `{"mcpServers":[{"id":"a","command":"npx","env":{"URL":"u","Name":"n","ARGS":"a","Command":"c"},"headers":{"Id":"1"}}]}`},
		{"free-form token and toolExposure keys", `{"tokens":{"Harness":"t"},"mcpServers":[{"id":"a","command":"x","toolExposure":{"ID":"direct"}}]}`},
		{"same name in different objects", `{"mcpServers":[{"id":"a","command":"x"},{"id":"a","command":"x"}]}`},
		{"escaped surrogate pair", `{"harness":"\ud83d\ude00"}`},
		{"numbers", `{"mcpServers":[{"id":"a","command":"x","args":[0,-0,1.5,-2e10,3E+2,4e-3]}]}`},
		{"placeholder-like but not reserved", `{"harness":"{{loadout}} {{ loadout.secret.1}}"}`},
		{"big object without duplicates", `{"tokens":{` + manyMembers(100) + `}}`},
		{"deep but within the limit", `{"mcpServers":[{"id":"a","command":"x","args":` + strings.Repeat("[", spec.MaxDepth-3) + strings.Repeat("]", spec.MaxDepth-3) + `}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, _, err := spec.Parse([]byte(tc.body))
			require.NoError(t, err, "Parse(%q)", tc.body)
			require.NotNil(t, req, "Parse(%q) request", tc.body)
		})
	}
}

func TestParseDecodesStrings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body string
		want string
	}{
		{`{"harness":"plain"}`, "plain"},
		{`{"harness":"q\"b\\s\/n\nt\tr\rb\bf\f"}`, "q\"b\\s/n\nt\tr\rb\bf\f"},
		{`{"harness":"\u00e9\u20AC"}`, "é€"},
		{`{"harness":"\ud83d\ude00!"}`, "😀!"},
		{`{"harness":"héllo wörld"}`, "héllo wörld"},
		{`{"harness":"a\u0000b"}`, "a\x00b"},
	}
	for _, tc := range tests {
		req, _, err := spec.Parse([]byte(tc.body))
		require.NoError(t, err, "Parse(%q)", tc.body)
		assert.Equal(t, tc.want, req.Harness, "Parse(%q).Harness", tc.body)
	}
}

func TestRejectErrorMessage(t *testing.T) {
	t.Parallel()
	_, _, err := spec.Parse([]byte(`{"mcpServers":[{"id":"a","command":"x","Command":"y"}]}`))
	require.Error(t, err, "Parse with a folded member")
	msg := err.Error()
	assert.Contains(t, msg, "mcpServers[0].Command", "Error() = %q, want it to name the field", msg)
	assert.Contains(t, msg, spec.CodeFoldedMember, "Error() = %q, want it to name the rule", msg)

	_, _, err = spec.Parse([]byte(`[]`))
	require.Error(t, err, "Parse([])")
	assert.Contains(t, err.Error(), "request", "Error() of a root refusal = %q, want it to name the request", err.Error())
}

func TestParseTooLarge(t *testing.T) {
	t.Parallel()
	body := make([]byte, spec.MaxRequestBytes+1)
	_, _, err := spec.Parse(body)
	var re *spec.RejectError
	require.True(t, errors.As(err, &re), "Parse(%d bytes) error = %v, want a *RejectError", len(body), err)
	assert.Equal(t, spec.CodeTooLarge, re.Code, "Parse(%d bytes) refusal code", len(body))
}
