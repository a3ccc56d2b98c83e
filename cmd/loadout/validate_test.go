package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/registry"
)

func TestParseServerList(t *testing.T) {
	cases := []struct {
		name           string
		stdout, stderr string
		want           []string
		err            string
	}{
		{name: "json array (codex mcp list --json)", stdout: `[{"name":"docs","enabled":true},{"name":"fs"}]`, want: []string{"docs", "fs"}},
		{name: "json object keyed by name (copilot mcp list --json)", stdout: `{"mcpServers":{"fs":{"type":"local"},"docs":{"type":"http"}}}`, want: []string{"fs", "docs"}},
		{name: "json object with an array (pi mcp list --json)", stdout: `{"servers":[{"name":"everything","state":"connected"}],"errors":[]}`, want: []string{"everything"}},
		{name: "json object, the servers member picked by name", stdout: `{"clients":{"a":{}},"mcpServers":{"b":{}}}`, want: []string{"b"}},
		{name: "json empty array", stdout: "[]\n", want: []string{}},
		{name: "json entry without a name", stdout: `[{"id":"docs"}]`, err: "entry 0 has no name"},
		{name: "json object without servers", stdout: `{"version":"1"}`, err: "no member"},
		{name: "json object with two candidates", stdout: `{"a":{"x":{}},"b":{"y":{}}}`, err: "several members"},
		{name: "broken json", stdout: `{"servers":`, err: "read the server list"},
		{name: "text on stderr (gemini mcp list)", stderr: "Warning: MCP servers are configured but disabled because this folder is untrusted.\n\nConfigured MCP servers:\n\n○ fs: /usr/bin/env -i (stdio) - Disabled\n✓ docs: https://mcp.example.com/mcp (http) - Connected\n",
			want: []string{"fs", "docs"}},
		{name: "text on stdout (claude mcp list)", stdout: "Checking MCP server health...\n\nfs: /usr/bin/mcp-fs - ✔ Connected\nplain.http: http://x - ✘ Failed to connect\n", want: []string{"fs", "plain.http"}},
		{name: "text without servers", stdout: "No MCP servers configured.\n", want: []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseServerList([]byte(c.stdout), []byte(c.stderr))
			if c.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

func TestCompareServerLists(t *testing.T) {
	cases := []struct {
		name                            string
		listed, required, vetted        []string
		missing, unexpected, duplicates []string
	}{
		{name: "match in another order", listed: []string{"b", "a"}, required: []string{"a", "b"}, vetted: []string{"a", "b"}},
		{name: "a vetted server the render could leave out", listed: []string{"a"}, required: []string{"a"}, vetted: []string{"a", "off"}},
		{name: "that server listed", listed: []string{"off", "a"}, required: []string{"a"}, vetted: []string{"a", "off"}},
		{name: "missing", listed: []string{"a"}, required: []string{"a", "b"}, vetted: []string{"a", "b"}, missing: []string{"b"}},
		{name: "unexpected", listed: []string{"a", "evil", "b", "evil"}, required: []string{"a", "b"}, vetted: []string{"a", "b"},
			unexpected: []string{"evil"}, duplicates: []string{"evil"}},
		{name: "duplicate", listed: []string{"a", "a"}, required: []string{"a"}, vetted: []string{"a"}, duplicates: []string{"a"}},
		{name: "nothing listed", listed: []string{}, required: []string{"a"}, vetted: []string{"a"}, missing: []string{"a"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			missing, unexpected, duplicates := compareServerLists(c.listed, c.required, c.vetted)
			assert.Equal(t, append([]string{}, c.missing...), missing, "missing")
			assert.Equal(t, append([]string{}, c.unexpected...), unexpected, "unexpected")
			assert.Equal(t, append([]string{}, c.duplicates...), duplicates, "duplicates")
		})
	}
}

// TestValidateCommand renders the example request for Codex, then runs validate with a stand-in
// CLI that prints a given list and records how it was run: the profile's command, in the
// checkout, with the plan's env resolved to OUTDIR's roots.
func TestValidateCommand(t *testing.T) {
	profile := readProfile(t, "codex")
	wasmPath, profilePath := dropIn(t, "codex", profile)
	pins := filepath.Join(t.TempDir(), "pins.json")
	b, err := json.Marshal(map[string]string{"codex.wasm": registry.Digest(readFile(t, wasmPath)), "profile:codex": registry.Digest(profile)})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(pins, b, 0o644))
	host := []string{"--plugin", wasmPath, "--profile", profilePath, "--pins", pins}

	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := runCLI(t, "", append([]string{"render", "--harness", "codex", "--out", out, examplePath(t)}, host...)...)
	require.Equal(t, exitOK, code, "render: %s", stderr)

	dir := t.TempDir()
	list, seen := filepath.Join(dir, "list"), filepath.Join(dir, "seen")
	cli := filepath.Join(dir, "codex")
	require.NoError(t, os.WriteFile(cli, []byte("#!/bin/sh\nprintf '%s\\n' \"$PWD\" \"$CODEX_HOME\" \"$@\" > "+seen+"\nexec cat "+list+"\n"), 0o755))
	validate := append([]string{"validate", "--cli", cli, "--spec", examplePath(t)}, host...)
	validate = append(validate, out)

	require.NoError(t, os.WriteFile(list, []byte(`[{"name":"everything"},{"name":"docs"}]`), 0o644))
	code, stdout, stderr := runCLI(t, "", validate...)
	require.Equal(t, exitOK, code, "stderr: %s\nstdout: %s", stderr, stdout)
	assert.Contains(t, stdout, "harness codex: "+cli+" mcp list --json\n")
	assert.Contains(t, stdout, "vetted:  docs, everything\n")
	assert.Contains(t, stdout, "match\n")
	got, err := os.ReadFile(seen)
	require.NoError(t, err)
	assert.Equal(t, strings.Join([]string{filepath.Join(out, "checkout"), filepath.Join(out, "config"), "mcp", "list", "--json"}, "\n")+"\n", string(got),
		"the CLI runs in the checkout, with CODEX_HOME resolved, the profile's arguments")

	require.NoError(t, os.WriteFile(list, []byte(`[{"name":"docs"},{"name":"evil"}]`), 0o644))
	code, stdout, stderr = runCLI(t, "", append(validate, "--format", "json")...)
	require.Equal(t, exitPlugin, code, "stderr: %s\nstdout: %s", stderr, stdout)
	var rep validateReport
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
	assert.False(t, rep.OK)
	assert.Equal(t, []string{"everything"}, rep.Missing)
	assert.Equal(t, []string{"evil"}, rep.Unexpected)
	assert.Contains(t, stderr, "lists other servers than the vetted ones")

	require.NoError(t, os.WriteFile(cli, []byte("#!/bin/sh\necho 'Error: bad config' >&2\nexit 1\n"), 0o755))
	code, stdout, _ = runCLI(t, "", validate...)
	assert.Equal(t, exitPlugin, code, "a CLI that fails: %s", stdout)
	assert.Contains(t, stdout, "exited 1: Error: bad config")

	// A profile without a validate command, and an OUTDIR that holds no render, are usage errors.
	noValidate := []byte(strings.Replace(string(profile), "validate: [codex, mcp, list, --json]", "", 1))
	require.NotEqual(t, profile, noValidate)
	_, bare := dropIn(t, "codex", noValidate)
	code, _, stderr = runCLI(t, "", "validate", "--profile", bare, "--cli", cli, "--spec", examplePath(t), out)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "declares no validate command")
	code, _, stderr = runCLI(t, "", append(append([]string{"validate", "--cli", cli, "--spec", examplePath(t)}, host...), t.TempDir())...)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "holds no codex render")
}
