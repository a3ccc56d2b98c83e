package plan_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
)

// TestCheckAcceptsWrapSpawn cross-checks the checker against the renderers' shared wrapper
// code (sdk/format.WrapSpawn) on values that each harness would expand or run unless they are
// spelled for it: whatever WrapSpawn emits for a vetted server, Check must accept.
func TestCheckAcceptsWrapSpawn(t *testing.T) {
	t.Parallel()
	tricky := []string{"", "$", "a$", "${", "}", "$$", "${HOME}", "${A:-b}", "!x", "!", "$!", "x!$y",
		"${LOADOUT_SPAWN_DOLLAR:-$}{X}", "${LOADOUT_SPAWN_1}", `"q" \ back`, "tab\tnl\n", "é \u2028", "{{loadout.root.run}}/x"}
	var env []abi.Pair
	for i, v := range tricky {
		env = append(env, abi.Pair{Name: "V" + string(rune('A'+i)), Value: v})
	}
	env = append(env, abi.Pair{Name: "TOKEN", Value: secretKey, Secret: true}, abi.Pair{Name: "HOME", Value: "/srv/h"})
	server := abi.Server{
		ID: "s", Transport: abi.TransportStdio, Command: "/opt/${BIN}/srv", Args: tricky,
		HostEnv: []abi.Pair{{Name: "HOME", Value: "/home/u"}, {Name: "PATH", Value: "/bin"}},
		Env:     env, Cwd: "/srv/${DIR}", Enabled: true,
	}
	styles := map[string]format.SpawnStyle{"claude": format.SpawnClaude, "codex": format.SpawnVerbatim, "pi": format.SpawnPi, "copilot": format.SpawnCopilot}
	for _, harness := range []string{"claude", "codex", "pi", "copilot"} {
		t.Run(harness, func(t *testing.T) {
			t.Parallel()
			// Claude and Copilot take the cwd as env -C (Claude has no cwd key; Copilot's would
			// expand a leading "~").
			byEnv := harness == "claude" || harness == "copilot"
			cwd := ""
			if byEnv {
				cwd = server.Cwd
			}
			sp, err := format.WrapSpawn(styles[harness], server, cwd)
			require.NoError(t, err, "WrapSpawn(%s)", harness)
			entry := format.NewObject()
			if harness == "claude" || harness == "pi" {
				entry.Set("type", "stdio")
			}
			entry.Set("command", sp.Command).Set("args", sp.Args)
			aliases := format.NewObject()
			for _, p := range sp.Env {
				aliases.Set(p.Name, p.Value)
			}
			entry.Set("env", aliases)
			if !byEnv {
				entry.Set("cwd", server.Cwd)
			}
			var content []byte
			if harness == "codex" {
				var doc format.TOMLDocument
				doc.AppendTable(entry, "mcp_servers", server.ID)
				content, err = doc.Marshal()
			} else {
				content, err = format.MarshalJSON(format.NewObject().Set("mcpServers", format.NewObject().Set(server.ID, entry)))
			}
			require.NoError(t, err, "encode the %s config", harness)
			in := spawnInput(harness)
			in.Request.Servers = []abi.Server{server}
			in.Secrets = []plan.Secret{{Placeholder: secretKey, Value: "k", Server: "s", Field: plan.FieldEnv, Key: "TOKEN"}}
			p := spawnPlan(harness)
			p.Files[0].Content = string(content)
			err = plan.Check(p, in)
			require.NoError(t, err, "Check(%s config from WrapSpawn) = %v, want nil; config:\n%s", harness, err, content)
			if harness != "copilot" {
				return
			}
			// An alias value Copilot would expand is refused, and so is Gemini's spelling, which
			// Copilot reads as a different value: the spelling is not decoration.
			for bare, why := range map[string]string{"$HOME": "would expand or run", "${HOME}": "would expand or run",
				`\${LOADOUT_SPAWN_DOLLAR:-$}x`: "differs from the vetted value"} {
				bad := format.NewObject()
				for _, p := range sp.Env {
					bad.Set(p.Name, p.Value)
				}
				bad.Set(sp.Env[0].Name, bare)
				entry.Set("env", bad)
				content, err := format.MarshalJSON(format.NewObject().Set("mcpServers", format.NewObject().Set(server.ID, entry)))
				require.NoError(t, err, "encode the copilot config")
				p.Files[0].Content = string(content)
				err = plan.Check(p, in)
				require.ErrorContains(t, err, why, "Check(copilot alias %s = %q), want a refusal of the alias", sp.Env[0].Name, bare)
			}
		})
	}
}
