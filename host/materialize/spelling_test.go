package materialize_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// TestWriteSpellsSecretsForTheHarness writes an env-wrapped server whose secret starts with "!"
// and holds "$" and "${": Pi would run or expand it and Claude Code and Copilot CLI expand it,
// unless the host spells it for the harness (docs/SPAWN-ENV.md); Codex and any other file take it
// as is.
func TestWriteSpellsSecretsForTheHarness(t *testing.T) {
	t.Parallel()
	const secret = "!e2e-canary-$ecret-${HOME}-7f3a9c$"
	const claudeD = "${LOADOUT_SPAWN_DOLLAR:-$}"
	tests := []struct {
		harness, root, path, format, config, want string
	}{
		{"pi", abi.RootConfig, "mcp.json", abi.FormatJSON,
			`{"mcpServers":{"alpha":{"type":"stdio","command":"/usr/bin/env","args":["-i","-S","TOKEN=${LOADOUT_SPAWN_1}","/usr/bin/alpha"],` +
				`"env":{"LOADOUT_SPAWN_1":"{{loadout.secret.1}}"}}}}`,
			`"LOADOUT_SPAWN_1":"$!e2e-canary-$$ecret-$${HOME}-7f3a9c$$"`},
		{"claude", abi.RootRun, "mcp-servers.json", abi.FormatJSON,
			`{"mcpServers":{"alpha":{"type":"stdio","command":"/usr/bin/env","args":["-i","-S","TOKEN=` + claudeD + `{LOADOUT_SPAWN_1}","/usr/bin/alpha"],` +
				`"env":{"LOADOUT_SPAWN_1":"{{loadout.secret.1}}"}}}}`,
			`"LOADOUT_SPAWN_1":"!e2e-canary-$ecret-` + claudeD + `{HOME}-7f3a9c` + claudeD + `"`},
		{"copilot", abi.RootConfig, "mcp-config.json", abi.FormatJSON,
			`{"mcpServers":{"alpha":{"command":"/usr/bin/env","args":["-i","-S","TOKEN=` + claudeD + `{LOADOUT_SPAWN_1}","/usr/bin/alpha"],` +
				`"env":{"LOADOUT_SPAWN_1":"{{loadout.secret.1}}"}}}}`,
			`"LOADOUT_SPAWN_1":"!e2e-canary-` + claudeD + `ecret-` + claudeD + `{HOME}-7f3a9c` + claudeD + `"`},
		{"codex", abi.RootConfig, "config.toml", abi.FormatTOML,
			"[mcp_servers.alpha]\ncommand = \"/usr/bin/env\"\nargs = [\"-i\", \"-S\", \"TOKEN=${LOADOUT_SPAWN_1}\", \"/usr/bin/alpha\"]\n" +
				"env = { LOADOUT_SPAWN_1 = \"{{loadout.secret.1}}\" }\n",
			`LOADOUT_SPAWN_1 = "` + secret + `"`},
	}
	for _, tc := range tests {
		t.Run(tc.harness, func(t *testing.T) {
			t.Parallel()
			in := plan.Input{
				Manifest: abi.Manifest{Name: "render." + tc.harness, ABIVersion: abi.Version, Harness: tc.harness,
					Roots: []string{abi.RootConfig, abi.RootRun, abi.RootCheckout}},
				Profile: profiles[tc.harness],
				Request: abi.Request{ABIVersion: abi.Version, Harness: tc.harness, Servers: []abi.Server{
					{ID: "alpha", Transport: abi.TransportStdio, Command: "/usr/bin/alpha",
						Env: []abi.Pair{{Name: "TOKEN", Value: secretKey, Secret: true}}, Enabled: true}}},
				Secrets: []plan.Secret{{Placeholder: secretKey, Value: secret, Server: "alpha", Field: plan.FieldEnv, Key: "TOKEN"}},
			}
			p := &abi.Plan{
				Files: []abi.File{
					{Root: tc.root, Path: tc.path, Mode: "0600", Format: tc.format, Content: tc.config, Secret: true},
				},
				Env: []abi.Pair{{Name: map[string]string{"pi": "PI_CODING_AGENT_DIR", "codex": "CODEX_HOME", "claude": "CLAUDE_CONFIG_DIR", "copilot": "COPILOT_HOME"}[tc.harness],
					Value: "{{loadout.root.config}}"}},
			}
			if tc.harness == "copilot" {
				p.Args = []string{"--disable-builtin-mcps", "--no-auto-update"}
				p.Env = append(p.Env, abi.Pair{Name: "COPILOT_ALLOW_ALL", Value: "false"}, abi.Pair{Name: "LOADOUT_SPAWN_DOLLAR", Value: "$"})
			}
			if tc.harness == "claude" {
				p.Args = []string{"--mcp-config", "{{loadout.root.run}}/mcp-servers.json", "--strict-mcp-config"}
			}
			roots := newRoots(t)
			res, err := write(context.Background(), p, input{Roots: roots, Plan: in})
			require.NoError(t, err, "Write(%s wrapped server with secret %q)", tc.harness, secret)
			require.Len(t, res.Files, 1, "Write(%s) files", tc.harness)
			dir := map[string]string{abi.RootConfig: roots.Config, abi.RootRun: roots.Run}[tc.root]
			got, err := os.ReadFile(filepath.Join(dir, tc.path))
			require.NoError(t, err, "read %s", tc.path)
			assert.Contains(t, string(got), tc.want, "Write(%s): the secret spelled for the harness", tc.harness)
		})
	}
}

