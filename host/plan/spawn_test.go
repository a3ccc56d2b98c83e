package plan_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// The wrapper fixtures below are written by hand after docs/SPAWN-ENV.md ("Recommendation"),
// independently of the renderers, so that they pin the documented shape per harness.

const secretBeta = "{{loadout.secret.3}}"

// spawnInput is the vetted request of the wrapper fixtures: alpha has a host env, an own env
// overriding HOME (first position, last value), a value holding "${" and "$", a secret, a value
// starting with "!", a cwd, and an arg holding "${"; beta has a secret of its own and no host
// env; gamma has an empty spawn env.
func spawnInput(harness string) plan.Input {
	in := input(harness)
	in.Request = abi.Request{
		ABIVersion: abi.Version,
		Harness:    harness,
		Servers: []abi.Server{
			{
				ID: "alpha", Transport: abi.TransportStdio, Command: "/usr/bin/alpha", Args: []string{"serve", "${NOT_EXPANDED}"},
				HostEnv: []abi.Pair{{Name: "PATH", Value: "/usr/bin:/bin"}, {Name: "HOME", Value: "/home/u"}},
				Env: []abi.Pair{
					{Name: "CFG", Value: "a ${HOME} !b $x"},
					{Name: "API_KEY", Value: secretKey, Secret: true},
					{Name: "HOME", Value: "/srv/home"},
					{Name: "BANG", Value: "!run"},
				},
				Cwd: "/srv/a", Enabled: true,
			},
			{
				ID: "beta", Transport: abi.TransportStdio, Command: "/usr/bin/beta",
				Env: []abi.Pair{{Name: "TOKEN", Value: secretBeta, Secret: true}}, Enabled: true,
			},
			{ID: "gamma", Transport: abi.TransportStdio, Command: "npx", Args: []string{"-y", "gamma"}, Enabled: true},
		},
	}
	in.Secrets = []plan.Secret{
		{Placeholder: secretKey, Value: "k", Server: "alpha", Field: plan.FieldEnv, Key: "API_KEY"},
		{Placeholder: secretBeta, Value: "b", Server: "beta", Field: plan.FieldEnv, Key: "TOKEN"},
	}
	in.Blobs = nil
	return in
}

// D is Claude's spelling of a literal "$" before "{".
const claudeD = "${LOADOUT_SPAWN_DOLLAR:-$}"

const claudeSpawnConfig = `{"mcpServers":{` +
	`"alpha":{"type":"stdio","command":"/usr/bin/env","args":["-i","-C","/srv/a","-S",` +
	`"PATH=` + claudeD + `{LOADOUT_SPAWN_1} HOME=` + claudeD + `{LOADOUT_SPAWN_2} CFG=` + claudeD + `{LOADOUT_SPAWN_3}` + claudeD + `{LOADOUT_SPAWN_4} ` +
	`API_KEY=` + claudeD + `{LOADOUT_SPAWN_5} BANG=` + claudeD + `{LOADOUT_SPAWN_6}",` +
	`"/usr/bin/alpha","serve","` + claudeD + `{NOT_EXPANDED}"],` +
	`"env":{"LOADOUT_SPAWN_1":"/usr/bin:/bin","LOADOUT_SPAWN_2":"/srv/home","LOADOUT_SPAWN_3":"a $","LOADOUT_SPAWN_4":"{HOME} !b $x",` +
	`"LOADOUT_SPAWN_5":"{{loadout.secret.1}}","LOADOUT_SPAWN_6":"!run"}},` +
	`"beta":{"type":"stdio","command":"/usr/bin/env","args":["-i","-S","TOKEN=` + claudeD + `{LOADOUT_SPAWN_1}","/usr/bin/beta"],` +
	`"env":{"LOADOUT_SPAWN_1":"{{loadout.secret.3}}"}},` +
	`"gamma":{"type":"stdio","command":"/usr/bin/env","args":["-i","npx","-y","gamma"]}}}`

