package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKilocodeExpandsRawText records with the real Kilo Code CLI the first reason it has no
// built-in renderer (docs/FORMATS.md §5.6): like opencode it replaces {env:NAME} in the text of
// its config file before parsing it as JSON, so a value holding `", "` splits one string in two,
// while a `{` written as the JSON escape \u007b reaches it as written, and $NAME, ${NAME}, a
// backslash and quotes are never expanded.
func TestKilocodeExpandsRawText(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	d := newOpencodeDir(t, c.Kilo, "KILO") // a fork of opencode: the same layout
	cfgPath := filepath.Join(d.Dir, "run", "kilo.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(cfgPath), 0o700))
	// Written as text: the escapes are what the test is about.
	text := `{"$schema": "https://app.kilo.ai/config.json", "mcp": {"s": {"type": "local", "command": [` +
		`"/bin/true", "{env:E2E_HARNESS_ONLY}", "\u007benv:E2E_HARNESS_ONLY}", "$E2E_HARNESS_ONLY", ` +
		`"${E2E_HARNESS_ONLY}", "s3cr$t\\\"'", "{env:E2E_SPLIT}", "{env:E2E_UNSET}"], ` +
		`"environment": {"A": "{env:E2E_HARNESS_ONLY}", "B": "\u007benv:E2E_HARNESS_ONLY}"}}}}`
	require.NoError(t, os.WriteFile(cfgPath, []byte(text), 0o600))

	cfg := d.debugConfig(t, c, d.env(c, "KILO_CONFIG="+cfgPath, "KILO_DISABLE_PROJECT_CONFIG=1", `E2E_SPLIT=a", "b`))
	require.Contains(t, cfg.MCP, "s", "kilo reads the KILO_CONFIG file")
	assert.Equal(t, []string{
		"/bin/true", "harness-only-marker", "{env:E2E_HARNESS_ONLY}", "$E2E_HARNESS_ONLY",
		"${E2E_HARNESS_ONLY}", `s3cr$t\"'`, "a", "b", "",
	}, cfg.MCP["s"].Command, "kilo expands {env:…} in the raw text, not a \\u007b-escaped one")
	assert.Equal(t, map[string]string{"A": "harness-only-marker", "B": "{env:E2E_HARNESS_ONLY}"}, cfg.MCP["s"].Environment,
		"environment values are expanded the same way")
	after, err := os.ReadFile(cfgPath)
	require.NoError(t, err)
	assert.Equal(t, text, string(after), "a config with \"$schema\" is left byte for byte")
}

// TestKilocodeConfigSources records with the real Kilo Code CLI where it reads MCP servers from
// (docs/FORMATS.md §5.6): its global config under XDG_CONFIG_HOME, the KILO_CONFIG file, the
// checkout's kilo.json and .kilo/kilo.json, ~/.kilo/kilo.json and ~/.kilocode/kilo.json, and the
// checkout's .kilocode/mcp.json in the editor extension's format. KILO_DISABLE_PROJECT_CONFIG=1
// drops the checkout's kilo.json files but not its .kilocode/mcp.json — the second reason it has
// no renderer. A stdio server gets Kilo's whole environment but KILO_CONFIG, then its
// environment entries, and an argument with $ \ " ' arrives byte-exact.
func TestKilocodeConfigSources(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	canary := canaryBinary(t)
	d := newOpencodeDir(t, c.Kilo, "KILO") // a fork of opencode: the same layout
	server := func(id string) map[string]any {
		return map[string]any{"mcp": map[string]any{id: map[string]any{"type": "local", "command": []string{canary, filepath.Join(d.Dir, id+".json")}}}}
	}
	const secret = `s3cr$t\"'`
	cfgPath := filepath.Join(d.Dir, "run", "kilo.json")
	writeJSON(t, cfgPath, map[string]any{"$schema": "https://app.kilo.ai/config.json", "mcp": map[string]any{
		"run": map[string]any{"type": "local", "command": []string{canary, filepath.Join(d.Dir, "run.json"), secret},
			"environment": map[string]string{"E2E_ENTRY": "entry"}},
	}})
	writeJSON(t, filepath.Join(d.XDGConfig, "kilo", "kilo.json"), server("xdg"))
	writeJSON(t, filepath.Join(d.Checkout, "kilo.json"), server("checkout"))
	writeJSON(t, filepath.Join(d.Checkout, ".kilo", "kilo.json"), server("checkout-dir"))
	writeJSON(t, filepath.Join(d.Home, ".kilo", "kilo.json"), server("home-kilo"))
	writeJSON(t, filepath.Join(d.Home, ".kilocode", "kilo.json"), server("home-kilocode"))
	writeJSON(t, filepath.Join(d.Checkout, ".kilocode", "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"intruder": map[string]any{"command": canary, "args": []string{filepath.Join(d.Dir, "intruder.json")}},
	}})

	base := d.env(c, "KILO_CONFIG="+cfgPath)
	assert.Equal(t, []string{"checkout", "checkout-dir", "home-kilo", "home-kilocode", "intruder", "run", "xdg"},
		d.debugConfig(t, c, base).servers(), "without the switch kilo reads the checkout's config")
	off := append(slices.Clone(base), "KILO_DISABLE_PROJECT_CONFIG=1")
	assert.Equal(t, []string{"home-kilo", "home-kilocode", "intruder", "run", "xdg"}, d.debugConfig(t, c, off).servers(),
		"KILO_DISABLE_PROJECT_CONFIG=1 keeps the checkout's kilo.json out, not its .kilocode/mcp.json nor ~/.kilo*")

	// `kilo mcp list` starts every configured server: the canary reports its environment.
	res, err := run(context.Background(), opencodeTimeout, d.Checkout, off, nil, c.Kilo, "mcp", "list")
	require.NoError(t, err, "kilo mcp list")
	raw, err := os.ReadFile(filepath.Join(d.Dir, "run.json"))
	require.NoError(t, err, "kilo mcp list must start the canary (stdout: %s)", res.Stdout)
	var rep canaryReport
	require.NoError(t, json.Unmarshal(raw, &rep), "decode canary report %s", raw)
	env := map[string]string{}
	for _, kv := range rep.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	assert.Equal(t, "harness-only-marker", env["E2E_HARNESS_ONLY"], "a stdio server inherits kilo's environment (mcp list: %s)", res.Stdout)
	assert.Equal(t, "entry", env["E2E_ENTRY"], "then its environment entries")
	assert.Equal(t, "1", env["KILO_DISABLE_PROJECT_CONFIG"], "and kilo's own switches")
	assert.NotContains(t, env, "KILO_CONFIG", "but not KILO_CONFIG, which kilo removes")
	assert.Equal(t, "1", env["KILO"], "plus KILO=1 of its own")
	var argv []string
	for _, cl := range rep.Cmdlines {
		if cl.Pid == rep.Pid {
			argv = cl.Argv
		}
	}
	require.NotEmpty(t, argv, "the canary reports its own command line: %s", raw)
	assert.Equal(t, secret, argv[len(argv)-1], "an argument with $ \\ \" ' arrives byte-exact")
	_, err = os.Stat(filepath.Join(d.Dir, "intruder.json"))
	assert.NoError(t, err, "the checkout's .kilocode/mcp.json server is started too (mcp list: %s)", res.Stdout)
}
