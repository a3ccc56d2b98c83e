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
	"github.com/loadout-dev/loadout/internal/testplugins"
)

// dropIn copies plugin name's module and the given profile bytes into a new directory, as a
// harness author ships them, and returns their paths.
func dropIn(t *testing.T, name string, profile []byte) (wasmPath, profilePath string) {
	t.Helper()
	dir := t.TempDir()
	wasmPath = filepath.Join(dir, name+".wasm")
	profilePath = filepath.Join(dir, name+".profile.yaml")
	require.NoError(t, os.WriteFile(wasmPath, testplugins.Read(t, name), 0o644))
	require.NoError(t, os.WriteFile(profilePath, profile, 0o644))
	return wasmPath, profilePath
}

func readProfile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testplugins.Root(t), "plugins", name, "profile.yaml"))
	require.NoError(t, err)
	return b
}

func TestPluginsAddPinsModuleAndProfile(t *testing.T) {
	profile := readProfile(t, "pi")
	wasmPath, profilePath := dropIn(t, "pi", profile)
	pins := filepath.Join(t.TempDir(), "pins.json")
	require.NoError(t, os.WriteFile(pins, []byte(`{"other.wasm": "sha256:`+sixtyFourZeros+`"}`), 0o644))

	code, stdout, stderr := runCLI(t, "", "plugins", "add", wasmPath, "--profile", profilePath, "--pins", pins)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.Contains(t, stdout, "pinned pi.wasm sha256:")
	assert.Contains(t, stdout, "pinned pi.profile.yaml sha256:")

	var got map[string]string
	b, err := os.ReadFile(pins)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &got))
	assert.Equal(t, map[string]string{
		"other.wasm":      "sha256:" + sixtyFourZeros,
		"pi.wasm":         registry.Digest(testplugins.Read(t, "pi")),
		"pi.profile.yaml": registry.Digest(profile),
	}, got, "add keeps the other pins and adds both digests")

	// The pins it wrote are what render needs for the pair.
	code, _, stderr = runCLI(t, "", "render", "--harness", "pi", "--dry-run", examplePath(t),
		"--plugin", wasmPath, "--profile", profilePath, "--pins", pins)
	assert.Equal(t, exitOK, code, "render with the added pins; stderr: %s", stderr)

	// Running it again changes nothing and says so.
	code, stdout, _ = runCLI(t, "", "plugins", "add", wasmPath, "--profile", profilePath, "--pins", pins)
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "unchanged pi.wasm")
}

const sixtyFourZeros = "0000000000000000000000000000000000000000000000000000000000000000"

func TestPluginsAddRefusesWithoutWriting(t *testing.T) {
	piProfile := readProfile(t, "pi")
	cases := []struct {
		name, plugin string
		profile      []byte
		want         string
	}{
		{"profile of another harness", "codex", piProfile, `renders harness "codex", profile`},
		{"profile with an unknown key", "pi", append(append([]byte{}, piProfile...), []byte("trustEverything: true\n")...), "trustEverything"},
		{"profile with an env value that is no root", "pi", []byte(strings.Replace(string(piProfile), `value: "{{loadout.root.config}}"`, `value: "/tmp/elsewhere"`, 1)), "the value must be a root placeholder"},
	}
	require.NotEqual(t, string(piProfile), string(cases[2].profile), "the pi profile sets an env value")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wasmPath, profilePath := dropIn(t, tc.plugin, tc.profile)
			pins := filepath.Join(t.TempDir(), "pins.json")
			code, _, stderr := runCLI(t, "", "plugins", "add", wasmPath, "--profile", profilePath, "--pins", pins)
			assert.Equal(t, exitUsage, code)
			assert.Contains(t, stderr, tc.want)
			_, err := os.Stat(pins)
			assert.ErrorIs(t, err, os.ErrNotExist, "a refused pair writes no pins")
		})
	}
}

// A server named as its harness reserves it (Claude Code's workspace, Copilot CLI's built-in
// github-mcp-server) is refused for that harness, before the plugin or the prompt sees it, and
// rendered for a harness that has no such reservation.
func TestReservedServerNameRefusedForItsHarness(t *testing.T) {
	req := `{"mcpServers":[{"id":"workspace","command":"/usr/bin/mcp-fs"},{"id":"github-mcp-server","command":"/usr/bin/mcp-gh"},{"id":"fs","command":"/usr/bin/mcp-fs"}]}`
	reserved := map[string]string{"claude": "workspace", "copilot": "github-mcp-server"}
	for harness, want := range map[string][]string{"claude": {"github-mcp-server", "fs"}, "codex": {"workspace", "github-mcp-server", "fs"}, "copilot": {"workspace", "fs"}} {
		t.Run(harness, func(t *testing.T) {
			args := append([]string{"render", "--harness", harness, "--dry-run", "--show-content", "--format", "json", "-"}, pluginArgs(t)...)
			code, stdout, stderr := runCLI(t, req, args...)
			require.Equal(t, exitOK, code, "stderr: %s", stderr)
			var res struct {
				Servers []string
				Prompt  string
				Dropped []struct{ Name, Code, Rule string } `json:"dropped"`
			}
			require.NoError(t, json.Unmarshal([]byte(stdout), &res), "%s", stdout)
			assert.Equal(t, want, res.Servers)
			var codes []string
			for _, d := range res.Dropped {
				codes = append(codes, d.Code)
			}
			if id, ok := reserved[harness]; ok {
				assert.Contains(t, codes, "reserved_name", "dropped: %+v", res.Dropped)
				assert.NotContains(t, res.Prompt, id, "the prompt never names a server the harness will not load")
			} else {
				assert.NotContains(t, codes, "reserved_name")
			}
		})
	}
}