const codexSpawnConfig = `[mcp_servers.alpha]
command = "/usr/bin/env"
args = ["-i", "-S", "PATH=${LOADOUT_SPAWN_1} HOME=${LOADOUT_SPAWN_2} CFG=${LOADOUT_SPAWN_3} API_KEY=${LOADOUT_SPAWN_4} BANG=${LOADOUT_SPAWN_5}", "/usr/bin/alpha", "serve", "${NOT_EXPANDED}"]
cwd = "/srv/a"

[mcp_servers.alpha.env]
LOADOUT_SPAWN_1 = "/usr/bin:/bin"
LOADOUT_SPAWN_2 = "/srv/home"
LOADOUT_SPAWN_3 = "a ${HOME} !b $x"
LOADOUT_SPAWN_4 = "{{loadout.secret.1}}"
LOADOUT_SPAWN_5 = "!run"

[mcp_servers.beta]
command = "/usr/bin/env"
args = ["-i", "-S", "TOKEN=${LOADOUT_SPAWN_1}", "/usr/bin/beta"]
env = { LOADOUT_SPAWN_1 = "{{loadout.secret.3}}" }

[mcp_servers.gamma]
command = "/usr/bin/env"
args = ["-i", "npx", "-y", "gamma"]
`

const piSpawnConfig = `{"mcpServers":{` +
	`"alpha":{"type":"stdio","command":"/usr/bin/env","args":["-i","-S",` +
	`"PATH=${LOADOUT_SPAWN_1} HOME=${LOADOUT_SPAWN_2} CFG=${LOADOUT_SPAWN_3} API_KEY=${LOADOUT_SPAWN_4} BANG=${LOADOUT_SPAWN_5}",` +
	`"/usr/bin/alpha","serve","${NOT_EXPANDED}"],` +
	`"env":{"LOADOUT_SPAWN_1":"/usr/bin:/bin","LOADOUT_SPAWN_2":"/srv/home","LOADOUT_SPAWN_3":"a $${HOME} !b $$x",` +
	`"LOADOUT_SPAWN_4":"{{loadout.secret.1}}","LOADOUT_SPAWN_5":"$!run"},"cwd":"/srv/a"},` +
	`"beta":{"type":"stdio","command":"/usr/bin/env","args":["-i","-S","TOKEN=${LOADOUT_SPAWN_1}","/usr/bin/beta"],` +
	`"env":{"LOADOUT_SPAWN_1":"{{loadout.secret.3}}"}},` +
	`"gamma":{"type":"stdio","command":"/usr/bin/env","args":["-i","npx","-y","gamma"]}}}`

// spawnPlan is the plan a renderer following docs/SPAWN-ENV.md returns for spawnInput(harness).
func spawnPlan(harness string) *abi.Plan {
	switch harness {
	case "claude":
		return &abi.Plan{
			Files: []abi.File{{Root: abi.RootRun, Path: "mcp-servers.json", Mode: "0600", Format: abi.FormatJSON, Content: claudeSpawnConfig, Secret: true}},
			Args:  []string{"--mcp-config", "{{loadout.root.run}}/mcp-servers.json", "--strict-mcp-config"},
			Env:   []abi.Pair{{Name: "LOADOUT_SPAWN_DOLLAR", Value: "$"}, {Name: "CLAUDE_CONFIG_DIR", Value: "{{loadout.root.config}}"}},
		}
	case "codex":
		return &abi.Plan{
			Files: []abi.File{{Root: abi.RootConfig, Path: "config.toml", Mode: "0600", Format: abi.FormatTOML, Content: codexSpawnConfig, Secret: true}},
			Env:   []abi.Pair{{Name: "CODEX_HOME", Value: "{{loadout.root.config}}"}},
		}
	case "copilot": // the config is the test's own
		return &abi.Plan{
			Files: []abi.File{{Root: abi.RootConfig, Path: "mcp-config.json", Mode: "0600", Format: abi.FormatJSON, Secret: true}},
			Args:  []string{"--disable-builtin-mcps", "--no-auto-update"},
			Env:   []abi.Pair{{Name: "COPILOT_HOME", Value: "{{loadout.root.config}}"}, {Name: "COPILOT_ALLOW_ALL", Value: "false"}, {Name: "LOADOUT_SPAWN_DOLLAR", Value: "$"}},
		}
	}
	return &abi.Plan{
		Files: []abi.File{{Root: abi.RootConfig, Path: "mcp.json", Mode: "0600", Format: abi.FormatJSON, Content: piSpawnConfig, Secret: true}},
		Env:   []abi.Pair{{Name: "PI_CODING_AGENT_DIR", Value: "{{loadout.root.config}}"}},
	}
}

