package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// agentTokenValue is a variable of the harness's own environment: a value that names it must
// never come out as its value.
const agentTokenValue = "agent-env-token-must-not-leave"

// awkwardValues are the "$" forms a harness may expand, each of which must reach the server
// byte for byte: a variable of the harness's environment (HOME, E2E_AGENT_TOKEN) in every
// spelling, loadout's own escape written by hand, a default of an unset variable, "$$", a
// backslash before "$", a trailing "$" and a leading "!" (Pi runs it as a command).
var awkwardValues = []string{
	"${HOME}",
	"${LOADOUT_SPAWN_DOLLAR:-$}{E2E_AGENT_TOKEN}",
	"${E2E_UNSET:-fallback}",
	"$E2E_AGENT_TOKEN",
	"a$$b",
	`\$E2E_AGENT_TOKEN`,
	"end$",
	"!echo ran",
}

// awkwardPath is an http server's url path holding the same forms, each a segment.
const awkwardPath = "/mcp/${HOME}/${LOADOUT_SPAWN_DOLLAR:-$}{E2E_AGENT_TOKEN}/${E2E_UNSET:-fallback}/$E2E_AGENT_TOKEN/a$$b/end$"

// awkwardSecret is a secret holding the same forms, in a header and in an env value.
const awkwardSecret = "s-${HOME}-${LOADOUT_SPAWN_DOLLAR:-$}{E2E_AGENT_TOKEN}-${E2E_UNSET:-fallback}-$E2E_AGENT_TOKEN-a$$b-end$"

// recorder is a loopback http server that records the path and headers of every request to
// an MCP path, byte for byte, and answers 404 (no MCP session is needed to see them).
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []recorded
}

type recorded struct {
	Path   string
	Header http.Header
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasPrefix(req.URL.Path, "/mcp/") {
			r.mu.Lock()
			r.seen = append(r.seen, recorded{Path: req.URL.Path, Header: req.Header.Clone()})
			r.mu.Unlock()
		}
		http.NotFound(w, req)
	}))
	t.Cleanup(r.Close)
	return r
}

// first returns the first request recorded whose headers hold name.
func (r *recorder) first(name string) (recorded, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.seen {
		if _, ok := s.Header[http.CanonicalHeaderKey(name)]; ok {
			return s, true
		}
	}
	return recorded{}, false
}

// TestValuesArriveVerbatim sends every awkward "$" form through every header, env and url
// position of every harness with its real CLI: an http server on a loopback recorder whose url
// path and headers hold them (one secret header), and the canary, whose env holds them (one
// secret). Each must arrive byte for byte: the profile's passes say how often the CLI expands
// each position, and loadout spells each value for exactly that many (docs/FORMATS.md).
func TestValuesArriveVerbatim(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	canary, loadout := canaryBinary(t), loadoutBinary(t)
	for _, h := range []string{"claude", "codex", "pi", "gemini", "copilot", "qwen"} {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			rec := newRecorder(t)
			dir := t.TempDir()
			home := filepath.Join(dir, "home")
			out := filepath.Join(dir, "canary-report.json")
			require.NoError(t, os.MkdirAll(home, 0o755))
			headers, env := map[string]string{"X-Secret": awkwardSecret}, map[string]string{"AWK_SECRET": awkwardSecret}
			for i, v := range awkwardValues {
				headers[fmt.Sprintf("X-Awk-%d", i)] = v
				env[fmt.Sprintf("AWK_%d", i)] = v
			}
			req, err := json.Marshal(map[string]any{
				"harness": h,
				"run":     map[string]any{"ambientAuth": false, "user": "e2e"},
				"mcpServers": []any{
					map[string]any{"id": "recorded", "transport": "http", "url": rec.URL + awkwardPath,
						"headers": headers, "secretKeys": []string{"X-Secret"}},
					map[string]any{"id": "canary", "transport": "stdio", "command": canary, "args": []string{out},
						"env": env, "secretKeys": []string{"AWK_SECRET"}},
				},
			})
			require.NoError(t, err)
			rr := renderWithHome(t, loadout, h, dir, home, c, req)
			loadServers(t, h, c, dir, home, rr)

			got, ok := rec.first("X-Secret")
			require.True(t, ok, "%s sent no request with the rendered headers to the recorder", h)
			assert.Equal(t, awkwardPath, got.Path, "%s: the url path as sent", h)
			assert.Equal(t, []string{awkwardSecret}, got.Header["X-Secret"], "%s: the secret header as sent", h)
			for i, v := range awkwardValues {
				assert.Equal(t, []string{v}, got.Header[fmt.Sprintf("X-Awk-%d", i)], "%s: header X-Awk-%d (%q) as sent", h, i, v)
			}

			raw, err := os.ReadFile(out)
			require.NoError(t, err, "%s: the canary must have started", h)
			var rep canaryReport
			require.NoError(t, json.Unmarshal(raw, &rep))
			gotEnv := map[string]string{}
			for _, kv := range rep.Env {
				k, v, _ := strings.Cut(kv, "=")
				gotEnv[k] = v
			}
			for name, v := range env {
				assert.Equal(t, v, gotEnv[name], "%s: canary env %s (%q)", h, name, v)
			}
			for _, kv := range rep.Env {
				assert.NotContains(t, kv, agentTokenValue, "%s: canary env holds the harness's own variable", h)
			}
		})
	}
}

