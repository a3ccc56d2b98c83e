package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/internal/testenv"
)

// chromium is the Debian package's browser (scripts/deps.sh installs it).
func chromium(t *testing.T) string {
	t.Helper()
	const path = "/usr/bin/chromium"
	testenv.File(t, "chromium", testenv.InstallDeps+" (apt-get install chromium chromium-driver)", path)
	return path
}

// attackerPage fires at serve every POST a web page can send: simple requests (text/plain,
// form, no type, a Blob, sendBeacon, no-cors JSON whose type the browser drops) and a CORS
// application/json one (its preflight gets no CORS answer), at the render route (a render with
// a minted token, written under --roots) and the token routes; then it reports to its own
// origin that it is done.
const attackerPage = `<!doctype html><html><body><pre id="out">running</pre><script>
const serve = %q;
const render = JSON.stringify({harness: "claude", run: {id: "run-browser"},
  mcpServers: [{id: "docs", transport: "http", url: "https://mcp.example.com/mcp", token: {mint: true, ttl: "1h"}}]});
const attempts = [
  () => fetch(serve + "/v1/render", {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: render}),
  () => fetch(serve + "/v1/render", {method: "POST", mode: "no-cors", headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: render}),
  () => fetch(serve + "/v1/render", {method: "POST", mode: "no-cors", body: new Blob([render])}),
  () => fetch(serve + "/v1/render", {method: "POST", mode: "no-cors", headers: {"Content-Type": "application/json"}, body: render}),
  () => fetch(serve + "/v1/render", {method: "POST", headers: {"Content-Type": "application/json"}, body: render}),
  () => fetch(serve + "/v1/tokens/resolve", {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: JSON.stringify({token: "lrt_x"})}),
  () => fetch(serve + "/v1/runs/run-browser", {method: "DELETE", mode: "no-cors"}),
  () => Promise.resolve(navigator.sendBeacon(serve + "/v1/render", render)),
];
(async () => {
  const results = [];
  for (const a of attempts) {
    try { const r = await a(); results.push(r && r.type !== undefined ? r.type + ":" + r.status : String(r)); }
    catch (e) { results.push("error:" + e.name); }
  }
  await new Promise(r => setTimeout(r, 500)); // let the beacon go out
  document.getElementById("out").textContent = "done " + results.join(" ");
  await fetch("/done?" + encodeURIComponent(results.join(" ")));
})();
</script></body></html>`

// browserRun serves attackerPage on another loopback origin (localhost, while serve is on
// 127.0.0.1), lets the real headless Chromium load it, and returns what the page reported.
// With allow, serve is started with --allowed-origin naming the page's origin. It returns
// serve's log and the entries written under --roots.
func browserRun(t *testing.T, browser string, allow bool) (string, []os.DirEntry) {
	t.Helper()
	var mu sync.Mutex
	var base string
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			mu.Lock()
			target := base
			mu.Unlock()
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, attackerPage, target)
		case "/done":
		default:
			http.NotFound(w, r)
		}
	}))
	defer page.Close()
	pageURL := strings.Replace(page.URL, "127.0.0.1", "localhost", 1)

	roots := t.TempDir()
	args := []string{"--roots", roots}
	if allow {
		args = append(args, "--allowed-origin", pageURL)
	}
	b, stderr, stop := startServeCmd(t, append(args, pluginArgs(t)...)...)
	mu.Lock()
	base = b
	mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=15000", "--dump-dom", pageURL+"/")
	out, err := cmd.Output()
	require.NoError(t, err, "chromium: %s", out)
	require.Contains(t, string(out), "done ", "the page ran every attempt: %s", out)
	require.Equal(t, 0, stop())
	entries, err := os.ReadDir(roots)
	require.NoError(t, err)
	return stderr.String(), entries
}

// A page a browser loads from another origin cannot make a loopback serve render, write files
// under --roots or mint or revoke tokens, with the real headless Chromium; serve logs each
// refusal, which shows the browser did send the requests. The same page on an origin
// --allowed-origin names does render (its CORS JSON request), which shows the test would see
// a render.
func TestBrowserPageCannotTriggerServe(t *testing.T) {
	browser := chromium(t)

	log, written := browserRun(t, browser, false)
	assert.GreaterOrEqual(t, strings.Count(log, "request refused: cross-origin"), 6, "serve refused the browser's requests: %s", log)
	assert.NotContains(t, log, `"msg":"render"`, "no render ran: %s", log)
	assert.Empty(t, written, "nothing was written under --roots")

	log, written = browserRun(t, browser, true)
	assert.Contains(t, log, `"msg":"render"`, "the allowed origin's JSON request rendered: %s", log)
	assert.Len(t, written, 1, "one render (the CORS JSON one) wrote under --roots; the simple requests were refused")
	assert.Contains(t, log, "request refused: not application/json", "an allowed origin still sends JSON only")
}
