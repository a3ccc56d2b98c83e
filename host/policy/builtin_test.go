package policy

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/spec"
)

// trimBuiltins is a rule that refuses to pre-approve the shell, from the input document.
const trimBuiltins = `package loadout.corpbuiltins

import rego.v1

drop contains {"field": "builtinTools", "key": t, "code": "builtin_tool_refused", "msg": sprintf("%s is never pre-approved", [t])} if {
	some t in input.run.builtinTools
	t in {"Bash", "WebFetch"}
}
`

// TestVetBuiltinTools: run.builtinTools reaches the plugin only as the policy and the harness's
// profile leave it: a rule trims it (reported in dropped with the rule's code), a tool the
// profile does not list is warned about and not granted, and a harness without a list grants
// none, with a warning.
func TestVetBuiltinTools(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, err := New(ctx, Config{FS: withDefaults(t, map[string]string{"loadout/corpbuiltins.rego": trimBuiltins})})
	require.NoError(t, err, "New with a builtinTools rule")
	req, _, err := spec.Parse([]byte(`{"harness":"claude","run":{"builtinTools":["Read","Bash","shell","Edit"]}}`))
	require.NoError(t, err, "Parse")
	doc, err := e.InputDocument(req, nil, "", nil)
	require.NoError(t, err, "InputDocument")
	assert.Equal(t, []any{"Read", "Bash", "shell", "Edit"}, doc.(map[string]any)["run"].(map[string]any)["builtinTools"], "input.run.builtinTools")
	d, err := e.Decide(ctx, req, nil, "")
	require.NoError(t, err, "Decide")
	require.Len(t, d.Run.Drop, 1, "the rule drops Bash: %+v", d.Run.Drop)
	assert.Equal(t, "Bash", d.Run.Drop[0].Key, "decision.run.drop names the tool")

	claude := &Builtin{Harness: "claude", Tools: []string{"Read", "Bash", "Edit", "Write"}}
	v, err := Vet(req, d, nil, VetOptions{Builtin: claude})
	require.NoError(t, err, "Vet")
	assert.Equal(t, []string{"Read", "Edit"}, v.Request().Run.BuiltinTools, "Bash trimmed by the rule, shell unknown to the profile")
	var dropped []string
	for _, dg := range v.Dropped() {
		dropped = append(dropped, dg.Field+" "+dg.Code)
	}
	assert.Equal(t, []string{"run.builtinTools[1] builtin_tool_refused"}, dropped, "the rule's drop is reported at its entry")
	var warned []string
	for _, w := range v.Warnings() {
		warned = append(warned, w.Code+": "+w.Message)
	}
	assert.Equal(t, []string{`builtin_tool_unknown: run.builtinTools "shell" is not a built-in tool of harness claude (profile tools.builtin); it is not granted`}, warned, "the unknown tool is warned about")

	v, err = Vet(req, d, nil, VetOptions{Builtin: &Builtin{Harness: "codex"}})
	require.NoError(t, err, "Vet for a harness without a list")
	assert.Empty(t, v.Request().Run.BuiltinTools, "a harness without a list grants none")
	require.Len(t, v.Warnings(), 1, "one warning: %+v", v.Warnings())
	assert.Equal(t, CodeBuiltinToolsUnsupported, v.Warnings()[0].Code, "the warning's code")

	v, err = Vet(req, d, nil, VetOptions{})
	require.NoError(t, err, "Vet without a harness (policy eval)")
	assert.Equal(t, []string{"Read", "shell", "Edit"}, v.Request().Run.BuiltinTools, "without a harness only the policy trims")
}

// TestDecideRefusesMalformedBuiltinDrops: a builtinTools drop names a tool the run lists, and
// neither a server nor a secret.
func TestDecideRefusesMalformedBuiltinDrops(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	req, _, err := spec.Parse([]byte(`{"harness":"claude","run":{"builtinTools":["Read"]},"mcpServers":[{"id":"a","command":"x"}]}`))
	require.NoError(t, err, "Parse")
	for _, el := range []string{
		`{"field": "builtinTools", "key": "Bash", "code": "c"}`,
		`{"server": 0, "field": "builtinTools", "key": "Read", "code": "c"}`,
		`{"field": "builtinTools", "key": "Read", "code": "c", "secret": true}`,
		`{"field": "env", "key": "X", "code": "c"}`,
	} {
		e, err := New(ctx, Config{FS: withDefaults(t, map[string]string{"loadout/bad.rego": "package loadout.bad\n\nimport rego.v1\n\ndrop contains " + el + " if \"Read\" in input.run.builtinTools\n"})})
		require.NoError(t, err, "New")
		_, err = e.Decide(ctx, req, nil, "")
		var me *MalformedError
		assert.ErrorAs(t, err, &me, "Decide with drop %s must refuse the request", el)
	}
}