func TestSecretSpellingOnlyForTheConfig(t *testing.T) {
	t.Parallel()
	assert.Nil(t, profiles["pi"].SecretSpelling(abi.RootConfig, "skills/a/SKILL.md", plan.FieldEnv), "SecretSpelling(pi, a skill file)")
	assert.Nil(t, profiles["codex"].SecretSpelling(abi.RootConfig, "config.toml", plan.FieldEnv), "SecretSpelling(codex config): literal values")
	assert.Nil(t, profiles["acme"].SecretSpelling(abi.RootConfig, "agent.toml", plan.FieldEnv), "SecretSpelling(a literal third-party harness)")
	require.NotNil(t, profiles["pi"].SecretSpelling(abi.RootConfig, "mcp.json", plan.FieldEnv), "SecretSpelling(pi config)")
	assert.Equal(t, "$$a$!b", profiles["pi"].SecretSpelling(abi.RootConfig, "mcp.json", plan.FieldEnv)("$a!b"), "pi spelling of $a!b")
	assert.Nil(t, profiles["copilot"].SecretSpelling(abi.RootConfig, "skills/a/SKILL.md", plan.FieldEnv), "SecretSpelling(copilot, a skill file)")
	require.NotNil(t, profiles["copilot"].SecretSpelling(abi.RootConfig, "mcp-config.json", plan.FieldEnv), "SecretSpelling(copilot config)")
	assert.Equal(t, "${LOADOUT_SPAWN_DOLLAR:-$}a!b", profiles["copilot"].SecretSpelling(abi.RootConfig, "mcp-config.json", plan.FieldEnv)("$a!b"), "copilot spelling of $a!b")
}

// TestWriteSpellsHeaderSecretsPerPass writes an http server whose secret header holds "${"
// forms: Claude Code expands a header value twice (its profile's passes), an env value once,
// so the host spells a header secret for two passes; one pass would let Claude's second one
// send its own HOME, the value of a variable of its environment, or a default.
func TestWriteSpellsHeaderSecretsPerPass(t *testing.T) {
	t.Parallel()
	const secret = "k-${HOME}-${MY_API_TOKEN}-${UNSET:-fallback}-$"
	const d = "${LOADOUT_SPAWN_DOLLAR:-$}"
	in := plan.Input{
		Manifest: abi.Manifest{Name: "render.claude", ABIVersion: abi.Version, Harness: "claude",
			Roots: []string{abi.RootConfig, abi.RootRun, abi.RootCheckout}},
		Profile: profiles["claude"],
		Request: abi.Request{ABIVersion: abi.Version, Harness: "claude", Servers: []abi.Server{
			{ID: "web", Transport: abi.TransportHTTP, URL: "https://mcp.example.com/",
				Headers: []abi.Pair{{Name: "X-Key", Value: secretKey, Secret: true}}, Enabled: true}}},
		Secrets: []plan.Secret{{Placeholder: secretKey, Value: secret, Server: "web", Field: plan.FieldHeaders, Key: "X-Key"}},
	}
	p := &abi.Plan{
		Files: []abi.File{{Root: abi.RootRun, Path: "mcp-servers.json", Mode: "0600", Format: abi.FormatJSON, Secret: true,
			Content: `{"mcpServers":{"web":{"type":"http","url":"https://mcp.example.com/","headers":{"X-Key":"{{loadout.secret.1}}"}}}}`}},
		Args: []string{"--mcp-config", "{{loadout.root.run}}/mcp-servers.json", "--strict-mcp-config"},
		Env:  []abi.Pair{{Name: "CLAUDE_CONFIG_DIR", Value: "{{loadout.root.config}}"}},
	}
	roots := newRoots(t)
	_, err := write(context.Background(), p, input{Roots: roots, Plan: in})
	require.NoError(t, err, "Write(claude http server with a secret header)")
	got, err := os.ReadFile(filepath.Join(roots.Run, "mcp-servers.json"))
	require.NoError(t, err, "read mcp-servers.json")
	twice := func(v string) string { return strings.ReplaceAll(v, d, d+"{LOADOUT_SPAWN_DOLLAR:-$}") }
	want := "k-" + twice(d) + "{HOME}-" + twice(d) + "{MY_API_TOKEN}-" + twice(d) + "{UNSET:-fallback}-" + twice(d)
	assert.Contains(t, string(got), `"X-Key":"`+want+`"`, "the header secret spelled for both of Claude's passes")
	read, ok := profiles["claude"].ReadHeader(want)
	assert.True(t, ok && read == secret, "ReadHeader(the written header) = %q, %t: both passes give the secret back", read, ok)
}
