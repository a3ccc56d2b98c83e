package profileyaml_test

import (
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/plugins"
	"github.com/loadout-dev/loadout/sdk/profile"
	"github.com/loadout-dev/loadout/sdk/profile/profileyaml"
)

// TestParseBuiltinProfiles: every built-in profile parses, and what the package interprets reads
// as the profile says.
func TestParseBuiltinProfiles(t *testing.T) {
	t.Parallel()
	files, err := fs.Glob(plugins.Profiles, "*/profile.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		data, err := plugins.Profiles.ReadFile(f)
		require.NoError(t, err)
		p, err := profileyaml.Parse(data)
		require.NoError(t, err, "Parse(%s)", f)
		for pos, n := range p.Passes {
			assert.Equal(t, n, p.PassCount(pos), "%s: passes.%s", f, pos)
		}
		assert.Equal(t, p.PassCount(profile.PosEnv) > 0, p.SecretSpell(profile.PosEnv) != nil, "%s: a secret is spelled where env values are expanded", f)
	}
}

func TestProfileSpells(t *testing.T) {
	t.Parallel()
	data, err := plugins.Profiles.ReadFile("claude/profile.yaml")
	require.NoError(t, err)
	p, err := profileyaml.Parse(data)
	require.NoError(t, err)
	assert.Equal(t, "mcp__s__admin_delete", p.ToolRule("s", "admin.delete"), "tools.rules.tool with tools.names")
	assert.Equal(t, "mcp__s", p.ServerRule("s"))
	assert.Equal(t, "${LOADOUT_SPAWN_DOLLAR:-$}{HOME}", p.Literal("${HOME}"))
	got, ok := p.ReadHeader(p.SecretSpell(profile.PosHeaders)("a${B}"))
	assert.True(t, ok && got == "a${B}", "a header secret spelled for two passes reads back: %q %t", got, ok)
	_, ok = p.ReadValue("${HOME}")
	assert.False(t, ok, "an expansion is not a literal")
	assert.Equal(t, "--allowedTools", p.ToolsFlag())
	assert.Equal(t, "--disallowedTools", p.DenyFlag())
	assert.True(t, p.Reserves("workspace"))
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	for name, src := range map[string]string{
		"unknown key":        "harness: x\nvalueSyntax: literal\ntools: {in: none}\ntrust: true\n",
		"unknown syntax":     "harness: x\nvalueSyntax: shell\ntools: {in: none}\n",
		"passes of literal":  "harness: x\nvalueSyntax: literal\npasses: {env: 1}\ntools: {in: none}\n",
		"rules without flag": "harness: x\nvalueSyntax: literal\ntools: {in: config, names: {exact: true}, rules: {server: \"a{server}\", tool: \"a{server}b{tool}\"}}\n",
		"flag without rules": "harness: x\nvalueSyntax: literal\ntools: {in: args, names: {exact: true}}\nargs:\n  - {flag: --allow, value: tools}\n",
	} {
		_, err := profileyaml.Parse([]byte(src))
		assert.Error(t, err, name)
	}
}
