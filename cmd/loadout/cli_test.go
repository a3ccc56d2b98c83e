package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/registry"
	"github.com/loadout-dev/loadout/internal/testplugins"
)

var (
	pluginsOnce  sync.Once
	pluginFlags  []string
	pluginsError string
)

// pluginArgs returns --plugin/--pins flags for the claude, codex and pi plugins built from the
// current sources (so the tests do not depend on what the test binary embedded).
func pluginArgs(t *testing.T) []string {
	t.Helper()
	pluginsOnce.Do(func() {
		dir, err := os.MkdirTemp("", "loadout-cli-plugins")
		if err != nil {
			pluginsError = err.Error()
			return
		}
		pins := map[string]string{}
		for _, name := range []string{"claude", "codex", "copilot", "pi", "qwen"} {
			wasm := testplugins.Read(t, name)
			path := filepath.Join(dir, name+".wasm")
			if err := os.WriteFile(path, wasm, 0o644); err != nil {
				pluginsError = err.Error()
				return
			}
			pins[name+".wasm"] = registry.Digest(wasm)
			pluginFlags = append(pluginFlags, "--plugin", path)
		}
		b, _ := json.Marshal(pins)
		pinsPath := filepath.Join(dir, "pins.json")
		if err := os.WriteFile(pinsPath, b, 0o644); err != nil {
			pluginsError = err.Error()
			return
		}
		pluginFlags = append(pluginFlags, "--pins", pinsPath)
	})
	require.Empty(t, pluginsError, "building test plugins")
	return pluginFlags
}

// runCLI runs loadout with args and stdin and returns its exit code, stdout and stderr.
func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb, []string{"PATH=/usr/bin:/bin", "HOME=/home/u", "SECRET_HOST_VAR=host-secret"})
	return code, out.String(), errb.String()
}

func examplePath(t *testing.T) string {
	t.Helper()
	return filepath.Join(testplugins.Root(t), "examples", "request.json")
}

func TestRenderDryRunEveryHarness(t *testing.T) {
	for _, h := range []string{"claude", "codex", "pi"} {
		t.Run(h, func(t *testing.T) {
			args := append([]string{"render", "--harness", h, "--dry-run", "--format", "json", examplePath(t)}, pluginArgs(t)...)
			code, stdout, stderr := runCLI(t, "", args...)
			require.Equal(t, exitOK, code, "loadout %v: stderr %s", args, stderr)
			var res host.Result
			require.NoError(t, json.Unmarshal([]byte(stdout), &res), "result JSON: %s", stdout)
			assert.Equal(t, h, res.Harness)
			assert.True(t, res.DryRun)
			assert.Equal(t, []string{"docs", "everything"}, res.Servers)
			assert.Equal(t, []string{"repo-review", "release-notes"}, res.Skills)
			assert.NotEmpty(t, res.Files, "a render plans files")
			for _, secret := range []string{"docs-example-token-5f2c", "fs-example-secret-91ab"} {
				assert.NotContains(t, stdout, secret, "a dry run never prints a secret")
			}
			assert.NotContains(t, stdout, "host-secret", "host variables outside the allowlist never reach the output")
		})
	}
}

func TestRenderWritesFilesWithModes(t *testing.T) {
	out := t.TempDir()
	args := append([]string{"render", "--harness", "claude", "--out", out, "--format", "json", examplePath(t)}, pluginArgs(t)...)
	code, stdout, stderr := runCLI(t, "", args...)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	var res host.Result
	require.NoError(t, json.Unmarshal([]byte(stdout), &res))
	require.NotEmpty(t, res.Files)
	var sawSecret bool
	for _, f := range res.Files {
		require.True(t, filepath.IsAbs(f.Written), "file %s:%s written to an absolute path", f.Root, f.Path)
		assert.True(t, strings.HasPrefix(f.Written, out+string(filepath.Separator)), "file %s stays under --out", f.Written)
		fi, err := os.Stat(f.Written)
		require.NoError(t, err)
		want := os.FileMode(0o644)
		if f.Secret {
			want, sawSecret = 0o600, true
			assert.NotEqual(t, "checkout", f.Root, "a secret file is never in the checkout")
			b, err := os.ReadFile(f.Written)
			require.NoError(t, err)
			assert.Contains(t, string(b), "fs-example-secret-91ab", "the secret file holds the substituted secret")
		}
		assert.Equal(t, want, fi.Mode().Perm(), "mode of %s", f.Written)
	}
	assert.True(t, sawSecret, "the example has secrets, so one file is secret")
	for _, a := range res.Args {
		assert.NotContains(t, a, "{{loadout.", "roots are substituted in args")
		assert.NotContains(t, a, "fs-example-secret-91ab", "no secret on the command line")
	}
}

