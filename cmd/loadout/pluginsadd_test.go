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
	assert.Contains(t, stdout, "pinned profile:pi sha256:")

	var got map[string]string
	b, err := os.ReadFile(pins)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &got))
	assert.Equal(t, map[string]string{
		"other.wasm": "sha256:" + sixtyFourZeros,
		"pi.wasm":    registry.Digest(testplugins.Read(t, "pi")),
		"profile:pi": registry.Digest(profile),
	}, got, "add keeps the other pins and adds both digests, the profile's under its harness")

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

// harnessDir copies plugin name's module and the given profile, named profile.yaml as in a
// plugins/<name>/ directory, into a new directory, and returns their paths.
func harnessDir(t *testing.T, name string, profile []byte) (wasmPath, profilePath string) {
	t.Helper()
	dir := t.TempDir()
	wasmPath = filepath.Join(dir, name+".wasm")
	profilePath = filepath.Join(dir, "profile.yaml")
	require.NoError(t, os.WriteFile(wasmPath, testplugins.Read(t, name), 0o644))
	require.NoError(t, os.WriteFile(profilePath, profile, 0o644))
	return wasmPath, profilePath
}

func readPinsJSON(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var m map[string]string
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

// TestPluginsAddKeysProfilesByHarness: two harnesses whose profiles are both profile.yaml are
// pinned side by side (a pins file keys a profile by its harness), each pair then renders; a
// second, different profile for a harness already pinned is refused with nothing written,
// unless --replace says it was reviewed to replace the first.
func TestPluginsAddKeysProfilesByHarness(t *testing.T) {
	piProfile, codexProfile := readProfile(t, "pi"), readProfile(t, "codex")
	piWasm, piPath := harnessDir(t, "pi", piProfile)
	codexWasm, codexPath := harnessDir(t, "codex", codexProfile)
	pins := filepath.Join(t.TempDir(), "pins.json")
	for _, pair := range [][2]string{{piWasm, piPath}, {codexWasm, codexPath}} {
		code, _, stderr := runCLI(t, "", "plugins", "add", pair[0], "--profile", pair[1], "--pins", pins)
		require.Equal(t, exitOK, code, "stderr: %s", stderr)
	}
	assert.Equal(t, map[string]string{
		"pi.wasm":       registry.Digest(testplugins.Read(t, "pi")),
		"codex.wasm":    registry.Digest(testplugins.Read(t, "codex")),
		"profile:pi":    registry.Digest(piProfile),
		"profile:codex": registry.Digest(codexProfile),
	}, readPinsJSON(t, pins), "both profile.yaml files are pinned, each under its harness")
	for harness, pair := range map[string][2]string{"pi": {piWasm, piPath}, "codex": {codexWasm, codexPath}} {
		code, _, stderr := runCLI(t, "", "render", "--harness", harness, "--dry-run", examplePath(t),
			"--plugin", pair[0], "--profile", pair[1], "--pins", pins)
		assert.Equal(t, exitOK, code, "render %s with its pinned pair; stderr: %s", harness, stderr)
	}

	// A second, different profile of harness pi.
	edited := append(append([]byte{}, piProfile...), "# a second profile of pi\n"...)
	_, editedPath := harnessDir(t, "pi", edited)
	before, err := os.ReadFile(pins)
	require.NoError(t, err)
	code, stdout, stderr := runCLI(t, "", "plugins", "add", piWasm, "--profile", editedPath, "--pins", pins)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `already pins another profile of harness pi under "profile:pi"`)
	assert.Contains(t, stderr, "--replace")
	assert.Empty(t, stdout)
	after, err := os.ReadFile(pins)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "a refused collision writes nothing")

	code, stdout, stderr = runCLI(t, "", "plugins", "add", piWasm, "--profile", editedPath, "--pins", pins, "--replace")
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.Contains(t, stdout, "re-pinned profile:pi "+registry.Digest(edited))
	code, _, stderr = runCLI(t, "", "render", "--harness", "pi", "--dry-run", examplePath(t), "--plugin", piWasm, "--profile", piPath, "--pins", pins)
	assert.Equal(t, exitUsage, code, "the replaced profile is no longer pinned")
	assert.Contains(t, stderr, "is not pinned")

	// Two profiles of one harness in one run: refused, not one silently in force.
	code, _, stderr = runCLI(t, "", "render", "--harness", "pi", "--dry-run", examplePath(t), "--plugin", piWasm,
		"--profile", editedPath, "--profile", editedPath, "--pins", pins)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `both describe harness "pi"`)
}

