package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/loader"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// policyBundle is the policy directory dir as an OPA bundle with revision (what `opa build`
// makes of it).
func policyBundle(t *testing.T, dir, revision string) []byte {
	t.Helper()
	b, err := loader.NewFileLoader().WithRegoVersion(ast.RegoV1).AsBundle(dir)
	require.NoError(t, err, "load %s as a bundle", dir)
	b.Manifest.Revision = revision
	var buf bytes.Buffer
	require.NoError(t, bundle.NewWriter(&buf).Write(*b))
	return buf.Bytes()
}

// bundleServer serves one bundle at /bundles/policy.tar.gz with an ETag (none with noETag, as
// python's http.server), swappable; it counts the requests and those that sent If-None-Match
// with the current ETag.
type bundleServer struct {
	body        atomic.Pointer[[]byte]
	etag        atomic.Int64
	noETag      bool
	requests    atomic.Int64
	conditional atomic.Int64
}

func (s *bundleServer) set(b []byte) {
	s.body.Store(&b)
	s.etag.Add(1)
}

func (s *bundleServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/bundles/policy.tar.gz" {
		http.NotFound(w, r)
		return
	}
	s.requests.Add(1)
	etag := fmt.Sprintf(`"%d"`, s.etag.Load())
	if !s.noETag && strings.Contains(r.Header.Get("If-None-Match"), etag) {
		s.conditional.Add(1)
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if !s.noETag {
		w.Header().Set("ETag", etag)
	}
	w.Header().Set("Content-Type", "application/gzip")
	_, _ = w.Write(*s.body.Load())
}