func TestRenderRejectedWritesNothing(t *testing.T) {
	out := t.TempDir()
	body := `{"mcpServers":[{"id":"a","command":"safe","Command":"evil"}]}`
	args := append([]string{"render", "--harness", "claude", "--out", out, "-"}, pluginArgs(t)...)
	code, _, stderr := runCLI(t, body, args...)
	assert.Equal(t, exitRejected, code, "a case-folded member refuses the request")
	assert.Contains(t, stderr, "mcpServers[0].Command", "the error names the field")
	var written []string
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			written = append(written, p)
		}
		return nil
	})
	assert.Empty(t, written, "nothing is written for a rejected request")
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  int
	}{
		{"unknown flag", "", []string{"render", "--bogus"}, exitUsage},
		{"bad format", "{}", []string{"render", "--dry-run", "--format", "yaml", "-"}, exitUsage},
		{"no roots", `{"harness":"claude"}`, []string{"render", "-"}, exitUsage},
		{"unknown harness", `{}`, []string{"render", "--harness", "nope", "--dry-run", "-"}, exitUsage},
		{"trailing data", `{} {}`, []string{"render", "--harness", "claude", "--dry-run", "-"}, exitRejected},
		{"reserved placeholder", `{"skills":[{"name":"x","instructions":"{{loadout.secret.1}}"}]}`, []string{"policy", "eval", "-"}, exitRejected},
		{"missing file", "", []string{"render", "--dry-run", "/nonexistent/request.json"}, exitUsage},
		{"request file is a directory", "", []string{"render", "--harness", "claude", "--dry-run", "/"}, exitUsage},
		{"policy input of a missing file", "", []string{"policy", "input", "/nonexistent/request.json"}, exitUsage},
		{"policy eval of a missing file", "", []string{"policy", "eval", "/nonexistent/request.json"}, exitUsage},
		{"redact with a missing file", "log", []string{"redact", "/nonexistent/request.json"}, exitUsage},
		{"unknown request member", `{"mcpServer":[{"id":"a","command":"npx"}]}`, []string{"render", "--harness", "claude", "--dry-run", "-"}, exitRejected},
		{"typo drops the only server", `{"mcpServers":[{"id":"a","command":"npx","allowedTool":["x"]}]}`, []string{"render", "--harness", "claude", "--dry-run", "-"}, exitRejected},
		{"policy deny of a server", `{"mcpServers":[{"id":"a","transport":"http","url":"http://remote.example/mcp"},{"id":"b","command":"npx"}]}`, []string{"render", "--harness", "claude", "--dry-run", "-"}, exitOK},
		{"policy deny of every server", `{"mcpServers":[{"id":"a","transport":"http","url":"http://remote.example/mcp"}]}`, []string{"render", "--harness", "claude", "--dry-run", "-"}, exitOK},
		{"too many args", "", []string{"render", "a", "b"}, exitUsage},
		{"wasmtime absent or present", "{}", []string{"render", "--engine", "nope", "--harness", "claude", "--dry-run", "-"}, exitUsage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if args[0] == "render" {
				args = append(append([]string{}, args...), pluginArgs(t)...)
			}
			code, stdout, stderr := runCLI(t, tc.stdin, args...)
			assert.Equal(t, tc.want, code, "loadout %v: stderr %s", args, stderr)
			if tc.want == exitOK {
				assert.Contains(t, stdout, "dropped", "a denied server is reported")
				return
			}
			assert.NotEmpty(t, stderr, "a failure explains itself")
		})
	}
}

