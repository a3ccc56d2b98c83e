package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// continueTimeout bounds one offline Continue CLI run (`cn -p` starts its MCP servers, then
// fails on the closed model port within seconds).
const continueTimeout = 90 * time.Second

// continueDir is a scratch layout for Continue CLI: a git checkout, a private HOME, the global
// directory CONTINUE_GLOBAL_DIR names, and the directory the canaries report into.
type continueDir struct {
	Dir, Checkout, Home, Global, Out string
}

func newContinueDir(t *testing.T) continueDir {
	t.Helper()
	dir := t.TempDir()
	d := continueDir{
		Dir:      dir,
		Checkout: filepath.Join(dir, "checkout"),
		Home:     filepath.Join(dir, "home"),
		Global:   filepath.Join(dir, "global"),
		Out:      filepath.Join(dir, "out"),
	}
	for _, p := range []string{filepath.Join(d.Checkout, ".git"), d.Home, d.Global, d.Out} {
		require.NoError(t, os.MkdirAll(p, 0o700), "mkdir %s", p)
	}
	return d
}

// config writes a config.yaml for `cn --config` with one model on a closed loopback port and
// the given MCP servers, and returns its path.
func (d continueDir) config(t *testing.T, name string, servers []map[string]any) string {
	t.Helper()
	cfg := map[string]any{
		"name": "e2e", "version": "0.0.1", "schema": "v1",
		"models": []map[string]any{{
			"name": "m", "provider": "openai", "model": "gpt-4o", "apiKey": "dummy",
			"apiBase": "http://127.0.0.1:" + closedPort(t) + "/v1", "roles": []string{"chat"},
		}},
		"mcpServers": servers,
	}
	b, err := yaml.Marshal(cfg)
	require.NoError(t, err, "encode the config")
	path := filepath.Join(d.Dir, name)
	require.NoError(t, os.WriteFile(path, b, 0o600), "write %s", path)
	return path
}

// canary is a stdio server entry running the canary, which reports to <out>/<id>.json.
func (d continueDir) canary(canary, id string, args []string, env map[string]string) map[string]any {
	s := map[string]any{"name": id, "command": canary, "args": append([]string{filepath.Join(d.Out, id+".json")}, args...)}
	if env != nil {
		s["env"] = env
	}
	return s
}

// print runs `cn -p hello` in the checkout with the environment harnessEnv builds for d and extra:
// it loads the config, starts the MCP servers, then fails on the model call.
func (d continueDir) print(t *testing.T, c clis, extra []string, args ...string) result {
	t.Helper()
	env := harnessEnv(c, d.Home, nil, append([]string{"CONTINUE_GLOBAL_DIR=" + d.Global}, extra...)...)
	argv := append([]string{c.Continue, "-p", "hello"}, args...)
	res, err := run(context.Background(), continueTimeout, d.Checkout, env, nil, argv...)
	require.NoError(t, err, "cn -p")
	return res
}

// report reads the canary report of server id, or fails naming the run's output.
func (d continueDir) report(t *testing.T, id string, res result) canaryReport {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(d.Out, id+".json"))
	require.NoError(t, err, "Continue CLI must start server %s (stdout: %s, stderr: %s)", id, tail(res.Stdout), tail(res.Stderr))
	var rep canaryReport
	require.NoError(t, json.Unmarshal(raw, &rep), "decode canary report %s", raw)
	return rep
}

func (d continueDir) started(id string) bool {
	_, err := os.Stat(filepath.Join(d.Out, id+".json"))
	return err == nil
}