// renderWithHome renders req with `loadout render --harness H --out DIR --format json`, with PATH (node
// first, for the stdio servers) and HOME as the host environment, and returns the result.
func renderWithHome(t *testing.T, loadout, harness, dir, home string, c clis, req []byte) renderResult {
	t.Helper()
	reqPath := filepath.Join(dir, "request.json")
	require.NoError(t, os.WriteFile(reqPath, req, 0o600))
	checkout := filepath.Join(dir, "checkout")
	require.NoError(t, os.MkdirAll(checkout, 0o755))
	renderEnv := []string{"PATH=" + c.NodeBin + ":/usr/bin:/bin", "HOME=" + home}
	res, err := run(context.Background(), renderTimeout, dir, renderEnv, nil,
		loadout, "render", "--harness", harness, "--out", dir, reqPath, "--format", "json")
	require.NoError(t, err, "loadout render")
	require.Equal(t, 0, res.Exit, "loadout render; stderr: %s", tail(res.Stderr))
	var rr renderResult
	require.NoError(t, json.Unmarshal(res.Stdout, &rr), "decode the render result: %s", res.Stdout)
	return rr
}

// loadServers starts the harness's real CLI on a render in dir (checkout dir/checkout) so
// that it connects every configured server, and returns once it reported them.
func loadServers(t *testing.T, h string, c clis, dir, home string, rr renderResult) {
	t.Helper()
	checkout := filepath.Join(dir, "checkout")
	extra := []string{"E2E_AGENT_TOKEN=" + agentTokenValue}
	switch h {
	case "claude":
		env := harnessEnv(c, home, rr.Env, extra...)
		argv := append([]string{c.Claude, "-p"}, rr.Args...)
		argv = append(argv, "--output-format", "stream-json", "--verbose", "--", "Reply with OK.")
		_, err := firstLine(context.Background(), claudeTimeout, checkout, env, func(b []byte) bool {
			return strings.Contains(string(b), `"subtype":"init"`)
		}, argv...)
		require.NoError(t, err, "claude: want the init line")
	case "codex":
		env := harnessEnv(c, home, rr.Env, extra...)
		cl, err := startRPC(context.Background(), codexTimeout, checkout, env, c.Codex, "app-server")
		require.NoError(t, err, "start codex app-server")
		defer cl.Close()
		_, err = cl.call(1, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize",
			"params": map[string]any{"clientInfo": map[string]any{"name": "loadout-e2e", "version": "1"}}})
		require.NoError(t, err, "codex initialize")
		require.NoError(t, cl.send(map[string]any{"jsonrpc": "2.0", "method": "initialized"}))
		_, err = cl.call(2, map[string]any{"jsonrpc": "2.0", "id": 2, "method": "mcpServerStatus/list",
			"params": map[string]any{"detail": "toolsAndAuthOnly"}})
		require.NoError(t, err, "codex mcpServerStatus/list")
	case "pi":
		env := harnessEnv(c, home, rr.Env, extra...)
		res, err := run(context.Background(), piTimeout, checkout, env, nil, c.Pi, "mcp", "list", "--json")
		require.NoError(t, err, "pi mcp list --json")
		require.NotEmpty(t, res.Stdout, "pi mcp list --json (stderr %s)", tail(res.Stderr))
	case "gemini":
		env := trustFolder(harnessEnv(c, home, rr.Env, append(extra, "GEMINI_API_KEY=dummy")...))
		res, err := run(context.Background(), geminiTimeout, checkout, env, nil, c.Gemini, "mcp", "list")
		require.NoError(t, err, "gemini mcp list")
		require.Equal(t, 0, res.Exit, "gemini mcp list (stderr %s)", tail(res.Stderr))
	case "copilot":
		port := closedPort(t)
		env := harnessEnv(c, home, rr.Env, append(extra, "COPILOT_OFFLINE=true", "COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:"+port,
			"COPILOT_MODEL=gpt-4o", "COPILOT_AUTO_UPDATE=false")...)
		argv := append([]string{c.Copilot}, rr.Args...)
		argv = append(argv, "-p", "Reply with OK.", "--output-format", "json")
		_, err := firstLine(context.Background(), copilotTimeout, checkout, env, func(b []byte) bool {
			var ev copilotEvent
			return json.Unmarshal(b, &ev) == nil && ev.Type == "session.mcp_servers_loaded"
		}, argv...)
		require.NoError(t, err, "copilot -p: want session.mcp_servers_loaded")
	case "qwen":
		env := qwenEnv(c, home, rr.Env, newModelRecorder(t).URL+"/v1", extra...)
		qwenSession(t, c, checkout, env, rr.Args, "Reply with OK.")
	default:
		t.Fatalf("unknown harness %q", h)
	}
}