func TestPolicyEvalShowsReasons(t *testing.T) {
	body := `{"mcpServers":[{"id":"ok","transport":"http","url":"https://mcp.example.com/"},{"id":"plain","transport":"http","url":"http://evil.example/"},{"id":"env","command":"x","env":{"LD_PRELOAD":"/x.so","KEEP":"1"}}]}`
	code, stdout, stderr := runCLI(t, body, "policy", "eval", "--format", "json", "-")
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	var out struct {
		Servers []string `json:"servers"`
		Dropped []struct {
			Kind, Name, Field, Code, Message, Rule string
		} `json:"dropped"`
		Rules []struct {
			Rule     string `json:"rule"`
			Elements []any  `json:"elements"`
		} `json:"rules"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &out), stdout)
	assert.Equal(t, []string{"ok", "env"}, out.Servers)
	rules := map[string]int{}
	for _, r := range out.Rules {
		rules[r.Rule] = len(r.Elements)
	}
	assert.Equal(t, 1, rules["data.loadout.url.deny"], "what each rule produced is printed: %v", rules)
	assert.Equal(t, 1, rules["data.loadout.allow.drop"], "what each rule produced is printed: %v", rules)
	byField := map[string]string{}
	for _, d := range out.Dropped {
		byField[d.Field] = d.Code + " " + d.Rule
		assert.NotEmpty(t, d.Message, "every drop has its rule's message")
	}
	assert.Regexp(t, `^url_not_allowed loadout/url/url\.rego:\d+$`, byField["mcpServers[1].url"], "the plain-http server is dropped at its url, by the URL rule: %v", out.Dropped)
	assert.Regexp(t, `^env_key_refused loadout/allow/allow\.rego:\d+$`, byField["mcpServers[2].env.LD_PRELOAD"], "LD_PRELOAD is removed: %v", out.Dropped)
}

// corpPolicies is a team's policy directory holding only the two rules of docs/POLICIES.md
// §4.1 as a new file (examples/policies/loadout/corp_hosts.rego's deny, verbatim from the
// policy contract): loadout lays it over the defaults.
func corpPolicies(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "loadout"), 0o755))
	rules := `package loadout.corp

import rego.v1

deny contains {"server": i, "code": "host_not_allowed", "msg": sprintf("%s: host %s is not on the corporate list", [s.id, s.facts.url.host])} if {
	some i, s in input.servers
	s.transport == "http"
	not endswith(s.facts.url.host, ".corp.example")
}

deny contains {"server": i, "code": "command_denied", "msg": sprintf("%s may not run %s", [s.id, s.facts.commandBase])} if {
	some i, s in input.servers
	s.transport == "stdio"
	s.facts.commandBase in {"curl", "wget", "sh", "bash"}
}
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "loadout", "corp.rego"), []byte(rules), 0o644))
	return dir
}

func TestRenderWithANewPolicyFile(t *testing.T) {
	body := `{"mcpServers":[{"id":"docs","transport":"http","url":"https://mcp.corp.example/mcp"},{"id":"outside","transport":"http","url":"https://mcp.example.com/mcp"},{"id":"fetch","command":"/usr/bin/curl","args":["https://x"]}]}`
	dir := corpPolicies(t)
	args := append([]string{"render", "--harness", "claude", "--dry-run", "--format", "json", "--policies", dir, "-"}, pluginArgs(t)...)
	code, stdout, stderr := runCLI(t, body, args...)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	var res struct {
		Servers []string                            `json:"servers"`
		Dropped []struct{ Name, Code, Rule string } `json:"dropped"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &res), stdout)
	assert.Equal(t, []string{"docs"}, res.Servers)
	got := []string{}
	for _, d := range res.Dropped {
		got = append(got, d.Name+" "+d.Code+" "+d.Rule)
	}
	assert.Equal(t, []string{"outside host_not_allowed " + dir + "/loadout/corp.rego:5", "fetch command_denied " + dir + "/loadout/corp.rego:11"}, got)
}

func TestPolicyInput(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "policy", "input", examplePath(t))
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.NotContains(t, stdout, "fs-example-secret-91ab", "secret values are masked")
	assert.NotContains(t, stdout, "docs-example-token-5f2c", "secret values are masked")
	var doc struct {
		Harness string `json:"harness"`
		Servers []struct {
			ID    string         `json:"id"`
			Facts map[string]any `json:"facts"`
		} `json:"servers"`
		Skills []struct {
			Name  string   `json:"name"`
			Files []string `json:"files"`
		} `json:"skills"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
	require.NotEmpty(t, doc.Servers)
	assert.Equal(t, "docs", doc.Servers[0].ID)
	assert.Contains(t, doc.Servers[0].Facts, "url")
	require.NotEmpty(t, doc.Skills)
	assert.Equal(t, "SKILL.md", doc.Skills[0].Files[0])
}

func TestPolicyTest(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "policy", "test")
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.Contains(t, stdout, " 0 failed, 0 errored")

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.rego"), []byte("package loadout\n\ndecision := 1\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p_test.rego"), []byte("package loadout_test\n\nimport data.loadout\n\ntest_fails if loadout.decision == 2\n\ntest_passes if loadout.decision == 1\n"), 0o644))
	code, stdout, _ = runCLI(t, "", "policy", "test", dir)
	assert.Equal(t, exitRejected, code, "a failing Rego test fails the command: %s", stdout)
	assert.Contains(t, stdout, "FAIL")

	code, stdout, _ = runCLI(t, "", "policy", "test", "--run", "test_passes", "--coverage", dir)
	assert.Equal(t, exitOK, code, "--run keeps the passing test only: %s", stdout)
	assert.Contains(t, stdout, "coverage")
}

