package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/internal/testplugins"
)

func TestHelpSaysWhatLoadoutIs(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "--help")
	require.Equal(t, exitOK, code, "loadout --help: stderr %s", stderr)
	lines := strings.Split(stdout, "\n")
	require.GreaterOrEqual(t, len(lines), 3, "loadout --help output: %s", stdout)
	assert.Contains(t, lines[0], "loadout turns one request", "the first line says what loadout is")
	assert.Contains(t, lines[1], "an agent CLI (a harness) reads", "the second line says for whom")
	assert.Empty(t, lines[2], "the description is two lines")
	assert.Equal(t, "Built-in harnesses: "+strings.Join(builtinHarnesses(), ", ")+".", lines[3], "then the harnesses this binary renders for")
	_, examples, ok := strings.Cut(stdout, "Examples:\n")
	require.True(t, ok, "loadout --help shows an example: %s", stdout)
	assert.True(t, strings.HasPrefix(strings.TrimSpace(examples), "loadout init"), "the example starts from loadout init: %s", examples)
	assert.Contains(t, stdout, "completion", "the completion command is listed")
}

func TestRenderWithoutRequestNamesTheArgument(t *testing.T) {
	code, stdout, stderr := runCLI(t, `{"harness":"claude"}`, "render", "--harness", "claude", "--dry-run")
	assert.Equal(t, exitUsage, code, "loadout render with no request; stderr %s", stderr)
	assert.Empty(t, stdout, "nothing is rendered")
	assert.Contains(t, stderr, "REQUEST.json", "the error names the missing argument")
	assert.Contains(t, stderr, "- to read it from stdin", "the error says how to read stdin")
	assert.Contains(t, stderr, "loadout render --help", "the error points at the command's help")
}

func TestRenderShowContentNeedsDryRun(t *testing.T) {
	code, _, stderr := runCLI(t, "", "render", "--harness", "claude", "--out", t.TempDir(), "--show-content", examplePath(t))
	assert.Equal(t, exitUsage, code, "stderr %s", stderr)
	assert.Contains(t, stderr, "--dry-run", "the error names the flag to add")
}

func TestInitWritesARequestThatRenders(t *testing.T) {
	dir := t.TempDir()
	req := filepath.Join(dir, "request.json")
	code, stdout, stderr := runCLI(t, "", "init", req)
	require.Equal(t, exitOK, code, "loadout init: stderr %s", stderr)
	assert.Empty(t, stdout, "init writes the file, not stdout")
	assert.Contains(t, stderr, "secretKeys", "init explains the fields on stderr")
	assert.Contains(t, stderr, "loadout render --dry-run --show-content "+req, "init says what to run next")
	body, err := os.ReadFile(req)
	require.NoError(t, err)

	sch, err := jsonschema.NewCompiler().Compile(filepath.Join(testplugins.Root(t), "docs", "request.schema.json"))
	require.NoError(t, err, "compile the request schema")
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	require.NoError(t, err)
	assert.NoError(t, sch.Validate(inst), "the starter request validates against docs/request.schema.json")

	for _, h := range []string{"claude", "codex", "pi"} {
		t.Run(h, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"render", "--harness", h, "--out", out, "--format", "json", req}, pluginArgs(t)...)
			code, stdout, stderr := runCLI(t, "", args...)
			require.Equal(t, exitOK, code, "loadout %v: stderr %s", args, stderr)
			var res host.Result
			require.NoError(t, json.Unmarshal([]byte(stdout), &res))
			assert.Equal(t, []string{"everything", "docs"}, res.Servers, "both starter servers are kept")
			assert.Equal(t, []string{"repo-review"}, res.Skills, "the starter skill is kept")
			assert.Empty(t, res.Dropped, "nothing of the starter request is dropped")
		})
	}

	code, _, stderr = runCLI(t, "", "init", req)
	assert.Equal(t, exitUsage, code, "init over an existing file; stderr %s", stderr)
	assert.Contains(t, stderr, "already exists", "the error says why")
	again, err := os.ReadFile(req)
	require.NoError(t, err)
	assert.Equal(t, body, again, "the existing file is untouched")

	code, stdout, _ = runCLI(t, "", "init", "-")
	require.Equal(t, exitOK, code)
	assert.Equal(t, string(body), stdout, "init - writes the same request to stdout")
}

func TestCompletion(t *testing.T) {
	for shell, want := range map[string]string{
		"bash": "__start_loadout",
		"zsh":  "#compdef loadout",
		"fish": "complete -c loadout",
	} {
		code, stdout, stderr := runCLI(t, "", "completion", shell)
		require.Equal(t, exitOK, code, "loadout completion %s: stderr %s", shell, stderr)
		assert.Contains(t, stdout, want, "the %s completion script", shell)
	}
	// What the shell asks the binary for: subcommands, and the values of a flag.
	code, stdout, _ := runCLI(t, "", "__complete", "re")
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "render", "completing 're'")
	assert.Contains(t, stdout, "redact", "completing 're'")
	code, stdout, _ = runCLI(t, "", "__complete", "render", "--harness", "")
	require.Equal(t, exitOK, code)
	for _, h := range []string{"claude", "codex", "pi"} {
		assert.Contains(t, stdout, h, "completing --harness")
	}
}