func health(t *testing.T, base string) (status int, revision string) {
	t.Helper()
	resp, err := http.Get(base + "/healthz")
	require.NoError(t, err)
	defer resp.Body.Close()
	var hb struct {
		PolicyRevision string `json:"policyRevision"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&hb))
	return resp.StatusCode, hb.PolicyRevision
}

// waitFor polls cond until it holds; the deadline only bounds a test that is broken.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestServePolicyBundleURL(t *testing.T) {
	pluginArgs(t) // skips with the reason when the plugins are not built
	base1 := copyPolicies(t)
	rev2 := copyPolicies(t)
	require.NoError(t, os.WriteFile(filepath.Join(rev2, "loadout", "corp.rego"), []byte(corpRuleOnly), 0o644))
	broken := copyPolicies(t)
	require.NoError(t, os.WriteFile(filepath.Join(broken, "loadout", "broken.rego"), []byte("package loadout.broken\n\ndeny contains {\"server\": 0, \"code\": no_such_function(1)} if true\n"), 0o644))

	bs := &bundleServer{}
	bs.set(policyBundle(t, base1, "rev-1"))
	hs := httptest.NewServer(bs)
	defer hs.Close()

	base, stderr, stop := startServeCmd(t, "--policy-bundle-url", hs.URL+"/bundles/policy.tar.gz", "--allow-unsigned-bundles",
		"--policy-bundle-min-delay", "1s", "--policy-bundle-max-delay", "2s")
	assert.Contains(t, stderr.String(), "policy bundles are not verified", "accepting unsigned bundles is said")
	_, rev := health(t, base)
	assert.Equal(t, "rev-1", rev, "the first bundle is the policy")

	const body = `{"harness":"claude","mcpServers":[{"id":"outside","transport":"http","url":"https://mcp.example.com/mcp"},{"id":"docs","transport":"http","url":"https://mcp.corp.example/mcp"}]}`
	var lastRevision atomic.Value
	render := func() (int, []string) {
		resp, err := http.Post(base+"/v1/render", "application/json", strings.NewReader(body))
		if err != nil {
			return 0, nil
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var res struct {
			Servers        []string `json:"servers"`
			PolicyRevision string   `json:"policyRevision"`
		}
		_ = json.Unmarshal(raw, &res)
		lastRevision.Store(res.PolicyRevision)
		return resp.StatusCode, res.Servers
	}
	_, servers := render()
	assert.Equal(t, []string{"outside", "docs"}, servers, "rev-1 keeps both")
	assert.Equal(t, "rev-1", lastRevision.Load(), "the render names the revision that decided it")
	waitFor(t, "a poll with If-None-Match", func() bool { return bs.conditional.Load() > 0 })

	// Renders run continuously while the bundle is swapped: none fails.
	var stopLoad atomic.Bool
	var failures atomic.Int64
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for !stopLoad.Load() {
				if code, _ := render(); code != http.StatusOK {
					failures.Add(1)
				}
			}
		})
	}
	bs.set(policyBundle(t, rev2, "rev-2"))
	waitFor(t, "revision rev-2 in /healthz", func() bool { _, r := health(t, base); return r == "rev-2" })
	_, servers = render()
	assert.Equal(t, []string{"docs"}, servers, "rev-2's new rule refuses the outside host")
	assert.Equal(t, "rev-2", lastRevision.Load())

	// A bundle that does not compile is logged; the last good one stays.
	bs.set(policyBundle(t, broken, "rev-3"))
	waitFor(t, "the broken bundle to be refused", func() bool {
		log := stderr.String()
		return strings.Contains(log, "not activated") && strings.Contains(log, "rev-3")
	})
	stopLoad.Store(true)
	wg.Wait()
	code, rev := health(t, base)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "rev-2", rev, "a bundle that does not compile does not replace the last good one")
	assert.Zero(t, failures.Load(), "no render failed while bundles were swapped")

	resp, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Contains(t, string(metrics), `loadout_policy_revision_info{revision="rev-2"} 1`)
	assert.Equal(t, 0, stop())
}

const corpRuleOnly = `package loadout.corp

deny contains {"server": i, "code": "host_not_allowed", "msg": s.id} if {
	some i, s in input.servers
	s.transport == "http"
	not endswith(s.facts.url.host, ".corp.example")
}
`

// serve refuses --policy-bundle-url without a verification key unless unsigned bundles are
// asked for by name.
func TestServeBundleURLNeedsAKey(t *testing.T) {
	code, _, stderr := runCLI(t, "", "serve", "--addr", "127.0.0.1:0", "--policy-bundle-url", "http://127.0.0.1:9/bundles/policy.tar.gz")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--policy-bundle-url needs --verification-key")
}

// A bundle server that sends no ETag (python's http.server) hands out the same bundle on
// every poll: it is activated, and the renderer reloaded, once; a broken one is logged at
// ERROR once.
func TestServeBundleWithoutETagActivatesOnce(t *testing.T) {
	pluginArgs(t) // skips with the reason when the plugins are not built
	bs := &bundleServer{noETag: true}
	bs.set(policyBundle(t, copyPolicies(t), "rev-1"))
	hs := httptest.NewServer(bs)
	defer hs.Close()
	_, stderr, stop := startServeCmd(t, "--policy-bundle-url", hs.URL+"/bundles/policy.tar.gz", "--allow-unsigned-bundles",
		"--policy-bundle-min-delay", "1s", "--policy-bundle-max-delay", "1s")
	waitFor(t, "four polls", func() bool { return bs.requests.Load() >= 4 })
	log := stderr.String()
	assert.Equal(t, 1, strings.Count(log, "policy bundle activated"), "the same revision and bytes are activated once: %s", log)
	assert.NotContains(t, log, "renderer reloaded", "and the renderer is not reloaded")

	broken := copyPolicies(t)
	require.NoError(t, os.WriteFile(filepath.Join(broken, "loadout", "broken.rego"), []byte("package loadout.broken\n\ndeny contains {\"server\": 0, \"code\": no_such_function(1)} if true\n"), 0o644))
	bs.set(policyBundle(t, broken, "rev-2"))
	seen := bs.requests.Load()
	waitFor(t, "four more polls", func() bool { return bs.requests.Load() >= seen+4 })
	assert.Equal(t, 1, strings.Count(stderr.String(), `"level":"ERROR","msg":"policy bundle not activated`), "a broken revision is logged at ERROR once: %s", stderr.String())
	assert.Equal(t, 0, stop())
}