// TestPluginsAddRefusesAModuleOfTheSameName: modules are pinned by file name, so a second,
// different module of the same name (another harness's render.wasm) is refused with nothing
// written, unless --replace says it was reviewed to replace the first.
func TestPluginsAddRefusesAModuleOfTheSameName(t *testing.T) {
	pins := filepath.Join(t.TempDir(), "pins.json")
	pair := func(harness string) (wasm, profile string) {
		dir := t.TempDir()
		wasm, profile = filepath.Join(dir, "render.wasm"), filepath.Join(dir, "profile.yaml")
		require.NoError(t, os.WriteFile(wasm, testplugins.Read(t, harness), 0o644))
		require.NoError(t, os.WriteFile(profile, readProfile(t, harness), 0o644))
		return wasm, profile
	}
	piWasm, piProfile := pair("pi")
	codexWasm, codexProfile := pair("codex")
	code, _, stderr := runCLI(t, "", "plugins", "add", piWasm, "--profile", piProfile, "--pins", pins)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	before, err := os.ReadFile(pins)
	require.NoError(t, err)
	code, stdout, stderr := runCLI(t, "", "plugins", "add", codexWasm, "--profile", codexProfile, "--pins", pins)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `already pins another module under "render.wasm"`)
	assert.Empty(t, stdout)
	after, err := os.ReadFile(pins)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "a refused collision writes nothing")

	code, stdout, stderr = runCLI(t, "", "plugins", "add", codexWasm, "--profile", codexProfile, "--pins", pins, "--replace")
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.Contains(t, stdout, "re-pinned render.wasm "+registry.Digest(testplugins.Read(t, "codex")))
}

// TestPinsFileKeyedByFileName: a pins file written before profiles were keyed by harness (the
// profile under its file name) still verifies, and plugins add moves the entry to its key.
func TestPinsFileKeyedByFileName(t *testing.T) {
	profile := readProfile(t, "pi")
	wasmPath, profilePath := harnessDir(t, "pi", profile)
	pins := filepath.Join(t.TempDir(), "pins.json")
	old := map[string]string{"pi.wasm": registry.Digest(testplugins.Read(t, "pi")), "profile.yaml": registry.Digest(profile)}
	b, err := json.Marshal(old)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(pins, b, 0o644))
	code, _, stderr := runCLI(t, "", "render", "--harness", "pi", "--dry-run", examplePath(t), "--plugin", wasmPath, "--profile", profilePath, "--pins", pins)
	require.Equal(t, exitOK, code, "an older pins file verifies; stderr: %s", stderr)

	require.NoError(t, os.WriteFile(profilePath, append(append([]byte{}, profile...), "# edited\n"...), 0o644))
	code, _, stderr = runCLI(t, "", "render", "--harness", "pi", "--dry-run", examplePath(t), "--plugin", wasmPath, "--profile", profilePath, "--pins", pins)
	assert.Equal(t, exitUsage, code, "a profile changed since its older pin is refused")
	assert.Contains(t, stderr, "is not pinned")
	require.NoError(t, os.WriteFile(profilePath, profile, 0o644))

	code, stdout, stderr := runCLI(t, "", "plugins", "add", wasmPath, "--profile", profilePath, "--pins", pins)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.Contains(t, stdout, "moved profile.yaml to profile:pi")
	assert.Equal(t, map[string]string{"pi.wasm": old["pi.wasm"], "profile:pi": old["profile.yaml"]}, readPinsJSON(t, pins))

	// An older entry does not stand beside the harness's own pin: one reviewed profile each.
	edited := append(append([]byte{}, profile...), "# the reviewed one\n"...)
	both := map[string]string{"pi.wasm": old["pi.wasm"], "profile.yaml": old["profile.yaml"], "profile:pi": registry.Digest(edited)}
	b, err = json.Marshal(both)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(pins, b, 0o644))
	code, _, stderr = runCLI(t, "", "render", "--harness", "pi", "--dry-run", examplePath(t), "--plugin", wasmPath, "--profile", profilePath, "--pins", pins)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `matches the older entry "profile.yaml"`)
}