func TestCheckAcceptsSpawnWrapper(t *testing.T) {
	t.Parallel()
	for _, harness := range []string{"claude", "codex", "pi"} {
		t.Run(harness, func(t *testing.T) {
			t.Parallel()
			err := checkPlan(spawnPlan(harness), spawnInput(harness))
			require.NoError(t, err, "Check(%s plan with every stdio server env-wrapped) = %v, want nil", harness, err)
		})
	}
	// Claude's -C is optional; a name env -S cannot carry is left out when a warning names the
	// server.
	t.Run("claude without -C", func(t *testing.T) {
		t.Parallel()
		p := spawnPlan("claude")
		p.Files[0].Content = strings.Replace(p.Files[0].Content, `"-i","-C","/srv/a",`, `"-i",`, 1)
		require.NoError(t, checkPlan(p, spawnInput("claude")), "Check(claude wrapper without -C) = error, want nil")
	})
	t.Run("unsupported name left out with a warning", func(t *testing.T) {
		t.Parallel()
		in := spawnInput("codex")
		in.Request.Servers[1].HostEnv = []abi.Pair{{Name: "MY-VAR", Value: "x"}}
		p := spawnPlan("codex")
		p.Warnings = []abi.Warning{{Code: "env_name_unsupported", Server: "beta", Message: "MY-VAR left out"}}
		require.NoError(t, checkPlan(p, in), "Check(codex wrapper leaving MY-VAR out with a warning) = error, want nil")
		p.Warnings = nil
		assert.Contains(t, rules(checkPlan(p, in)), plan.RuleSpawnEnv, "Check(codex wrapper leaving MY-VAR out without a warning)")
	})
	t.Run("claude env values spelled with the dollar", func(t *testing.T) {
		t.Parallel()
		p := spawnPlan("claude")
		p.Files[0].Content = strings.Replace(strings.Replace(p.Files[0].Content,
			`CFG=`+claudeD+`{LOADOUT_SPAWN_3}`+claudeD+`{LOADOUT_SPAWN_4}`, `CFG=`+claudeD+`{LOADOUT_SPAWN_3}`, 1),
			`"LOADOUT_SPAWN_3":"a $","LOADOUT_SPAWN_4":"{HOME} !b $x",`, `"LOADOUT_SPAWN_3":"a `+claudeD+`{HOME} !b $x",`, 1)
		p.Files[0].Content = strings.NewReplacer("LOADOUT_SPAWN_5", "LOADOUT_SPAWN_4", "LOADOUT_SPAWN_6", "LOADOUT_SPAWN_5").Replace(p.Files[0].Content)
		require.NoError(t, checkPlan(p, spawnInput("claude")), "Check(claude wrapper with an unsplit value spelled for Claude) = error, want nil")
	})
}

