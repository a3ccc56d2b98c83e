package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/internal/testplugins"
)

// exampleSecrets are the secret values of examples/request.json.
var exampleSecrets = []string{"docs-example-token-5f2c", "fs-example-secret-91ab"}

// serversTable is the servers table each built-in harness's config file holds.
var serversTable = map[string]string{"claude": "mcpServers", "codex": "mcp_servers", "pi": "mcpServers", "gemini": "mcpServers", "copilot": "mcpServers", "qwen": "mcpServers"}

func TestRenderTextListsWhatWasWritten(t *testing.T) {
	for _, h := range []string{"claude", "codex", "pi", "gemini", "copilot", "qwen"} {
		t.Run(h, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"render", "--harness", h, "--out", out, examplePath(t)}, pluginArgs(t)...)
			code, stdout, stderr := runCLI(t, "", args...)
			require.Equal(t, exitOK, code, "loadout %v: stderr %s", args, stderr)
			assert.Contains(t, stdout, "\n    "+serversTable[h]+": docs, everything\n", "the config file's servers, read back: %s", stdout)
			skillsDir := map[string]string{"gemini": ".gemini/skills/"}[h]
			if skillsDir == "" {
				skillsDir = "skills/"
			}
			if h == "qwen" { // Qwen Code reads no skills under --bare: every run folds them
				assert.Contains(t, stdout, "\n  | ### Skill: repo-review\n", "the prompt folds the skills: %s", stdout)
				assert.Contains(t, stdout, "\n  checkout:.cat-context/skill/repo-review/templates/report.md ", "a folded skill's files are in the checkout: %s", stdout)
			} else {
				assert.Contains(t, stdout, "\nskills in config:"+skillsDir+": repo-review, release-notes\n", "the skills directory, read back: %s", stdout)
			}
			assert.Contains(t, stdout, "    at "+out+string(filepath.Separator), "each file says where it was written")
			assert.Contains(t, stdout, "\nprompt:\n  | ", "the prompt is printed")
			assert.Contains(t, stdout, "docs", "the prompt names the servers")
			for _, s := range exampleSecrets {
				assert.NotContains(t, stdout, s, "the text output never shows a secret")
			}
		})
	}
}

// TestRenderTextReadsTheConfigBack: the servers a config file lists come from the file, not
// from the request. Pi refuses two server names that differ only by "-" and "_", so its
// renderer leaves the second out (with a warning), and the read-back says so.
func TestRenderTextReadsTheConfigBack(t *testing.T) {
	req := filepath.Join(t.TempDir(), "request.json")
	require.NoError(t, os.WriteFile(req, []byte(`{"mcpServers":[{"id":"a-b","command":"/usr/bin/srv-one"},{"id":"a_b","command":"/usr/bin/srv-two"}]}`), 0o644))
	args := append([]string{"render", "--harness", "pi", "--out", t.TempDir(), req}, pluginArgs(t)...)
	code, stdout, stderr := runCLI(t, "", args...)
	require.Equal(t, exitOK, code, "stderr %s", stderr)
	assert.Contains(t, stdout, "servers: a-b, a_b\n", "both servers pass the policy")
	assert.Contains(t, stdout, "\n    mcpServers: a-b\n", "the written mcp.json holds only the first: %s", stdout)
	assert.Contains(t, stdout, "\nwarning ", "the missing one comes back as a warning")
}

func TestRenderDryRunShowContent(t *testing.T) {
	for _, h := range []string{"claude", "codex", "pi"} {
		t.Run(h, func(t *testing.T) {
			args := append([]string{"render", "--harness", h, "--dry-run", "--show-content", examplePath(t)}, pluginArgs(t)...)
			code, stdout, stderr := runCLI(t, "", args...)
			require.Equal(t, exitOK, code, "stderr %s", stderr)
			assert.Contains(t, stdout, "(dry run, nothing written)")
			assert.Contains(t, stdout, "\n    | name: repo-review\n", "a SKILL.md's content is printed")
			assert.Contains(t, stdout, "\n    | # Review of {{repo}}\n", "a resource's content is printed")
			assert.Contains(t, stdout, "\n    "+serversTable[h]+": docs, everything\n", "the planned config is read back too")
			assert.Contains(t, stdout, "[REDACTED]", "a secret in the planned config is masked")
			for _, s := range exampleSecrets {
				assert.NotContains(t, stdout, s, "the planned content never shows a secret")
			}

			args = append([]string{"render", "--harness", h, "--dry-run", "--show-content", "--format", "json", examplePath(t)}, pluginArgs(t)...)
			code, stdout, stderr = runCLI(t, "", args...)
			require.Equal(t, exitOK, code, "stderr %s", stderr)
			var res host.Result
			require.NoError(t, json.Unmarshal([]byte(stdout), &res))
			for _, f := range res.Files {
				assert.Len(t, f.Content, f.Bytes, "%s:%s: the JSON result carries the planned content", f.Root, f.Path)
			}
			for _, s := range exampleSecrets {
				assert.NotContains(t, stdout, s, "the JSON content never shows a secret")
			}
		})
	}
	// Without --show-content the JSON result stays as it was: no content.
	args := append([]string{"render", "--harness", "claude", "--dry-run", "--format", "json", examplePath(t)}, pluginArgs(t)...)
	code, stdout, stderr := runCLI(t, "", args...)
	require.Equal(t, exitOK, code, "stderr %s", stderr)
	assert.NotContains(t, stdout, `"content"`, "a plain dry run's JSON holds no file content")
}

