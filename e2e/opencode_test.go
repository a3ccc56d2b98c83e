package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// opencodeTimeout bounds one offline command of opencode or a fork of it.
const opencodeTimeout = 90 * time.Second

// opencodeDir is a scratch layout for opencode or a fork of it (the Kilo Code CLI): a git
// checkout, a private HOME, and the XDG directories it keeps its config, data, state and cache
// in. Bin is the CLI; Prefix is its variables' prefix (OPENCODE, KILO).
type opencodeDir struct {
	Dir, Checkout, Home, XDGConfig string
	Bin, Prefix                    string
}

func newOpencodeDir(t *testing.T, bin, prefix string) opencodeDir {
	t.Helper()
	dir := t.TempDir()
	d := opencodeDir{
		Bin:       bin,
		Prefix:    prefix,
		Dir:       dir,
		Checkout:  filepath.Join(dir, "checkout"),
		Home:      filepath.Join(dir, "home"),
		XDGConfig: filepath.Join(dir, "xdg-config"),
	}
	for _, p := range []string{filepath.Join(d.Checkout, ".git"), d.Home, d.XDGConfig} {
		require.NoError(t, os.MkdirAll(p, 0o700), "mkdir %s", p)
	}
	return d
}

// env is the environment of a command of the CLI: harnessEnv with the XDG directories under the
// scratch directory and its auto-update and model fetch off, then extra.
func (d opencodeDir) env(c clis, extra ...string) []string {
	return harnessEnv(c, d.Home, nil, append([]string{
		"XDG_CONFIG_HOME=" + d.XDGConfig,
		"XDG_DATA_HOME=" + filepath.Join(d.Dir, "xdg-data"),
		"XDG_STATE_HOME=" + filepath.Join(d.Dir, "xdg-state"),
		"XDG_CACHE_HOME=" + filepath.Join(d.Dir, "xdg-cache"),
		d.Prefix + "_DISABLE_AUTOUPDATE=1",
		d.Prefix + "_DISABLE_MODELS_FETCH=1",
	}, extra...)...)
}

// opencodeConfig is the part of `opencode debug config` the checks read.
type opencodeConfig struct {
	MCP map[string]struct {
		Type        string            `json:"type"`
		Command     []string          `json:"command"`
		Environment map[string]string `json:"environment"`
	} `json:"mcp"`
}

// debugConfig runs `<cli> debug config` in the checkout: the configuration the CLI resolved
// from every source it reads, printed as JSON without starting a server.
func (d opencodeDir) debugConfig(t *testing.T, c clis, env []string) opencodeConfig {
	t.Helper()
	res, err := run(context.Background(), opencodeTimeout, d.Checkout, env, nil, d.Bin, "debug", "config")
	require.NoError(t, err, "%s debug config", d.Bin)
	require.Equal(t, 0, res.Exit, "%s debug config exit status (stderr: %s)", d.Bin, tail(res.Stderr))
	var cfg opencodeConfig
	require.NoError(t, json.Unmarshal(res.Stdout, &cfg), "decode %s debug config: %s", d.Bin, res.Stdout)
	return cfg
}