// TestCheckHostileSpawnWrappers mutates the wrapper fixtures into each way a hostile plugin
// could bend the wrapper and wants every one rejected with its rule code.
func TestCheckHostileSpawnWrappers(t *testing.T) {
	t.Parallel()
	replace := func(old, new string) func(*abi.Plan, *plan.Input) {
		return func(p *abi.Plan, _ *plan.Input) {
			c := strings.Replace(p.Files[0].Content, old, new, 1)
			if c == p.Files[0].Content {
				panic("fixture does not hold " + old)
			}
			p.Files[0].Content = c
		}
	}
	codexAlpha := `"PATH=${LOADOUT_SPAWN_1} HOME=${LOADOUT_SPAWN_2} CFG=${LOADOUT_SPAWN_3} API_KEY=${LOADOUT_SPAWN_4} BANG=${LOADOUT_SPAWN_5}"`
	tests := []struct {
		name    string
		harness string
		mutate  func(*abi.Plan, *plan.Input)
		want    []string
	}{
		// Wrapper options.
		{"extra flag -u", "codex", replace(`["-i", "-S"`, `["-i", "-u", "HOME", "-S"`), []string{plan.RuleSpawnWrapper}},
		{"extra flag -u claude", "claude", replace(`"-i","-C"`, `"-i","-u","HOME","-C"`), []string{plan.RuleSpawnWrapper}},
		{"double dash before the command", "pi", replace(`"/usr/bin/alpha"`, `"--","/usr/bin/alpha"`), []string{plan.RuleSpawnWrapper}},
		{"-P after SPEC", "codex", replace(`"/usr/bin/alpha"`, `"-P", "/tmp/evil", "/usr/bin/alpha"`), []string{plan.RuleSpawnWrapper}},
		{"-S before -C", "claude", func(p *abi.Plan, in *plan.Input) {
			replace(`"-i","-C","/srv/a","-S",`, `"-i","-S",`)(p, in)
			replace(`"/usr/bin/alpha","serve"`, `"-C","/srv/a","/usr/bin/alpha","serve"`)(p, in)
		}, nil},
		{"no -i", "pi", replace(`"args":["-i","-S","TOKEN`, `"args":["-S","TOKEN`), []string{plan.RuleSpawnWrapper}},
		{"-C with another cwd", "claude", replace(`"-C","/srv/a"`, `"-C","/tmp"`), []string{plan.RuleSpawnWrapper}},
		{"-C for a harness with a cwd key", "codex", replace(`["-i", "-S", "TOKEN`, `["-i", "-C", "/srv/a", "-S", "TOKEN`), []string{plan.RuleSpawnWrapper}},
		{"-C for a server without cwd", "claude", replace(`"args":["-i","-S","TOKEN`, `"args":["-i","-C","/","-S","TOKEN`), []string{plan.RuleSpawnWrapper}},
		{"command swapped after SPEC", "codex", replace(`"/usr/bin/alpha", "serve"`, `"/bin/sh", "serve"`), []string{plan.RuleSpawnWrapper}},
		{"arg added after SPEC", "pi", replace(`"serve",`, `"serve","--unsafe",`), []string{plan.RuleSpawnWrapper}},
		{"claude arg not spelled for Claude", "claude", replace(`"`+claudeD+`{NOT_EXPANDED}"`, `"${NOT_EXPANDED}"`), []string{plan.RuleSpawnWrapper}},
		{"codex env_vars", "codex", replace("cwd = \"/srv/a\"\n", "cwd = \"/srv/a\"\nenv_vars = [\"HOME\"]\n"), []string{plan.RuleSpawnWrapper}},
		{"wrapper around a different server", "codex", replace(`"/usr/bin/beta"]`, `"/usr/bin/alpha", "serve"]`), []string{plan.RuleSpawnWrapper}},
		// SPEC.
		{"SPEC sets LD_PRELOAD", "codex", func(p *abi.Plan, in *plan.Input) {
			replace(`BANG=${LOADOUT_SPAWN_5}"`, `BANG=${LOADOUT_SPAWN_5} LD_PRELOAD=${LOADOUT_SPAWN_6}"`)(p, in)
			replace(`LOADOUT_SPAWN_5 = "!run"`, "LOADOUT_SPAWN_5 = \"!run\"\nLOADOUT_SPAWN_6 = \"/tmp/x.so\"")(p, in)
		}, []string{plan.RuleSpawnEnv}},
		{"secret moved into SPEC literally", "pi", func(p *abi.Plan, in *plan.Input) {
			replace(`API_KEY=${LOADOUT_SPAWN_4} BANG=${LOADOUT_SPAWN_5}`, `API_KEY={{loadout.secret.1}} BANG=${LOADOUT_SPAWN_4}`)(p, in)
			replace(`"LOADOUT_SPAWN_4":"{{loadout.secret.1}}","LOADOUT_SPAWN_5":"$!run"`, `"LOADOUT_SPAWN_4":"$!run"`)(p, in)
		}, []string{plan.RuleSpawnSpec, plan.RuleSecretPlacement}},
		{"literal value in SPEC", "codex", replace(`BANG=${LOADOUT_SPAWN_5}"`, `BANG=${LOADOUT_SPAWN_5} A=b"`), []string{plan.RuleSpawnSpec}},
		{"option token in SPEC", "codex", replace(`"PATH=${LOADOUT_SPAWN_1}`, `"-u HOME PATH=${LOADOUT_SPAWN_1}`), []string{plan.RuleSpawnSpec}},
		{"name env -S would misread", "codex", replace(`BANG=${LOADOUT_SPAWN_5}"`, `B'A=${LOADOUT_SPAWN_5}"`), []string{plan.RuleSpawnSpec}},
		{"double space in SPEC", "codex", replace(`HOME=${LOADOUT_SPAWN_2} CFG`, `HOME=${LOADOUT_SPAWN_2}  CFG`), []string{plan.RuleSpawnSpec}},
		{"empty SPEC", "codex", replace(`["-i", "-S", "TOKEN=${LOADOUT_SPAWN_1}",`, `["-i", "-S", "",`), []string{plan.RuleSpawnSpec, plan.RuleSpawnEnv}},
		{"name set twice", "codex", func(p *abi.Plan, in *plan.Input) {
			replace(`BANG=${LOADOUT_SPAWN_5}"`, `BANG=${LOADOUT_SPAWN_5} HOME=${LOADOUT_SPAWN_6}"`)(p, in)
			replace(`LOADOUT_SPAWN_5 = "!run"`, "LOADOUT_SPAWN_5 = \"!run\"\nLOADOUT_SPAWN_6 = \"/srv/home\"")(p, in)
		}, []string{plan.RuleSpawnSpec}},
		{"claude plain reference", "claude", replace(`BANG=`+claudeD+`{LOADOUT_SPAWN_6}`, `BANG=${LOADOUT_SPAWN_6}`), []string{plan.RuleSpawnSpec}},
		{"codex split reference", "codex", func(p *abi.Plan, in *plan.Input) {
			replace(`BANG=${LOADOUT_SPAWN_5}"`, `BANG=${LOADOUT_SPAWN_5}${LOADOUT_SPAWN_6}"`)(p, in)
			replace(`LOADOUT_SPAWN_5 = "!run"`, "LOADOUT_SPAWN_5 = \"!r\"\nLOADOUT_SPAWN_6 = \"un\"")(p, in)
		}, []string{plan.RuleSpawnSpec}},
		{"-S left out", "codex", replace(`"-i", "-S", `+codexAlpha+`, `, `"-i", `), []string{plan.RuleSpawnEnv, plan.RuleSpawnAlias}},
		// The alias map.
		{"alias points at another server's secret", "codex", replace(`LOADOUT_SPAWN_4 = "{{loadout.secret.1}}"`, `LOADOUT_SPAWN_4 = "{{loadout.secret.3}}"`), []string{plan.RuleSecretPlacement, plan.RuleSpawnEnv}},
		{"alias points at another server's secret claude", "claude", replace(`"LOADOUT_SPAWN_5":"{{loadout.secret.1}}"`, `"LOADOUT_SPAWN_5":"{{loadout.secret.3}}"`), []string{plan.RuleSecretPlacement}},
		{"secret under another name", "pi", func(p *abi.Plan, in *plan.Input) {
			replace(`API_KEY=${LOADOUT_SPAWN_4}`, `API_KEY=${LOADOUT_SPAWN_4} LEAK=${LOADOUT_SPAWN_4}`)(p, in)
		}, []string{plan.RuleSecretPlacement, plan.RuleSpawnAlias, plan.RuleSpawnEnv}},
		{"unused alias", "codex", replace(`LOADOUT_SPAWN_5 = "!run"`, "LOADOUT_SPAWN_5 = \"!run\"\nLOADOUT_SPAWN_6 = \"{{loadout.secret.1}}\""), []string{plan.RuleSpawnAlias, plan.RuleSecretPlacement}},
		{"missing alias", "pi", replace(`,"LOADOUT_SPAWN_5":"$!run"`, ``), []string{plan.RuleSpawnAlias}},
		{"real name besides the aliases", "claude", replace(`"LOADOUT_SPAWN_6":"!run"`, `"LOADOUT_SPAWN_6":"!run","LD_PRELOAD":"/tmp/x.so"`), []string{plan.RuleSpawnAlias}},
		{"real name only", "codex", replace(`env = { LOADOUT_SPAWN_1 = "{{loadout.secret.3}}" }`, `env = { LOADOUT_SPAWN_1 = "{{loadout.secret.3}}", TOKEN = "{{loadout.secret.3}}" }`), []string{plan.RuleSpawnAlias}},
		{"alias referenced twice", "codex", replace(`BANG=${LOADOUT_SPAWN_5}`, `BANG=${LOADOUT_SPAWN_4}`), []string{plan.RuleSpawnAlias}},
		{"aliases out of order", "codex", replace(`PATH=${LOADOUT_SPAWN_1} HOME=${LOADOUT_SPAWN_2}`, `PATH=${LOADOUT_SPAWN_2} HOME=${LOADOUT_SPAWN_1}`), []string{plan.RuleSpawnAlias, plan.RuleSpawnEnv}},
		{"alias with leading zero", "codex", replace(`env = { LOADOUT_SPAWN_1 =`, `env = { LOADOUT_SPAWN_01 =`), []string{plan.RuleSpawnAlias}},
		{"pi value not escaped", "pi", replace(`"LOADOUT_SPAWN_5":"$!run"`, `"LOADOUT_SPAWN_5":"!run"`), []string{plan.RuleSpawnAlias}},
		{"pi value expands", "pi", replace(`"a $${HOME} !b $$x"`, `"a ${HOME} !b $$x"`), []string{plan.RuleSpawnAlias}},
		{"claude value unsplit", "claude", replace(`"LOADOUT_SPAWN_4":"{HOME} !b $x"`, `"LOADOUT_SPAWN_4":"${HOME} !b $x"`), []string{plan.RuleSpawnAlias}},
		{"placeholder split across aliases", "claude", func(p *abi.Plan, in *plan.Input) {
			replace(`CFG=`+claudeD+`{LOADOUT_SPAWN_3}`+claudeD+`{LOADOUT_SPAWN_4}`, `CFG=`+claudeD+`{LOADOUT_SPAWN_3}`)(p, in)
			replace(`"LOADOUT_SPAWN_3":"a $","LOADOUT_SPAWN_4":"{HOME} !b $x",`, `"LOADOUT_SPAWN_3":"a `+claudeD+`{HOME} !b $x","LOADOUT_SPAWN_4":"{{loadout",`)(p, in)
			replace(`"LOADOUT_SPAWN_5":"{{loadout.secret.1}}"`, `"LOADOUT_SPAWN_5":".secret.1}}"`)(p, in)
			replace(`API_KEY=`+claudeD+`{LOADOUT_SPAWN_5}`, `API_KEY=`+claudeD+`{LOADOUT_SPAWN_4}`+claudeD+`{LOADOUT_SPAWN_5}`)(p, in)
		}, []string{plan.RuleSpawnAlias}},
		// The resulting environment.
		{"value changed", "codex", replace(`LOADOUT_SPAWN_2 = "/srv/home"`, `LOADOUT_SPAWN_2 = "/home/u"`), []string{plan.RuleSpawnEnv}},
		{"entry dropped", "codex", func(p *abi.Plan, in *plan.Input) {
			replace(` BANG=${LOADOUT_SPAWN_5}"`, `"`)(p, in)
			replace("\nLOADOUT_SPAWN_5 = \"!run\"", "")(p, in)
		}, []string{plan.RuleSpawnEnv}},
		{"entries reordered", "codex", func(p *abi.Plan, in *plan.Input) {
			replace(`PATH=${LOADOUT_SPAWN_1} HOME=${LOADOUT_SPAWN_2}`, `HOME=${LOADOUT_SPAWN_1} PATH=${LOADOUT_SPAWN_2}`)(p, in)
			replace("LOADOUT_SPAWN_1 = \"/usr/bin:/bin\"\nLOADOUT_SPAWN_2 = \"/srv/home\"", "LOADOUT_SPAWN_1 = \"/srv/home\"\nLOADOUT_SPAWN_2 = \"/usr/bin:/bin\"")(p, in)
		}, []string{plan.RuleSpawnEnv}},
		{"host env the policy removed", "codex", func(p *abi.Plan, in *plan.Input) {
			in.Request.Servers[0].HostEnv = in.Request.Servers[0].HostEnv[1:]
		}, []string{plan.RuleSpawnEnv}},
		{"empty spawn env given a SPEC", "pi", replace(`["-i","npx","-y","gamma"]`, `["-i","-S","X=${LOADOUT_SPAWN_1}","npx","-y","gamma"],"env":{"LOADOUT_SPAWN_1":"y"}`), []string{plan.RuleSpawnEnv}},
		// The harness environment the wrapper relies on.
		{"claude dollar redirected", "claude", func(p *abi.Plan, _ *plan.Input) { p.Env[0].Value = "LD_PRELOAD=/x.so $" }, []string{plan.RuleEnv}},
		{"alias in the harness env", "codex", func(p *abi.Plan, _ *plan.Input) {
			p.Env = append(p.Env, abi.Pair{Name: "LOADOUT_SPAWN_9", Value: "x"})
		}, []string{plan.RuleEnv}},
		{"dollar for a harness without it", "pi", func(p *abi.Plan, _ *plan.Input) {
			p.Env = append(p.Env, abi.Pair{Name: "LOADOUT_SPAWN_DOLLAR", Value: "$"})
		}, []string{plan.RuleEnv}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := spawnPlan(tc.harness)
			in := spawnInput(tc.harness)
			tc.mutate(p, &in)
			err := checkPlan(p, in)
			require.Error(t, err, "Check(%s wrapper plan with %s) = nil, want a violation", tc.harness, tc.name)
			got := rules(err)
			want := tc.want
			if want == nil {
				want = []string{plan.RuleSpawnWrapper}
			}
			for _, w := range want {
				assert.Contains(t, got, w, "Check(%s wrapper plan with %s) rules = %v, want %s among them; error: %v", tc.harness, tc.name, got, w, err)
			}
		})
	}
}

