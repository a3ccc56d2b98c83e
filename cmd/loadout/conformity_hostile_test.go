package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/conformity/hostile"
	"github.com/loadout-dev/loadout/host/registry"
)

// hostileDoc is the JSON output of conformity --hostile.
type hostileDoc struct {
	OK      bool `json:"ok"`
	Plugins []struct {
		File, SHA256, Harness string
	} `json:"plugins"`
	Profiles []profileSource  `json:"profiles"`
	Results  []hostile.Result `json:"results"`
}

// TestConformityHostileBuiltinPlugin certifies a built-in renderer, dropped in as a third
// party ships one, against its own profile: the faithful plan passes and every attack that
// applies is refused by its rule, in both modes; the text and JSON outputs agree.
func TestConformityHostileBuiltinPlugin(t *testing.T) {
	wasmPath, profilePath := dropIn(t, "codex", readProfile(t, "codex"))
	code, stdout, stderr := runCLI(t, "", "conformity", "--hostile", "--plugin", wasmPath, "--profile", profilePath, "--engine", "all")
	require.Equal(t, exitOK, code, "stderr: %s\nstdout: %s", stderr, stdout)
	assert.Contains(t, stdout, "plugin "+wasmPath+" "+registry.Digest(readFile(t, wasmPath))+" (harness codex)")
	assert.Contains(t, stdout, "profile codex: "+profilePath+" "+registry.Digest(readFile(t, profilePath)))
	assert.Regexp(t, `(?m)^faithful\s+codex\s+wazero\s+isolated\s+-\s+passed\s*$`, stdout)
	assert.Regexp(t, `(?m)^added-server\s+codex\s+wazero\s+ambient\s+server_set\s+refused\s*$`, stdout)
	assert.NotContains(t, stdout, "FAIL")

	code, stdout, stderr = runCLI(t, "", "conformity", "--hostile", "--plugin", wasmPath, "--profile", profilePath, "--format", "json")
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	var doc hostileDoc
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), "JSON output: %s", stdout)
	assert.True(t, doc.OK)
	require.Len(t, doc.Plugins, 1)
	assert.Equal(t, "codex", doc.Plugins[0].Harness)
	require.Len(t, doc.Profiles, 1)
	assert.Equal(t, profilePath, doc.Profiles[0].File)
	// Per mode: the faithful run and one row per attack.
	require.Len(t, doc.Results, 2*(1+len(hostile.Attacks())))
	refused := map[string]int{}
	for _, r := range doc.Results {
		assert.True(t, r.OK, "%+v", r)
		switch r.Status {
		case hostile.StatusRefused:
			assert.NotEmpty(t, r.Rule, "a refused attack names its rule: %+v", r)
			refused[r.Mode]++
		case hostile.StatusPassed:
			assert.Equal(t, hostile.Faithful, r.Attack)
		case hostile.StatusNotApplicable:
			assert.NotEmpty(t, r.Reason, "%+v", r)
		default:
			t.Errorf("unexpected status %+v", r)
		}
	}
	// Codex's profile gives most attacks something to tamper with.
	assert.Greater(t, refused["isolated"], 35, "attacks refused in the isolated run")
	assert.Greater(t, refused["ambient"], 35, "attacks refused in the ambient run")
}

// TestConformityHostileWeakenedProfile certifies the same plugin against a profile weakened to
// allow what attack arg-yes does (a -y flag): the suite fails with exit 4 and names the attack.
func TestConformityHostileWeakenedProfile(t *testing.T) {
	weak := append(readProfile(t, "codex"), []byte("args:\n  - {flag: -y}\n")...)
	wasmPath, profilePath := dropIn(t, "codex", weak)
	code, stdout, stderr := runCLI(t, "", "conformity", "--hostile", "--plugin", wasmPath, "--profile", profilePath, "--engine", "wazero")
	require.Equal(t, exitPlugin, code, "stderr: %s\nstdout: %s", stderr, stdout)
	assert.Regexp(t, `(?m)^arg-yes\s+codex\s+wazero\s+isolated\s+arg\s+FAIL\s+accepted: the tampered plan passed the check`, stdout)
	assert.Regexp(t, `(?m)^arg-yes\s+codex\s+wazero\s+ambient\s+arg\s+FAIL\s`, stdout)
	fails := regexp.MustCompile(`(?m)^(\S+)\s.*\sFAIL\s`).FindAllStringSubmatch(stdout, -1)
	require.Len(t, fails, 2, "only arg-yes fails, in both modes: %s", stdout)
	assert.Contains(t, stderr, "conformity --hostile: 2 of")
	// The other attacks still hold.
	assert.Regexp(t, `(?m)^arg-yolo\s+codex\s+wazero\s+isolated\s+arg\s+refused\s*$`, stdout)
}

// TestConformityHostilePinsAndUsage: with --pins every file must match its pin, and flags of
// the corpus run do not apply to the hostile suite.
func TestConformityHostilePinsAndUsage(t *testing.T) {
	profile := readProfile(t, "codex")
	wasmPath, profilePath := dropIn(t, "codex", profile)
	pins := filepath.Join(t.TempDir(), "pins.json")
	write := func(m map[string]string) {
		b, err := json.Marshal(m)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(pins, b, 0o644))
	}
	args := []string{"conformity", "--hostile", "--plugin", wasmPath, "--profile", profilePath, "--pins", pins}

	write(map[string]string{"codex.wasm": registry.Digest(readFile(t, wasmPath))})
	code, _, stderr := runCLI(t, "", args...)
	assert.Equal(t, exitUsage, code, "an unpinned profile: stderr %s", stderr)
	assert.Contains(t, stderr, "profile "+profilePath+" is not pinned")

	write(map[string]string{"profile:codex": registry.Digest(profile)})
	code, _, stderr = runCLI(t, "", args...)
	assert.Equal(t, exitUsage, code, "an unpinned plugin: stderr %s", stderr)
	assert.Contains(t, stderr, "plugin "+wasmPath+" is not pinned")

	write(map[string]string{"codex.wasm": registry.Digest(readFile(t, wasmPath)), "profile:codex": registry.Digest([]byte("other"))})
	code, _, stderr = runCLI(t, "", args...)
	assert.Equal(t, exitUsage, code, "a profile that does not match its pin: stderr %s", stderr)
	assert.Contains(t, stderr, "its bytes hash to")

	write(map[string]string{"codex.wasm": registry.Digest(readFile(t, wasmPath)), "profile:codex": registry.Digest(profile)})
	code, stdout, stderr := runCLI(t, "", args...)
	assert.Equal(t, exitOK, code, "both pinned: stderr %s", stderr)
	assert.Contains(t, stdout, "faithful")

	for _, extra := range [][]string{{"--cases", t.TempDir()}, {"--policies", t.TempDir()}, {"--exceptions", pins}} {
		code, _, stderr := runCLI(t, "", append(slices.Clone(args), extra...)...)
		assert.Equal(t, exitUsage, code, "%v: stderr %s", extra, stderr)
		assert.Contains(t, stderr, strings.TrimPrefix(extra[0], "--")+" does not apply")
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}