func TestRedact(t *testing.T) {
	log := "env FS_TOKEN=fs-example-secret-91ab\nheader \"Bearer docs-example-token-5f2c\"\ntoken docs-example-token-5f2c\nplain text\n"
	code, stdout, stderr := runCLI(t, log, "redact", examplePath(t))
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.Equal(t, "env FS_TOKEN=[REDACTED]\nheader \"[REDACTED]\"\ntoken [REDACTED]\nplain text\n", stdout)
}

func TestPluginsListAndVerify(t *testing.T) {
	args := append([]string{"plugins", "list", "--format", "json"}, pluginArgs(t)...)
	code, stdout, stderr := runCLI(t, "", args...)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	var infos []host.PluginInfo
	require.NoError(t, json.Unmarshal([]byte(stdout), &infos))
	harnesses := map[string]host.PluginInfo{}
	for _, p := range infos {
		harnesses[p.Harness] = p
	}
	for _, h := range []string{"claude", "codex", "pi"} {
		p, ok := harnesses[h]
		require.True(t, ok, "plugin for %s listed: %s", h, stdout)
		assert.Equal(t, 1, p.ABIVersion)
		assert.True(t, strings.HasPrefix(p.SHA256, "sha256:"))
		assert.NotEqual(t, "builtin", p.Source, "a --plugin file replaces the built-in of its harness")
	}

	args = append([]string{"plugins", "verify"}, pluginArgs(t)...)
	code, stdout, stderr = runCLI(t, "", args...)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.Contains(t, stdout, "ok   claude.wasm")

	// A swapped module fails its pin before it is compiled.
	dir := t.TempDir()
	evil := filepath.Join(dir, "claude.wasm")
	require.NoError(t, os.WriteFile(evil, testplugins.Read(t, "codex"), 0o644))
	pins := filepath.Join(dir, "pins.json")
	b, _ := json.Marshal(map[string]string{"claude.wasm": registry.Digest(testplugins.Read(t, "claude"))})
	require.NoError(t, os.WriteFile(pins, b, 0o644))
	code, stdout, _ = runCLI(t, "", "plugins", "verify", "--plugin", evil, "--pins", pins)
	assert.Equal(t, exitPlugin, code, "a pin mismatch is a plugin failure: %s", stdout)
	assert.Contains(t, stdout, "FAIL claude.wasm")
}

// TestRedactFindsWrittenSecrets renders a secret that JSON and TOML spell differently from its
// raw form, then pipes every written file through `loadout redact`: the substitution's
// spelling and the redaction set must agree, or the secret survives in the config file.
// redactSecrets are the secrets TestRedactFindsWrittenSecrets renders: fixed ones with every
// character a harness or a file format spells differently, and random ones drawn from those
// characters. Each ends in "-k<n>ab", which only the secret holds, so that a spelling that
// survives redaction is found.
func redactSecrets() []string {
	out := []string{"tok<&>\"\\\x1bE\u2028nd", "s3cr$t!x${HOME}-\"q", "!$${A}$", "a$\\'{}!\"$"}
	rng := rand.New(rand.NewPCG(7, 11))
	const alphabet = "ab$!\\\"'{}<>&\t=; "
	for i := 0; i < 12; i++ {
		b := make([]byte, 4+rng.IntN(12))
		for j := range b {
			b[j] = alphabet[rng.IntN(len(alphabet))]
		}
		out = append(out, string(b))
	}
	for i := range out {
		out[i] += fmt.Sprintf("-k%dab", i)
	}
	return out
}

