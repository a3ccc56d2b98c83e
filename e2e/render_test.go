package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// renderResult is the part of `loadout render --format json` the tests read (host.Result).
type renderResult struct {
	Harness  string   `json:"harness"`
	Servers  []string `json:"servers"`
	Skills   []string `json:"skills"`
	Args     []string `json:"args"`
	Env      []envVar `json:"env"`
	Prompt   string   `json:"prompt"`
	Warnings []struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Server  string `json:"server"`
	} `json:"warnings"`
	Files []struct {
		Root    string `json:"root"`
		Path    string `json:"path"`
		Secret  bool   `json:"secret"`
		Written string `json:"written"`
	} `json:"files"`
}

const renderTimeout = 60 * time.Second

// renderWithLoadout writes the scenario's request and renders it with
// `loadout render --harness H --out DIR REQUEST.json --format json`, run with the scenario's
// render-time environment (the host environment the policy filters).
func renderWithLoadout(t *testing.T, sc *scenario, loadout, canary string, c clis) rendered {
	t.Helper()
	reqPath := filepath.Join(sc.Dir, "request.json")
	require.NoError(t, os.WriteFile(reqPath, sc.request(t, canary, c), 0o600), "write the request")
	// The checkout is a repository: loadout git-excludes what it writes there.
	git := exec.Command("git", "init", "-q", sc.Checkout)
	out, err := git.CombinedOutput()
	require.NoError(t, err, "git init %s: %s", sc.Checkout, out)

	res, err := run(context.Background(), renderTimeout, sc.Dir, sc.RenderEnv, nil,
		loadout, "render", "--harness", sc.Harness, "--out", sc.Dir, reqPath, "--format", "json")
	require.NoError(t, err, "loadout render --harness %s", sc.Harness)
	require.Equal(t, 0, res.Exit, "loadout render --harness %s exit status; stderr: %s", sc.Harness, tail(res.Stderr))
	var rr renderResult
	require.NoError(t, json.Unmarshal(res.Stdout, &rr), "decode the render result: %s", res.Stdout)

	assert.Equal(t, sc.Harness, rr.Harness, "render result harness")
	assert.Equal(t, serverIDs, rr.Servers, "render result servers: every server of the request survives the default policy, in order")
	var skills []string
	for _, s := range scenarioSkills {
		skills = append(skills, s.Name)
	}
	assert.Equal(t, skills, rr.Skills, "render result skills, in order")
	require.NotEmpty(t, rr.Files, "render result files: the plan must have written something")
	for _, f := range rr.Files {
		assert.NotEmpty(t, f.Written, "render result file %s:%s must have been written", f.Root, f.Path)
	}

	// A server the plugin cannot render comes back as a warning, never silently lost; the
	// harness's config must hold every other one. The scenario is clean: the only warning
	// tolerated is one for Codex's http server, from the time its renderer rendered stdio only;
	// Codex 0.169.0 reads http servers (docs/FORMATS.md §2.1, conformity case 070) and the
	// codex renderer now renders them, so none is expected.
	dropped := map[string]bool{}
	for _, w := range rr.Warnings {
		if sc.Harness == "codex" && w.Code == "transport_unsupported" && w.Server == "docs" {
			dropped[w.Server] = true
			continue
		}
		assert.Failf(t, "unexpected render warning", "loadout render --harness %s: warning %s on server %q: %s", sc.Harness, w.Code, w.Server, w.Message)
	}
	var configured []string
	for _, id := range rr.Servers {
		if !dropped[id] {
			configured = append(configured, id)
		}
	}
	return rendered{Args: rr.Args, Env: rr.Env, Servers: configured, Prompt: rr.Prompt}
}

// TestRender renders the scenario with the loadout binary for each harness and loads the result
// with the harness's real CLI: same servers and skills as the vetted request, stdio servers
// connected, and the canary's environment exactly the spawn environment the policy allowed.
func TestRender(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	canary, loadout := canaryBinary(t), loadoutBinary(t)
	for _, h := range []string{"claude", "codex", "pi", "gemini", "copilot", "qwen"} {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			sc := newScenario(t, h, c)
			r := renderWithLoadout(t, sc, loadout, canary, c)
			checkHarness(t, sc, r, c)
		})
	}
}
