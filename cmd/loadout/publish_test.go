package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRenderSweepsAKilledRender: a render killed while writing leaves its stage (a copy of the
// secret config among it) in the roots; the next render into them removes it before anything
// else, even when it then refuses its own request.
func TestRenderSweepsAKilledRender(t *testing.T) {
	out := t.TempDir()
	stage := filepath.Join(out, "run", ".loadout-stage-0123456789abcdef")
	require.NoError(t, os.MkdirAll(stage, 0o700))
	require.NoError(t, os.Chmod(filepath.Join(out, "run"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(stage, "lock"), nil, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(stage, "f1"), []byte(`{"mcpServers":{"a":{"env":{"KEY":"s3cr3t"}}}}`), 0o600))

	body := `{"mcpServers":[{"id":"a","command":"safe","Command":"evil"}]}`
	args := append([]string{"render", "--harness", "claude", "--out", out, "-"}, pluginArgs(t)...)
	code, _, stderr := runCLI(t, body, args...)
	assert.Equal(t, exitRejected, code, "the request is refused; stderr: %s", stderr)
	assert.NoDirExists(t, stage, "the killed render's stage")
}

// TestRenderRefusedCreatesNothing: a refused render creates nothing at all, not even the --out
// directory or its checkout.
func TestRenderRefusedCreatesNothing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	body := `{"mcpServers":[{"id":"a","command":"safe","Command":"evil"}]}`
	args := append([]string{"render", "--harness", "claude", "--out", out, "-"}, pluginArgs(t)...)
	code, _, stderr := runCLI(t, body, args...)
	assert.Equal(t, exitRejected, code, "the request is refused; stderr: %s", stderr)
	assert.NoDirExists(t, out, "--out of a refused render")
}

// TestRenderChecksPromptOutFirst: a --prompt-out the prompt cannot be written to is refused
// (exit 2, naming the flag) before anything is written: no config file with its secret is left
// behind.
func TestRenderChecksPromptOutFirst(t *testing.T) {
	base := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(base, "adir"), 0o755))
	locked := filepath.Join(base, "locked")
	require.NoError(t, os.Mkdir(locked, 0o500))
	targets := map[string]string{
		"missing directory": filepath.Join(base, "nowhere", "prompt.txt"),
		"a directory":       filepath.Join(base, "adir"),
	}
	if os.Geteuid() != 0 { // root writes anywhere
		targets["unwritable directory"] = filepath.Join(locked, "prompt.txt")
	}
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"render", "--harness", "claude", "--out", out, "--prompt-out", target, examplePath(t)}, pluginArgs(t)...)
			code, _, stderr := runCLI(t, "", args...)
			assert.Equal(t, exitUsage, code, "exit code; stderr: %s", stderr)
			assert.Contains(t, stderr, "--prompt-out", "the error names the flag")
			assert.NoDirExists(t, out, "nothing is written")
		})
	}
}

// TestRenderReplacesEarlierRender: rendering into an --out an earlier render wrote leaves
// exactly the new render: the skills and resources only the earlier one had are gone, and
// every file on disk is one the new result lists (or loadout's manifest).
func TestRenderReplacesEarlierRender(t *testing.T) {
	out := t.TempDir()
	first := append([]string{"render", "--harness", "claude", "--out", out, "--format", "json", examplePath(t)}, pluginArgs(t)...)
	code, _, stderr := runCLI(t, "", first...)
	require.Equal(t, 0, code, "first render; stderr: %s", stderr)
	require.DirExists(t, filepath.Join(out, "config", "skills", "release-notes"), "the first render's second skill")

	var req map[string]any
	data, err := os.ReadFile(examplePath(t))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &req))
	skills := req["skills"].([]any)
	kept := skills[0].(map[string]any)
	kept["resources"] = kept["resources"].([]any)[:1] // drop checklists/structure.md
	req["skills"] = skills[:1]                        // drop release-notes
	body, err := json.Marshal(req)
	require.NoError(t, err)
	second := append([]string{"render", "--harness", "claude", "--out", out, "--format", "json", "-"}, pluginArgs(t)...)
	code, stdout, stderr := runCLI(t, string(body), second...)
	require.Equal(t, 0, code, "second render; stderr: %s", stderr)
	var res struct {
		Files []struct {
			Written string `json:"written"`
		} `json:"files"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &res), "result: %s", stdout)
	want := map[string]bool{}
	for _, f := range res.Files {
		want[f.Written] = true
	}
	var stray []string
	err = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !want[p] && d.Name() != ".loadout" && !strings.HasPrefix(p, filepath.Join(out, "checkout", ".git")) {
			stray = append(stray, p)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, stray, "files on disk the second render does not list")
	assert.NoDirExists(t, filepath.Join(out, "config", "skills", "release-notes"), "the skill only the first render had")
	assert.NoFileExists(t, filepath.Join(out, "config", "skills", "repo-review", "checklists", "structure.md"), "the resource only the first render had")
}
