package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// envVar is one ordered environment entry; it is also the shape of "env" in loadout's render
// result.
type envVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// skillDef is one skill of the scenario's request.
type skillDef struct {
	Name, Description, Instructions string
	Resources                       []resourceDef
}

type resourceDef struct{ RelPath, Content string }

// The scenario's literal secrets. Each must reach the canary's environment and appear on no
// command line.
const (
	// canaryTokenValue starts with "!" and holds "$" and "${HOME}": Pi would run a leading "!" as
	// a shell command and expand "$ecret", and Claude would expand "${HOME}", unless the host
	// spells the secret for the harness when it substitutes it.
	canaryTokenValue = "!e2e-canary-$ecret-${HOME}-7f3a9c"
	// geminiTokenSuffix adds a backslash, both quotes and a backslash before "$" for Gemini
	// CLI, whose second expansion pass (dotenv-expand) reads a backslash before "$" as an escape,
	// for Copilot CLI, which would expand the "$x" after the backslash, and for Qwen Code, whose
	// settings files (which a run does not use) would.
	geminiTokenSuffix = `-\"'\$x`
	runTokenValue     = "e2e-run-token-51be02"
	docsAuthValue     = "Bearer e2e-docs-secret-c41d"
	// canaryModeValue holds "${HOME}", "$x" and a leading-"!"-free "!" so that a harness that
	// expands variables in a server's env (Claude, Pi) would corrupt it unless the renderer
	// protects it.
	canaryModeValue = "e2e ${HOME} $x !bang"
)

// scenarioSkills are the two skills of the request, with resources; testdata/fixtures/skills
// holds the same skills as a renderer writes them.
var scenarioSkills = []skillDef{
	{
		Name:         "repo-review",
		Description:  "Reviews the repository layout and reports problems. Use when asked to review code structure.",
		Instructions: "Walk the tree, then fill templates/report.md.\n",
		Resources: []resourceDef{
			{RelPath: "templates/report.md", Content: "# Review report\n\n- Layout:\n- Problems:\n"},
		},
	},
	{
		Name:         "release-notes",
		Description:  "Drafts release notes from the commits since the last tag. Use when asked for release notes.",
		Instructions: "Run scripts/collect.sh, then follow checklist.md.\n",
		Resources: []resourceDef{
			{RelPath: "scripts/collect.sh", Content: "#!/bin/sh\ngit log --oneline \"$(git describe --tags --abbrev=0)..HEAD\"\n"},
			{RelPath: "checklist.md", Content: "1. Group by area.\n2. Name breaking changes first.\n"},
		},
	},
}

// serverIDs are the request's servers, in order; stdioIDs are the ones that must connect.
var (
	serverIDs = []string{"canary", "everything", "docs"}
	stdioIDs  = []string{"canary", "everything"}
)

// hostAllowKeys and hostAllowPrefixes are docs/SECURITY.md's spawn-environment allowlist of host
// variables (exact case).
var (
	hostAllowKeys     = []string{"PATH", "HOME", "TMPDIR", "LANG", "TZ", "TERM", "USER", "LOGNAME", "SHELL", "NPM_CONFIG_CACHE", "SSH_AUTH_SOCK"}
	hostAllowPrefixes = []string{"LC_"}
)

// scenario is one realistic request for one harness, its roots, and what the checks expect.
type scenario struct {
	Harness                             string
	Dir                                 string // parent of the roots (loadout render --out DIR)
	Config, Run, Checkout, Home, Render string
	CanaryOut                           string
	ServerCwd                           string // the canary's cwd (a directory of its own)
	Port                                string // the closed loopback port of the http server
	// RenderEnv is loadout's whole environment at render time: the host environment the policy
	// filters. It holds host secrets and loader variables that must not reach a server.
	RenderEnv []string
	// SpawnEnv is the canary's expected environment (ordered).
	SpawnEnv []envVar
	Secrets  []string
	// CanaryToken is the canary's secret CANARY_TOKEN.
	CanaryToken string
}