func TestRenderPromptOut(t *testing.T) {
	dir := t.TempDir()
	promptFile := filepath.Join(dir, "prompt.txt")
	args := append([]string{"render", "--harness", "codex", "--out", filepath.Join(dir, "out"), "--prompt-out", promptFile, examplePath(t)}, pluginArgs(t)...)
	code, stdout, stderr := runCLI(t, "", args...)
	require.Equal(t, exitOK, code, "stderr %s", stderr)
	prompt, err := os.ReadFile(promptFile)
	require.NoError(t, err, "--prompt-out writes the file")
	assert.Contains(t, string(prompt), "docs", "the prompt names the servers")
	assert.Contains(t, stdout, "prompt: "+strconv.Itoa(len(prompt))+" bytes written to "+promptFile, "the text output names the file")
	assert.NotContains(t, stdout, "\nprompt:\n", "the prompt itself is not printed again")

	args = append([]string{"render", "--harness", "codex", "--dry-run", "--format", "json", examplePath(t)}, pluginArgs(t)...)
	code, stdout, _ = runCLI(t, "", args...)
	require.Equal(t, exitOK, code)
	var res host.Result
	require.NoError(t, json.Unmarshal([]byte(stdout), &res))
	assert.Equal(t, res.Prompt, string(prompt), "the file holds the result's prompt")

	args = append([]string{"render", "--harness", "codex,pi", "--dry-run", "--prompt-out", promptFile, examplePath(t)}, pluginArgs(t)...)
	code, _, stderr = runCLI(t, "", args...)
	assert.Equal(t, exitUsage, code, "--prompt-out with several harnesses; stderr %s", stderr)
}

// TestRenderJSONMatchesTheResultSchema validates real render output against
// docs/result.schema.json: a write, a dry run with content, a render with drops and warnings,
// and several harnesses at once.
func TestRenderJSONMatchesTheResultSchema(t *testing.T) {
	sch, err := jsonschema.NewCompiler().Compile(filepath.Join(testplugins.Root(t), "docs", "result.schema.json"))
	require.NoError(t, err, "compile the result schema")
	dropping := filepath.Join(t.TempDir(), "request.json")
	require.NoError(t, os.WriteFile(dropping, []byte(`{"mcpServers":[{"id":"a-b","command":"/usr/bin/srv-one","env":{"LD_PRELOAD":"/x.so"}},{"id":"a_b","command":"/usr/bin/srv-two"},{"id":"plain","transport":"http","url":"http://evil.example/"}],"skills":[{"name":"../up","instructions":"do it"}]}`), 0o644))
	for name, args := range map[string][]string{
		"write":             {"render", "--harness", "claude", "--out", t.TempDir(), examplePath(t)},
		"dry run, content":  {"render", "--harness", "codex", "--dry-run", "--show-content", examplePath(t)},
		"drops, warnings":   {"render", "--harness", "pi", "--dry-run", dropping},
		"several harnesses": {"render", "--harness", "claude,codex,pi", "--out", t.TempDir(), examplePath(t)},
		"policy bundle":     {"render", "--harness", "claude", "--dry-run", "--policies", writeBundleFile(t, corpPolicies(t)), examplePath(t)},
	} {
		t.Run(name, func(t *testing.T) {
			args := append(append(args, "--format", "json"), pluginArgs(t)...)
			code, stdout, stderr := runCLI(t, "", args...)
			require.Equal(t, exitOK, code, "loadout %v: stderr %s", args, stderr)
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(stdout)))
			require.NoError(t, err)
			assert.NoError(t, sch.Validate(inst), "loadout %v output against docs/result.schema.json:\n%s", args, stdout)
		})
	}
}

// TestRenderShowsBuiltinTools: the text and JSON results say which built-in tools the run
// pre-approves: none unless run.builtinTools asks, and only those the harness's profile lists.
func TestRenderShowsBuiltinTools(t *testing.T) {
	dir := t.TempDir()
	none := filepath.Join(dir, "none.json")
	require.NoError(t, os.WriteFile(none, []byte(`{"mcpServers":[{"id":"a","command":"/usr/bin/srv","allowedTools":["read"]}]}`), 0o644))
	code, stdout, stderr := runCLI(t, "", append([]string{"render", "--harness", "claude", "--dry-run", none}, pluginArgs(t)...)...)
	require.Equal(t, exitOK, code, "stderr %s", stderr)
	assert.Contains(t, stdout, "\nbuilt-in tools pre-approved: (none)\n", "a restricted server pre-approves no built-in tool: %s", stdout)

	some := filepath.Join(dir, "some.json")
	require.NoError(t, os.WriteFile(some, []byte(`{"run":{"builtinTools":["Read","Edit","shell"]},"mcpServers":[{"id":"a","command":"/usr/bin/srv"}]}`), 0o644))
	code, stdout, stderr = runCLI(t, "", append([]string{"render", "--harness", "claude", "--dry-run", some}, pluginArgs(t)...)...)
	require.Equal(t, exitOK, code, "stderr %s", stderr)
	assert.Contains(t, stdout, "\nbuilt-in tools pre-approved: Read, Edit\n", "the run's tools Claude Code has: %s", stdout)
	assert.Contains(t, stdout, "warning builtin_tool_unknown: ", "the unknown one is warned about: %s", stdout)
	code, stdout, stderr = runCLI(t, "", append([]string{"render", "--harness", "claude", "--dry-run", "--format", "json", some}, pluginArgs(t)...)...)
	require.Equal(t, exitOK, code, "stderr %s", stderr)
	var res struct {
		BuiltinTools []string `json:"builtinTools"`
		Args         []string `json:"args"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &res), "decode %s", stdout)
	assert.Equal(t, []string{"Read", "Edit"}, res.BuiltinTools, "the JSON result's builtinTools")
	assert.Contains(t, res.Args, "Read", "--allowedTools names the run's tools")
	assert.NotContains(t, res.Args, "Bash", "and no other built-in tool")
}
