package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/conformity"
	"github.com/loadout-dev/loadout/host/registry"
	"github.com/loadout-dev/loadout/internal/testplugins"
)

// conformityReport is the part of `conformity --format json` the tests read.
type conformityReport struct {
	OK      bool                `json:"ok"`
	Results []conformity.Result `json:"results"`
}

func decodeConformity(t *testing.T, stdout string) conformityReport {
	t.Helper()
	var rep conformityReport
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep), "conformity JSON: %s", stdout)
	return rep
}

// oneCase copies the named cases of the project's corpus into a new directory of its own,
// with no exceptions.txt beside it, and returns the directory.
func oneCase(t *testing.T, files ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "cases")
	require.NoError(t, os.Mkdir(dir, 0o755))
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(testplugins.Root(t), "conformity", "testdata", "cases", f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
	}
	return dir
}

// TestConformityRunsOutsideACheckout: without --cases, conformity runs the corpus built into
// the binary, with its exceptions, from a directory that holds no checkout; --cases DIR still
// replaces it, and the exceptions then come from beside DIR (none here) or --exceptions.
func TestConformityRunsOutsideACheckout(t *testing.T) {
	mcpjson := testplugins.Path(t, "mcpjson-c")
	root := testplugins.Root(t)
	entries, err := os.ReadDir(filepath.Join(root, "conformity", "testdata", "cases"))
	require.NoError(t, err)
	treeEx, err := conformity.LoadExceptions(filepath.Join(root, "conformity", "testdata", "exceptions.txt"))
	require.NoError(t, err)
	excepted := 0
	for _, e := range treeEx {
		if e.Harness == "mcpjson" {
			excepted++
		}
	}
	require.Positive(t, excepted, "the corpus excepts cases of the mcpjson harness")

	t.Chdir(t.TempDir())
	_, err = os.Stat(filepath.Join("conformity", "testdata", "cases"))
	require.ErrorIs(t, err, os.ErrNotExist, "the test runs outside the checkout")

	code, stdout, stderr := runCLI(t, "", "conformity", "--plugin", mcpjson, "--engine", "wazero", "--format", "json")
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	rep := decodeConformity(t, stdout)
	assert.True(t, rep.OK)
	require.Len(t, rep.Results, len(entries), "every case of the built-in corpus runs")
	byException := 0
	for _, r := range rep.Results {
		assert.Equal(t, conformity.EmbeddedName, r.Dir, "case %s", r.File)
		if r.Exception != "" {
			byException++
		}
	}
	assert.Equal(t, excepted, byException, "the built-in corpus's exceptions apply")

	// --cases replaces the built-in corpus; with no exceptions.txt beside it, an excepted case
	// fails, and passes again with --exceptions.
	const exceptedCase = "100-exposure-hidden-tool-denied.json"
	dir := oneCase(t, exceptedCase)
	code, stdout, stderr = runCLI(t, "", "conformity", "--plugin", mcpjson, "--engine", "wazero", "--format", "json", "--cases", dir)
	require.Equal(t, exitPlugin, code, "stderr: %s", stderr)
	rep = decodeConformity(t, stdout)
	require.Len(t, rep.Results, 1)
	assert.Equal(t, dir, rep.Results[0].Dir)
	assert.False(t, rep.Results[0].OK, "no exception covers the case")
	code, _, stderr = runCLI(t, "", "conformity", "--plugin", mcpjson, "--engine", "wazero", "--cases", dir,
		"--exceptions", filepath.Join(root, "conformity", "testdata", "exceptions.txt"))
	assert.Equal(t, exitOK, code, "stderr: %s", stderr)
}

// TestConformityChecksPins: with --pins, the plugin module and its profile must match the pins
// file plugins add wrote, checked before anything runs; a file it does not pin, or that changed
// since, is a usage error and no case runs.
func TestConformityChecksPins(t *testing.T) {
	profile := readProfile(t, "pi")
	wasmPath, profilePath := dropIn(t, "pi", profile)
	pins := filepath.Join(t.TempDir(), "pins.json")
	code, _, stderr := runCLI(t, "", "plugins", "add", wasmPath, "--profile", profilePath, "--pins", pins)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	cases := oneCase(t, "023-id-valid-forms.json")
	args := func(extra ...string) []string {
		return append([]string{"conformity", "--plugin", wasmPath, "--profile", profilePath, "--engine", "wazero", "--cases", cases}, extra...)
	}

	code, stdout, stderr := runCLI(t, "", args("--pins", pins)...)
	require.Equal(t, exitOK, code, "the pinned pair is certified; stderr: %s", stderr)
	assert.Contains(t, stdout, "1 case runs: 1 passed")

	pinned, err := os.ReadFile(pins)
	require.NoError(t, err)
	var entries map[string]string
	require.NoError(t, json.Unmarshal(pinned, &entries))
	writePins := func(t *testing.T, edit func(map[string]string)) string {
		t.Helper()
		m := map[string]string{}
		for k, v := range entries {
			m[k] = v
		}
		edit(m)
		b, err := json.Marshal(m)
		require.NoError(t, err)
		p := filepath.Join(t.TempDir(), "pins.json")
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	other := registry.Digest([]byte("other bytes"))
	refused := []struct {
		name string
		pins func(t *testing.T) string
		want string
	}{
		{"module not pinned", func(t *testing.T) string { return writePins(t, func(m map[string]string) { delete(m, "pi.wasm") }) }, "plugin " + wasmPath + " is not pinned"},
		{"module changed since", func(t *testing.T) string {
			return writePins(t, func(m map[string]string) { m["pi.wasm"] = other })
		}, "pinned " + other},
		{"profile not pinned", func(t *testing.T) string {
			return writePins(t, func(m map[string]string) { delete(m, "profile:pi") })
		}, "profile " + profilePath + " is not pinned"},
		{"profile changed since", func(t *testing.T) string {
			return writePins(t, func(m map[string]string) { m["profile:pi"] = other })
		}, "which is the pin of no profile there (it pins profile:pi " + other},
		{"profile pinned for another harness", func(t *testing.T) string {
			return writePins(t, func(m map[string]string) { m["profile:codex"] = m["profile:pi"]; delete(m, "profile:pi") })
		}, `describes harness "pi", but`},
		{"no pins file", func(t *testing.T) string { return filepath.Join(t.TempDir(), "missing.json") }, "--pins"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", args("--pins", tc.pins(t))...)
			assert.Equal(t, exitUsage, code, "stderr: %s", stderr)
			assert.Contains(t, stderr, tc.want)
			assert.Empty(t, stdout, "nothing runs")
		})
	}

	t.Run("pins without a file to check", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, "", "conformity", "--engine", "wazero", "--cases", cases, "--pins", pins)
		assert.Equal(t, exitUsage, code)
		assert.Contains(t, stderr, "--pins pins the --plugin and --profile files")
		assert.Empty(t, stdout)
	})

	t.Run("the profile edited after pinning", func(t *testing.T) {
		require.NoError(t, os.WriteFile(profilePath, append(append([]byte{}, profile...), "# edited\n"...), 0o644))
		code, stdout, stderr := runCLI(t, "", args("--pins", pins)...)
		assert.Equal(t, exitUsage, code)
		assert.Contains(t, stderr, "is not pinned in "+pins)
		assert.True(t, strings.Contains(stderr, "profile:pi "+entries["profile:pi"]), "the message names the pin there is: %s", stderr)
		assert.Empty(t, stdout)
	})
}