func TestRedactFindsWrittenSecrets(t *testing.T) {
	secrets := redactSecrets()
	var servers []any
	for i, secret := range secrets {
		servers = append(servers,
			map[string]any{"id": fmt.Sprintf("s%d", i), "command": "/usr/bin/srv", "env": map[string]string{"TOKEN": secret}, "secretKeys": []string{"TOKEN"}},
			map[string]any{"id": fmt.Sprintf("h%d", i), "transport": "http", "url": "https://mcp.example.com/", "headers": map[string]string{"X-Key": secret}, "secretKeys": []string{"X-Key"}})
	}
	reqJSON, err := json.Marshal(map[string]any{"mcpServers": servers})
	require.NoError(t, err)
	reqPath := filepath.Join(t.TempDir(), "request.json")
	require.NoError(t, os.WriteFile(reqPath, reqJSON, 0o600))
	for _, h := range []string{"claude", "codex", "pi"} {
		t.Run(h, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"render", "--harness", h, "--out", out, "--format", "json", reqPath}, pluginArgs(t)...)
			code, stdout, stderr := runCLI(t, "", args...)
			require.Equal(t, exitOK, code, "stderr: %s", stderr)
			var res host.Result
			require.NoError(t, json.Unmarshal([]byte(stdout), &res))
			var secretFiles int
			for _, f := range res.Files {
				if !f.Secret {
					continue
				}
				secretFiles++
				written, err := os.ReadFile(f.Written)
				require.NoError(t, err)
				code, redacted, stderr := runCLI(t, string(written), "redact", reqPath)
				require.Equal(t, exitOK, code, "stderr: %s", stderr)
				assert.Contains(t, redacted, "[REDACTED]", "%s: the secret is found in %s", h, f.Path)
				for i, secret := range secrets {
					assert.NotContains(t, redacted, fmt.Sprintf("-k%dab", i), "%s: a spelling of secret %q survives redaction in %s", h, secret, f.Path)
				}
			}
			assert.Positive(t, secretFiles, "%s writes the secrets to a secret file", h)
		})
	}
}

// TestRenderRefusesRunRootInCheckout: the secret-bearing run root may not be the checkout; the
// CLI says which flag and rule, exits 2 and writes nothing.
func TestRenderRefusesRunRootInCheckout(t *testing.T) {
	base := t.TempDir()
	checkout := filepath.Join(base, "repo")
	require.NoError(t, os.MkdirAll(filepath.Join(checkout, ".git"), 0o755))
	args := append([]string{"render", "--harness", "claude", "--config-dir", filepath.Join(base, "config"),
		"--run-dir", checkout, "--checkout", checkout, examplePath(t)}, pluginArgs(t)...)
	code, _, stderr := runCLI(t, "", args...)
	assert.Equal(t, exitUsage, code, "exit code; stderr: %s", stderr)
	assert.Contains(t, stderr, "root run", "stderr names the root")
	assert.Contains(t, stderr, "disjoint", "stderr names the rule")
	entries, err := os.ReadDir(checkout)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "the checkout holds only .git")
}

// loadout render has no token store: a request asking for a run token is refused, exit 3
// (the input asks for what this command cannot do; no flag would change that), naming the
// field. policy eval and redact refuse it the same way.
func TestRenderRefusesMint(t *testing.T) {
	req := filepath.Join(t.TempDir(), "mint.json")
	require.NoError(t, os.WriteFile(req, []byte(`{"harness":"claude","run":{"id":"r1"},"mcpServers":[`+
		`{"id":"a","command":"/usr/bin/a"},{"id":"docs","transport":"http","url":"https://mcp.example.com/mcp","token":{"mint":true}}]}`), 0o644))
	for _, args := range [][]string{
		append([]string{"render", "--dry-run", req}, pluginArgs(t)...),
		{"policy", "eval", req},
		{"redact", req},
	} {
		code, _, stderr := runCLI(t, "", args...)
		assert.Equal(t, exitRejected, code, "loadout %s: stderr %s", args[0], stderr)
		assert.Contains(t, stderr, "mcpServers[1].token.mint", "loadout %s names the field", args[0])
		assert.Contains(t, stderr, "mint_unsupported", "loadout %s", args[0])
		assert.Contains(t, stderr, "loadout serve", "loadout %s says who mints", args[0])
	}
}