func (cfg opencodeConfig) servers() []string {
	var ids []string
	for id := range cfg.MCP {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// TestOpencodeExpandsRawText records with the real opencode why it has no built-in renderer
// yet (docs/FORMATS.md §5.4): it replaces {env:NAME} and {file:PATH} in the text of its config
// file before parsing it as JSON, so a value of the environment lands in the JSON text as
// written (one holding `","` splits a string in two, one holding `"]}, "injected": {…` adds a
// server; an unset one is empty), while a string whose `{` is written as the
// JSON escape \u007b reaches opencode as written. $NAME, ${NAME}, a backslash, quotes and a
// leading ~ are never expanded.
func TestOpencodeExpandsRawText(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	d := newOpencodeDir(t, c.Opencode, "OPENCODE")
	file := filepath.Join(d.Dir, "file.txt")
	require.NoError(t, os.WriteFile(file, []byte("from-file"), 0o600))
	cfgPath := filepath.Join(d.Dir, "run", "opencode.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(cfgPath), 0o700))
	// Written as text: the escapes are what the test is about.
	text := `{"$schema": "https://opencode.ai/config.json", "mcp": {"s": {"type": "local", "command": [` +
		`"/bin/true", "{env:E2E_HARNESS_ONLY}", "\u007benv:E2E_HARNESS_ONLY}", "{file:` + file + `}", ` +
		`"\u007bfile:` + file + `}", "$E2E_HARNESS_ONLY", "${E2E_HARNESS_ONLY}", "~/x", "s3cr$t\\\"'", "{env:E2E_SPLIT}", "{env:E2E_UNSET}"], ` +
		`"environment": {"A": "{env:E2E_HARNESS_ONLY}", "B": "\u007benv:E2E_HARNESS_ONLY}"}}, ` +
		`"t": {"type": "local", "command": ["/bin/true", "{env:E2E_INJECT}"]}}}`
	require.NoError(t, os.WriteFile(cfgPath, []byte(text), 0o600))

	cfg := d.debugConfig(t, c, d.env(c, "OPENCODE_CONFIG="+cfgPath, "OPENCODE_DISABLE_PROJECT_CONFIG=1", `E2E_SPLIT=a", "b`,
		`E2E_INJECT=c"]}, "injected": {"type": "local", "command": ["/bin/false`))
	require.Contains(t, cfg.MCP, "s", "opencode reads the OPENCODE_CONFIG file")
	assert.Equal(t, []string{
		"/bin/true", "harness-only-marker", "{env:E2E_HARNESS_ONLY}", "from-file", "{file:" + file + "}",
		"$E2E_HARNESS_ONLY", "${E2E_HARNESS_ONLY}", "~/x", `s3cr$t\"'`, "a", "b", "",
	}, cfg.MCP["s"].Command, "opencode expands {env:…} and {file:…} in the raw text, not \\u007b-escaped ones")
	assert.Equal(t, map[string]string{"A": "harness-only-marker", "B": "{env:E2E_HARNESS_ONLY}"}, cfg.MCP["s"].Environment,
		"environment values are expanded the same way")
	assert.Equal(t, []string{"injected", "s", "t"}, cfg.servers(), "a variable's value can add a server to the config's text")
	assert.Equal(t, []string{"/bin/true", "c"}, cfg.MCP["t"].Command, "the injecting value ends its own string")
}

// TestOpencodeConfigSources records with the real opencode where it reads MCP servers from
// (docs/FORMATS.md §5.4): its global config under XDG_CONFIG_HOME, the OPENCODE_CONFIG file, the
// checkout's opencode.json and .opencode/opencode.json, ~/.opencode/opencode.json and the JSON of
// OPENCODE_CONFIG_CONTENT. OPENCODE_DISABLE_PROJECT_CONFIG=1 keeps the checkout's out, and
// nothing keeps the home's out but HOME itself. A stdio server gets opencode's whole
// environment, then its environment entries.
func TestOpencodeConfigSources(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	canary := canaryBinary(t)
	d := newOpencodeDir(t, c.Opencode, "OPENCODE")
	server := func(id string) map[string]any {
		return map[string]any{"mcp": map[string]any{id: map[string]any{"type": "local", "command": []string{canary, filepath.Join(d.Dir, id+".json")}}}}
	}
	cfgPath := filepath.Join(d.Dir, "run", "opencode.json")
	writeJSON(t, cfgPath, map[string]any{"$schema": "https://opencode.ai/config.json", "mcp": map[string]any{
		"run": map[string]any{"type": "local", "command": []string{canary, filepath.Join(d.Dir, "run.json")}, "environment": map[string]string{"E2E_ENTRY": "entry"}},
	}})
	writeJSON(t, filepath.Join(d.XDGConfig, "opencode", "opencode.json"), server("xdg"))
	writeJSON(t, filepath.Join(d.Checkout, "opencode.json"), server("checkout"))
	writeJSON(t, filepath.Join(d.Checkout, ".opencode", "opencode.json"), server("checkout-dir"))
	writeJSON(t, filepath.Join(d.Home, ".opencode", "opencode.json"), server("home-dir"))
	inline, err := json.Marshal(server("inline"))
	require.NoError(t, err)

	base := d.env(c, "OPENCODE_CONFIG="+cfgPath)
	assert.Equal(t, []string{"checkout", "checkout-dir", "home-dir", "run", "xdg"}, d.debugConfig(t, c, base).servers(),
		"without the switch opencode reads the checkout's config")
	off := append(slices.Clone(base), "OPENCODE_DISABLE_PROJECT_CONFIG=1")
	assert.Equal(t, []string{"home-dir", "run", "xdg"}, d.debugConfig(t, c, off).servers(),
		"OPENCODE_DISABLE_PROJECT_CONFIG=1 keeps the checkout out, not ~/.opencode")
	assert.Equal(t, []string{"home-dir", "inline", "run", "xdg"},
		d.debugConfig(t, c, append(slices.Clone(off), "OPENCODE_CONFIG_CONTENT="+string(inline))).servers(),
		"OPENCODE_CONFIG_CONTENT adds its servers")

	// `opencode mcp list` starts every configured server: the canary reports its environment.
	res, err := run(context.Background(), opencodeTimeout, d.Checkout, off, nil, c.Opencode, "mcp", "list")
	require.NoError(t, err, "opencode mcp list")
	raw, err := os.ReadFile(filepath.Join(d.Dir, "run.json"))
	require.NoError(t, err, "opencode mcp list must start the canary (stdout: %s)", res.Stdout)
	var rep canaryReport
	require.NoError(t, json.Unmarshal(raw, &rep), "decode canary report %s", raw)
	env := map[string]string{}
	for _, kv := range rep.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	assert.Equal(t, "harness-only-marker", env["E2E_HARNESS_ONLY"], "a stdio server inherits opencode's environment (mcp list: %s)", res.Stdout)
	assert.Equal(t, "entry", env["E2E_ENTRY"], "then its environment entries")
	assert.Equal(t, cfgPath, env["OPENCODE_CONFIG"], "and opencode's own variables")
}