// TestCheckHarnessSpelling checks the per-harness spelling of values outside the wrapper (and
// that a verbatim stdio launch, which the harness would expand, is refused outright):
// Claude expands ${NAME} in urls and args, and twice in headers, Pi resolves $ and a leading !
// in headers.
func TestCheckHarnessSpelling(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, harness, config string
		server                abi.Server
		ok                    bool
		rule                  string // the violation wanted when !ok; "" is server_mismatch
	}{
		// Claude expands a header value twice (its profile's passes): spelled for one pass, the
		// second pass would send Claude's own HOME.
		{"claude header spelled once", "claude", `{"mcpServers":{"h":{"type":"http","url":"https://x/","headers":{"X":"` + claudeD + `{HOME}"}}}}`,
			abi.Server{ID: "h", Transport: abi.TransportHTTP, URL: "https://x/", Headers: []abi.Pair{{Name: "X", Value: "${HOME}"}}, Enabled: true}, false, ""},
		{"claude header spelled twice", "claude", `{"mcpServers":{"h":{"type":"http","url":"https://x/","headers":{"X":"` + claudeD + `{LOADOUT_SPAWN_DOLLAR:-$}{HOME}"}}}}`,
			abi.Server{ID: "h", Transport: abi.TransportHTTP, URL: "https://x/", Headers: []abi.Pair{{Name: "X", Value: "${HOME}"}}, Enabled: true}, true, ""},
		{"claude header expanded", "claude", `{"mcpServers":{"h":{"type":"http","url":"https://x/","headers":{"X":"${HOME}"}}}}`,
			abi.Server{ID: "h", Transport: abi.TransportHTTP, URL: "https://x/", Headers: []abi.Pair{{Name: "X", Value: "${HOME}"}}, Enabled: true}, false, ""},
		{"claude url expanded", "claude", `{"mcpServers":{"h":{"type":"http","url":"https://${HOST}/"}}}`,
			abi.Server{ID: "h", Transport: abi.TransportHTTP, URL: "https://${HOST}/", Enabled: true}, false, ""},
		{"claude url spelled", "claude", `{"mcpServers":{"h":{"type":"http","url":"https://` + claudeD + `{HOST}/"}}}`,
			abi.Server{ID: "h", Transport: abi.TransportHTTP, URL: "https://${HOST}/", Enabled: true}, true, ""},
		{"claude verbatim arg expanded", "claude", `{"mcpServers":{"s":{"type":"stdio","command":"x","args":["${HOME}"]}}}`,
			abi.Server{ID: "s", Transport: abi.TransportStdio, Command: "x", Args: []string{"${HOME}"}, Enabled: true}, false, plan.RuleSpawnWrapper},
		{"pi header spelled", "pi", `{"mcpServers":{"h":{"type":"http","url":"https://x/","headers":{"X":"$!a$$b"}}}}`,
			abi.Server{ID: "h", Transport: abi.TransportHTTP, URL: "https://x/", Headers: []abi.Pair{{Name: "X", Value: "!a$b"}}, Enabled: true}, true, ""},
		{"pi header runs a command", "pi", `{"mcpServers":{"h":{"type":"http","url":"https://x/","headers":{"X":"!a"}}}}`,
			abi.Server{ID: "h", Transport: abi.TransportHTTP, URL: "https://x/", Headers: []abi.Pair{{Name: "X", Value: "!a"}}, Enabled: true}, false, ""},
		{"pi verbatim env expands", "pi", `{"mcpServers":{"s":{"type":"stdio","command":"x","env":{"A":"$HOME"}}}}`,
			abi.Server{ID: "s", Transport: abi.TransportStdio, Command: "x", Env: []abi.Pair{{Name: "A", Value: "$HOME"}}, Enabled: true}, false, plan.RuleSpawnWrapper},
		{"codex header literal", "codex", "[mcp_servers.h]\nurl = \"https://x/\"\nhttp_headers = { X = \"${HOME} !a\" }\n",
			abi.Server{ID: "h", Transport: abi.TransportHTTP, URL: "https://x/", Headers: []abi.Pair{{Name: "X", Value: "${HOME} !a"}}, Enabled: true}, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := input(tc.harness)
			in.Request = abi.Request{ABIVersion: abi.Version, Harness: tc.harness, Servers: []abi.Server{tc.server}}
			in.Secrets, in.Blobs = nil, nil
			p := spawnPlan(tc.harness)
			p.Files[0].Content = tc.config
			p.Files[0].Secret = false
			err := checkPlan(p, in)
			if tc.ok {
				require.NoError(t, err, "Check(%s config %s) = %v, want nil", tc.harness, tc.config, err)
				return
			}
			want := tc.rule
			if want == "" {
				want = plan.RuleServerMismatch
			}
			assert.Contains(t, rules(err), want, "Check(%s config %s) rules, want %s; error: %v", tc.harness, tc.config, want, err)
		})
	}
}