// TestPolicyInputMasksSecretDrops pins that `policy input` masks a credential the policy drops
// as secret (a per-user server's MCP_ACCESS_TOKEN, which no secretKeys entry names), and every
// env and header value when the policy refuses the request, so a fixture made from its
// output holds no secret.
func TestPolicyInputMasksSecretDrops(t *testing.T) {
	body := `{"run":{"user":"alice"},"mcpServers":[{"id":"mine","command":"npx","credentials":"user","env":{"MCP_ACCESS_TOKEN":"drop-secret-7f3a","mcp_access_token":"drop-secret-lower-19c2","LEVEL":"debug"}}]}`
	code, stdout, stderr := runCLI(t, body, "policy", "input", "-")
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.NotContains(t, stdout, "drop-secret-7f3a", "a credential dropped as secret is masked")
	assert.NotContains(t, stdout, "drop-secret-lower-19c2", "a credential dropped as secret is masked")
	var doc struct {
		Servers []struct {
			Env map[string]string `json:"env"`
		} `json:"servers"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
	require.Len(t, doc.Servers, 1)
	assert.Equal(t, map[string]string{"MCP_ACCESS_TOKEN": "[REDACTED]", "mcp_access_token": "[REDACTED]", "LEVEL": "debug"},
		doc.Servers[0].Env, "masked with the input document's one spelling; an ordinary value is shown")

	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "loadout"), 0o755))
	bad := "package loadout.bad\n\ndeny contains {\"server\": 99, \"code\": \"out_of_range\"} if input.run.user == \"trigger\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "loadout", "bad.rego"), []byte(bad), 0o644))
	body = `{"run":{"user":"trigger"},"mcpServers":[{"id":"docs","transport":"http","url":"https://docs.example/mcp","headers":{"X-Other":"refused-secret-88d1"},"env":{"PLAIN":"refused-secret-2b7e"}}]}`
	code, stdout, stderr = runCLI(t, body, "policy", "input", "--policies", dir, "-")
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.NotContains(t, stdout, "refused-secret-88d1", "a refused request's header values are masked")
	assert.NotContains(t, stdout, "refused-secret-2b7e", "a refused request's env values are masked")
}

// TestRedactMasksSecretsOfDroppedEntries: `loadout redact` masks every value marked secret,
// rendered or not: a declared secret of a server the policy refuses (plain http to a remote
// host), of an env key it refuses, of a header with a line break, and of a server the parser
// drops (a bad transport). A value nobody marked stays.
func TestRedactMasksSecretsOfDroppedEntries(t *testing.T) {
	req := filepath.Join(t.TempDir(), "request.json")
	require.NoError(t, os.WriteFile(req, []byte(`{"mcpServers": [
	  {"id": "plain", "transport": "http", "url": "http://evil.example/mcp", "headers": {"X-Key": "refused-server-secret"}, "secretKeys": ["X-Key"]},
	  {"id": "tools", "command": "npx", "env": {"LD_PRELOAD": "refused-env-secret", "LOG": "not-a-secret"}, "secretKeys": ["LD_PRELOAD"]},
	  {"id": "web", "transport": "http", "url": "https://mcp.example.com/", "headers": {"X-Api": "bad\r\nheader-secret"}, "secretKeys": ["X-Api"]},
	  {"id": "ftp", "transport": "ftp", "url": "ftp://x.example/", "env": {"K": "parser-dropped-secret"}, "secretKeys": ["K"]}]}`), 0o644))
	log := "a refused-server-secret b refused-env-secret c \"bad\\r\\nheader-secret\" d parser-dropped-secret e not-a-secret\n"
	code, stdout, stderr := runCLI(t, log, "redact", req)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.Equal(t, "a [REDACTED] b [REDACTED] c \"[REDACTED]\" d [REDACTED] e not-a-secret\n", stdout)
}

// TestPolicyInputMasksSecretSpellingsEverywhere: a secret copied into another field (an arg,
// a url) is masked there too, with loadout redact's model, and an ordinary value is not.
func TestPolicyInputMasksSecretSpellingsEverywhere(t *testing.T) {
	req := `{"harness":"claude","mcpServers":[` +
		`{"id":"fs","command":"/bin/fs","args":["--key=fs-input-secret-77","--level=debug"],"env":{"FS_KEY":"fs-input-secret-77"},"secretKeys":["FS_KEY"]},` +
		`{"id":"docs","transport":"http","url":"https://mcp.example.com/mcp?t=fs-input-secret-77","headers":{"X-Client":"loadout"}}]}`
	path := filepath.Join(t.TempDir(), "request.json")
	require.NoError(t, os.WriteFile(path, []byte(req), 0o644))
	code, stdout, stderr := runCLI(t, "", "policy", "input", path)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.NotContains(t, stdout, "fs-input-secret-77", "the secret is masked wherever it appears")
	assert.Contains(t, stdout, `"--key=[REDACTED]"`, "in an arg")
	assert.Contains(t, stdout, `"--level=debug"`, "an ordinary arg stays")
	assert.Contains(t, stdout, `"X-Client": "loadout"`, "an ordinary header stays")
}
