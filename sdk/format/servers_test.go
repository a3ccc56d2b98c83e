package format_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
)

func TestServersPrompt(t *testing.T) {
	assert.Equal(t, "", format.ServersPrompt(nil, nil), "no server, no section")
	servers := []abi.Server{
		{ID: "docs", ToolsRestricted: true, AllowedTools: []string{"search", "fetch"}},
		{ID: "fs"},
		{ID: "off", ToolsRestricted: true},
	}
	want := "## MCP servers\n\nThese MCP servers are configured for this run, each with the tools you may use:\n" +
		"- docs: only search, fetch\n- fs: all tools\n- off: no tools\n"
	assert.Equal(t, want, format.ServersPrompt(servers, nil), "tools by their own names")
	named := format.ServersPrompt(servers[:1], func(id, tool string) string { return tool + " (mcp__" + id + "__" + tool + ")" })
	assert.Contains(t, named, "- docs: only search (mcp__docs__search), fetch (mcp__docs__fetch)\n", "tools as the harness names them")
}

func TestSpawnServer(t *testing.T) {
	s := abi.Server{ID: "fs", Transport: abi.TransportStdio, Command: "/usr/bin/mcp-fs",
		Env: []abi.Pair{{Name: "TOKEN", Value: "{{loadout.secret.1}}", Secret: true}, {Name: "BAD-NAME", Value: "x"}}}
	sp, warns, ok := format.SpawnServer(format.SpawnVerbatim, s, "")
	assert.True(t, ok, "a plain command is wrapped")
	assert.Equal(t, "/usr/bin/env", sp.Command, "launched through env")
	if assert.Len(t, warns, 1, "one warning per env name env -S cannot pass") {
		assert.Equal(t, format.WarnEnvNameUnsupported, warns[0].Code)
		assert.Equal(t, "fs", warns[0].Server)
		assert.Contains(t, warns[0].Message, `"BAD-NAME"`)
	}
	env, secret := sp.EnvObject()
	assert.True(t, secret, "the secret pair makes the env object secret")
	assert.Positive(t, env.Len(), "the env object holds the spawn env")

	s.Command = "a=b"
	_, warns, ok = format.SpawnServer(format.SpawnVerbatim, s, "")
	assert.False(t, ok, "a command holding = cannot go through env")
	if assert.Len(t, warns, 1) {
		assert.Equal(t, format.WarnCommandUnwrappable, warns[0].Code)
		assert.Contains(t, warns[0].Message, "is not rendered")
	}
}