func envMap(kvs []string) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// TestContinueExpandsSecretsInText records with the real Continue CLI the reason it has no
// built-in renderer (docs/FORMATS.md, Continue CLI 1.5.47): it replaces every
// ${{ secrets.NAME }} of its config, in args and env alike, with the variable's value, and it
// does so in the YAML text of the config before parsing it again, so a value holding a newline
// adds an argument. There is no escape ($${{ and \${{ are expanded too), and an unset secret
// fails the server. $NAME, ${NAME}, ${{ inputs.NAME }} and a leading ~ are left as written, and
// a secret with $ \ " ' written in the config arrives byte-exact.
func TestContinueExpandsSecretsInText(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	canary := canaryBinary(t)
	d := newContinueDir(t)
	const secret = `s3cr$t\"'`
	cfg := d.config(t, "config.yaml", []map[string]any{d.canary(canary, "s", []string{
		"a$E2E_HARNESS_ONLY", "b${E2E_HARNESS_ONLY}", "c${{ secrets.E2E_HARNESS_ONLY }}",
		"d$${{ secrets.E2E_HARNESS_ONLY }}", `e\${{ secrets.E2E_HARNESS_ONLY }}`,
		"f${{ inputs.E2E_HARNESS_ONLY }}", "~/x", secret, "g${{ secrets.E2E_SPLIT }}",
	}, map[string]string{"A": "${{ secrets.E2E_HARNESS_ONLY }}", "B": "$E2E_HARNESS_ONLY"})})
	before, err := os.ReadFile(cfg)
	require.NoError(t, err)

	res := d.print(t, c, []string{"E2E_SPLIT=x\n      - injected"}, "--config", cfg)
	rep := d.report(t, "s", res)
	require.NotEmpty(t, rep.Cmdlines, "the canary reports its command line")
	assert.Equal(t, []string{
		canary, filepath.Join(d.Out, "s.json"),
		"a$E2E_HARNESS_ONLY", "b${E2E_HARNESS_ONLY}", "charness-only-marker",
		"d$harness-only-marker", `e\harness-only-marker`,
		"f${{ inputs.E2E_HARNESS_ONLY }}", "~/x", secret, "gx", "injected",
	}, rep.Cmdlines[0].Argv, "cn expands ${{ secrets.NAME }} in the config's text, with no escape")
	env := envMap(rep.Env)
	assert.Equal(t, "harness-only-marker", env["A"], "env values are expanded the same way")
	assert.Equal(t, "$E2E_HARNESS_ONLY", env["B"], "$NAME is not expanded")
	after, err := os.ReadFile(cfg)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the --config file is only read")

	// A secret the environment does not hold fails the server: it is never started.
	d2 := newContinueDir(t)
	cfg2 := d2.config(t, "config.yaml", []map[string]any{d2.canary(canary, "u", []string{"${{ secrets.E2E_UNSET }}"}, nil)})
	res2 := d2.print(t, c, nil, "--config", cfg2)
	assert.False(t, d2.started("u"), "a server with an unset secret does not start")
	assert.Contains(t, string(res2.Stdout)+string(res2.Stderr), "unresolved secrets: E2E_UNSET", "cn names the unset secret")
}

// TestContinueReadsCheckoutEnv records with the real Continue CLI what it reads besides the
// --config file (docs/FORMATS.md, Continue CLI 1.5.47): it loads the checkout's .env into its
// own environment (a variable the caller sets wins), so the file sets the CLI's variables, the
// values of ${{ secrets.NAME }} and, through the environment every stdio server inherits, the
// server's. With --config, the checkout's .continue/config.yaml and .continue/mcpServers are not
// read, and neither is the global config.yaml; a SessionStart hook in the checkout's
// .continue/settings.json does not run under -p.
func TestContinueReadsCheckoutEnv(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	canary := canaryBinary(t)
	d := newContinueDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(d.Checkout, ".env"), []byte("PLANTED_VAR=planted\nE2E_CALLER=from-dotenv\n"), 0o600))
	intruder := func(id string) []byte {
		b, err := yaml.Marshal(map[string]any{"name": id, "version": "0.0.1", "schema": "v1",
			"mcpServers": []map[string]any{d.canary(canary, id, nil, nil)}})
		require.NoError(t, err)
		return b
	}
	for path, body := range map[string][]byte{
		filepath.Join(d.Checkout, ".continue", "config.yaml"):                 intruder("checkout-config"),
		filepath.Join(d.Checkout, ".continue", "mcpServers", "intruder.yaml"): intruder("checkout-mcp"),
		filepath.Join(d.Global, "config.yaml"):                                intruder("global-config"),
		filepath.Join(d.Checkout, ".continue", "settings.json"): []byte(`{"hooks": {"SessionStart": [{"hooks": [` +
			`{"type": "command", "command": "touch ` + filepath.Join(d.Out, "hook-ran") + `"}]}]}}`),
	} {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
		require.NoError(t, os.WriteFile(path, body, 0o600))
	}
	cfg := d.config(t, "run.yaml", []map[string]any{d.canary(canary, "run", []string{"${{ secrets.PLANTED_VAR }}"}, map[string]string{"E2E_ENTRY": "entry"})})

	res := d.print(t, c, []string{"E2E_CALLER=caller"}, "--config", cfg)
	rep := d.report(t, "run", res)
	require.NotEmpty(t, rep.Cmdlines, "the canary reports its command line")
	assert.Equal(t, "planted", rep.Cmdlines[0].Argv[len(rep.Cmdlines[0].Argv)-1], "the checkout's .env gives a secret's value")
	env := envMap(rep.Env)
	assert.Equal(t, "planted", env["PLANTED_VAR"], "the checkout's .env reaches a stdio server")
	assert.Equal(t, "caller", env["E2E_CALLER"], "a variable the caller sets wins over .env")
	assert.Equal(t, "harness-only-marker", env["E2E_HARNESS_ONLY"], "a stdio server inherits cn's whole environment")
	assert.Equal(t, "entry", env["E2E_ENTRY"], "then its env entries")
	for _, id := range []string{"checkout-config", "checkout-mcp", "global-config"} {
		assert.False(t, d.started(id), "with --config, cn does not start server %s", id)
	}
	assert.NoFileExists(t, filepath.Join(d.Out, "hook-ran"), "the checkout's SessionStart hook does not run under -p")
}
