package plan_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
	"github.com/loadout-dev/loadout/sdk/valuesyntax"
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
	styles := map[string]format.SpawnStyle{}
	for _, h := range []string{"claude", "codex", "pi", "copilot"} {
		styles[h] = profileOf(h).SpawnStyle()
	}
	styles["claude"] = func(st format.SpawnStyle) format.SpawnStyle { st.Split = true; return st }(styles["claude"]) // as its renderer writes
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
			err = checkPlan(p, in)
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
				err = checkPlan(p, in)
				require.ErrorContains(t, err, why, "Check(copilot alias %s = %q), want a refusal of the alias", sp.Env[0].Name, bare)
			}
		})
	}
}

// TestCheckCopilotLongSpec holds the checker to Copilot's expandMax (1000 characters): a SPEC
// that WrapSpawn writes for 50 variables is longer, so it takes plain references, padded, which
// Copilot passes on as written (e2e TestManySpawnVariables); that form is accepted, and so is
// nothing Copilot would read otherwise: a long SPEC with its escaped references (Copilot would
// not turn them into "$", and env -S fails on them), a short one with plain references
// (Copilot would expand them from its own environment).
func TestCheckCopilotLongSpec(t *testing.T) {
	t.Parallel()
	server := abi.Server{ID: "s", Transport: abi.TransportStdio, Command: "/usr/bin/srv", Args: []string{}, Enabled: true}
	for i := range 50 {
		server.Env = append(server.Env, abi.Pair{Name: fmt.Sprintf("WIDE_%02d", i), Value: "v$x"})
	}
	sp, err := format.WrapSpawn(profileOf("copilot").SpawnStyle(), server, "")
	require.NoError(t, err)
	require.Greater(t, len(sp.Args[2]), profileOf("copilot").ExpandMax, "the SPEC of 50 variables is past Copilot's limit")
	check := func(args []string) error {
		aliases := format.NewObject()
		for _, p := range sp.Env {
			aliases.Set(p.Name, p.Value)
		}
		entry := format.NewObject().Set("command", sp.Command).Set("args", args).Set("env", aliases)
		content, err := format.MarshalJSON(format.NewObject().Set("mcpServers", format.NewObject().Set(server.ID, entry)))
		require.NoError(t, err)
		in := spawnInput("copilot")
		in.Request.Servers = []abi.Server{server}
		in.Secrets = nil
		p := spawnPlan("copilot")
		p.Files[0].Content = string(content)
		return checkPlan(p, in)
	}
	require.NoError(t, check(sp.Args), "Check(the long SPEC WrapSpawn writes)")
	escaped := strings.ReplaceAll(strings.TrimRight(sp.Args[2], " "), "${", valuesyntax.DollarRefDefault+"{")
	require.ErrorContains(t, check([]string{"-i", "-S", escaped, "/usr/bin/srv"}), "want one or more references ${LOADOUT_SPAWN_<n>}")
	short := server
	short.Env = short.Env[:2]
	sp2, err := format.WrapSpawn(profileOf("copilot").SpawnStyle(), short, "")
	require.NoError(t, err)
	plain := strings.ReplaceAll(sp2.Args[2], valuesyntax.DollarRefDefault+"{", "${")
	server.Env = short.Env
	sp = sp2
	require.NoError(t, check(sp2.Args), "Check(the short SPEC WrapSpawn writes)")
	require.ErrorContains(t, check([]string{"-i", "-S", plain, "/usr/bin/srv"}), "want one or more references "+valuesyntax.DollarRefDefault+"{LOADOUT_SPAWN_<n>}")
}

// TestCheckPiTildeOperands holds the checker to Pi's expandsTilde: WrapSpawn carries the
// command and args up to the last "~" or "~/…" one as operand references in SPEC, which is
// accepted; the same args left on the command line (Pi would put its HOME there) or an operand
// alias holding another value are refused.
func TestCheckPiTildeOperands(t *testing.T) {
	t.Parallel()
	server := abi.Server{ID: "s", Transport: abi.TransportStdio, Command: "/usr/bin/srv",
		Args: []string{"a b", "~", "$x", "~/x", "a~/x", "--opt=~/x"}, Env: []abi.Pair{{Name: "T", Value: "~/v"}}, Enabled: true}
	sp, err := format.WrapSpawn(profileOf("pi").SpawnStyle(), server, "")
	require.NoError(t, err)
	check := func(args []string, env []abi.Pair) error {
		aliases := format.NewObject()
		for _, p := range env {
			aliases.Set(p.Name, p.Value)
		}
		entry := format.NewObject().Set("type", "stdio").Set("command", sp.Command).Set("args", args).Set("env", aliases)
		content, err := format.MarshalJSON(format.NewObject().Set("mcpServers", format.NewObject().Set(server.ID, entry)))
		require.NoError(t, err)
		in := spawnInput("pi")
		in.Request.Servers = []abi.Server{server}
		in.Secrets = nil
		p := spawnPlan("pi")
		p.Files[0].Content = string(content)
		return checkPlan(p, in)
	}
	require.Equal(t, []string{"-i", "-S", "T=${LOADOUT_SPAWN_1} ${LOADOUT_SPAWN_2} ${LOADOUT_SPAWN_3} ${LOADOUT_SPAWN_4} ${LOADOUT_SPAWN_5} ${LOADOUT_SPAWN_6}", "a~/x", "--opt=~/x"}, sp.Args)
	require.NoError(t, check(sp.Args, sp.Env), "Check(the SPEC WrapSpawn writes)")
	bare := []string{"-i", "-S", "T=${LOADOUT_SPAWN_1}", "/usr/bin/srv", "a b", "~", "$x", "~/x", "a~/x", "--opt=~/x"}
	require.ErrorContains(t, check(bare, sp.Env[:1]), `starts with "~/" would be replaced`)
	changed := slices.Clone(sp.Env)
	changed[4].Value = "~"
	require.ErrorContains(t, check(sp.Args, changed), "is not the vetted command or arg at its place")
}