// newScenario lays out the directories of one harness's run and computes the expectations.
func newScenario(t *testing.T, harness string, c clis) *scenario {
	t.Helper()
	dir := t.TempDir()
	sc := &scenario{
		Harness:  harness,
		Dir:      dir,
		Config:   filepath.Join(dir, "config"),
		Run:      filepath.Join(dir, "run"),
		Checkout: filepath.Join(dir, "checkout"),
		Home:     filepath.Join(dir, "home"),
		Render:   filepath.Join(dir, "render-home"),
		Port:     closedPort(t),
		Secrets:  []string{canaryTokenValue, runTokenValue, docsAuthValue, strings.TrimPrefix(docsAuthValue, "Bearer ")},
	}
	sc.CanaryToken = canaryTokenValue
	if harness == "gemini" || harness == "copilot" || harness == "qwen" {
		sc.CanaryToken += geminiTokenSuffix
		sc.Secrets[0] = sc.CanaryToken
	}
	sc.CanaryOut = filepath.Join(sc.Run, "canary-report.json")
	sc.ServerCwd = filepath.Join(dir, "canary cwd")
	for _, d := range []string{sc.Run, sc.Checkout, sc.Home, sc.Render, sc.ServerCwd} {
		require.NoError(t, os.MkdirAll(d, 0o755), "mkdir %s", d)
	}
	sc.RenderEnv = []string{
		"PATH=" + c.NodeBin + ":/usr/local/bin:/usr/bin:/bin",
		"HOME=" + sc.Render,
		"LANG=C.UTF-8",
		"LC_ALL=C.UTF-8",
		"TZ=UTC",
		"USER=e2e",
		// Host variables the policy must keep away from every server.
		"ANTHROPIC_API_KEY=host-api-key-must-not-leak",
		"GITHUB_TOKEN=host-github-token-must-not-leak",
		"NODE_OPTIONS=--require=/nonexistent/e2e-preload.js",
		"E2E_RENDER_ONLY=render-only-marker",
	}
	for _, kv := range sc.RenderEnv {
		name, value, _ := strings.Cut(kv, "=")
		if hostAllowed(name) {
			sc.SpawnEnv = append(sc.SpawnEnv, envVar{name, value})
		}
	}
	sc.SpawnEnv = append(sc.SpawnEnv,
		envVar{"CANARY_MODE", canaryModeValue},
		envVar{"CANARY_TOKEN", sc.CanaryToken},
		envVar{"MCP_ACCESS_TOKEN", runTokenValue},
	)
	return sc
}

func hostAllowed(name string) bool {
	for _, k := range hostAllowKeys {
		if name == k {
			return true
		}
	}
	for _, p := range hostAllowPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// request returns the scenario's capability request as JSON: the two skills, the canary and
// mcp-server-everything over stdio, an http server on a closed loopback port, allowedTools on
// two servers, secrets in env and headers, and a run token for the canary.
func (sc *scenario) request(t *testing.T, canary string, c clis) []byte {
	t.Helper()
	type res struct {
		RelPath string `json:"relPath"`
		Content string `json:"content"`
	}
	type skill struct {
		Name         string `json:"name"`
		Description  string `json:"description"`
		Instructions string `json:"instructions"`
		Resources    []res  `json:"resources"`
	}
	var skills []skill
	for _, s := range scenarioSkills {
		sk := skill{Name: s.Name, Description: s.Description, Instructions: s.Instructions}
		for _, r := range s.Resources {
			sk.Resources = append(sk.Resources, res{r.RelPath, r.Content})
		}
		skills = append(skills, sk)
	}
	req := map[string]any{
		"harness": sc.Harness,
		"run":     map[string]any{"ambientAuth": false, "user": "e2e"},
		"skills":  skills,
		"mcpServers": []any{
			map[string]any{
				"id": "canary", "transport": "stdio", "command": canary, "args": []string{sc.CanaryOut},
				// env is an object; encoding/json sorts map keys, so CANARY_MODE precedes
				// CANARY_TOKEN as in SpawnEnv.
				"env":          map[string]string{"CANARY_MODE": canaryModeValue, "CANARY_TOKEN": sc.CanaryToken},
				"secretKeys":   []string{"CANARY_TOKEN"},
				"allowedTools": []string{"canary_ping"},
				"description":  "Reports the environment it was started with.",
				"cwd":          sc.ServerCwd,
			},
			map[string]any{
				"id": "everything", "transport": "stdio", "command": c.Everything,
				"description": "Reference MCP test server.",
			},
			map[string]any{
				"id": "docs", "transport": "http", "url": "http://127.0.0.1:" + sc.Port + "/mcp",
				"headers":      map[string]string{"Authorization": docsAuthValue},
				"secretKeys":   []string{"Authorization"},
				"allowedTools": []string{"search"},
			},
		},
		"tokens": map[string]string{"canary": runTokenValue},
	}
	b, err := json.MarshalIndent(req, "", "  ")
	require.NoError(t, err, "encode the scenario request")
	return b
}

// rendered is what the checks need from a render: the harness's args and env, the server ids
// the harness's config must hold, and the prompt the host wrote.
type rendered struct {
	Args    []string
	Env     []envVar
	Servers []string
	Prompt  string
}