// wideHeaderValue holds characters above U+00FF; latinHeaderValue only Latin-1 ones.
const (
	wideHeaderValue  = "5 € 東京"
	latinHeaderValue = "café"
)

// TestHeaderValueRepertoire measures, with every real CLI, whether a header value with a
// character above U+00FF reaches a loopback recorder, and holds the profile's headerValues to
// it: where loadout warns header_unsendable (naming the server and the header) the CLI sent no
// request with it, and where it does not warn the value arrived as UTF-8, byte for byte.
func TestHeaderValueRepertoire(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	loadout := loadoutBinary(t)
	for _, h := range []string{"claude", "codex", "pi", "gemini", "copilot", "qwen"} {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			rec := newRecorder(t)
			dir := t.TempDir()
			home := filepath.Join(dir, "home")
			require.NoError(t, os.MkdirAll(home, 0o755))
			req, err := json.Marshal(map[string]any{
				"harness": h,
				"run":     map[string]any{"ambientAuth": false, "user": "e2e"},
				"mcpServers": []any{map[string]any{"id": "wide", "transport": "http", "url": rec.URL + "/mcp/wide",
					"headers": map[string]string{"X-Latin": latinHeaderValue, "X-Wide": wideHeaderValue}}},
			})
			require.NoError(t, err)
			rr := renderWithHome(t, loadout, h, dir, home, c, req)
			var warned []string
			for _, w := range rr.Warnings {
				if w.Code == "header_unsendable" {
					warned = append(warned, w.Server+"/"+w.Message)
				}
			}
			loadServers(t, h, c, dir, home, rr)
			got, sent := rec.first("X-Wide")
			if len(warned) > 0 {
				require.Len(t, warned, 1, "%s: one warning, for X-Wide", h)
				assert.Contains(t, warned[0], `wide/header "X-Wide"`, "%s: the warning names the server and the header", h)
				assert.False(t, sent, "%s: loadout warned that the CLI cannot send X-Wide, yet it arrived as %q", h, got.Header["X-Wide"])
				return
			}
			require.True(t, sent, "%s: loadout did not warn, yet no request with X-Wide arrived (the profile's headerValues must be latin1)", h)
			assert.Equal(t, []string{wideHeaderValue}, got.Header["X-Wide"], "%s: X-Wide as sent (UTF-8)", h)
			assert.Equal(t, []string{latinHeaderValue}, got.Header["X-Latin"], "%s: X-Latin as sent (UTF-8)", h)
		})
	}
}
