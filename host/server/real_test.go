package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/engine/codecache"
	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/host/registry"
	"github.com/loadout-dev/loadout/internal/testplugins"
	"github.com/loadout-dev/loadout/plugins"
)

// testCache is where the real-host tests keep compiled plugin code across loads and test runs
// (the CLI's default is the same kind of cache, its key beside the CLI's); nil when there is no
// user cache or config directory.
func testCache(engineName string) *codecache.Cache {
	base, err := os.UserCacheDir()
	if err != nil {
		return nil
	}
	config, err := os.UserConfigDir()
	if err != nil {
		return nil
	}
	c, err := codecache.Open(filepath.Join(base, "loadout", "test-compiled", engineName), filepath.Join(config, "loadout", "test-compile-cache.key"), nil)
	if err != nil {
		return nil
	}
	return c
}

// realPlugins are the built-in harness plugins the real-host tests load.
var realPlugins = []string{"claude", "codex", "pi"}

var (
	realWasmOnce sync.Once
	realWasm     map[string][]byte
)

// realLoader returns a Loader that builds a real Host like the CLI does: a fresh engine
// (wazero, or wasmtime under the wasmtime tag), the plugins built from plugins/ and pinned,
// and the embedded policies. The Host owns the engine and plugins.
func realLoader(tb testing.TB) Loader {
	tb.Helper()
	realWasmOnce.Do(func() {
		realWasm = map[string][]byte{}
		for _, name := range realPlugins {
			realWasm[name] = testplugins.Read(tb, name)
		}
	})
	return func(ctx context.Context) (_ Renderer, err error) {
		eng, err := newTestEngine(ctx)
		if err != nil {
			return nil, err
		}
		var loaded []*registry.Plugin
		closeAll := func(ctx context.Context) error {
			var errs []error
			for _, p := range loaded {
				errs = append(errs, p.Close(ctx))
			}
			return errors.Join(append(errs, eng.Close(ctx))...)
		}
		defer func() {
			if err != nil {
				_ = closeAll(ctx)
			}
		}()
		cfg := host.Config{OnClose: closeAll}
		profiles, err := plan.LoadProfiles(plugins.Profiles)
		if err != nil {
			return nil, err
		}
		for _, name := range realPlugins {
			wasm := realWasm[name]
			p, err := registry.Load(ctx, eng, registry.Artifact{Name: name + ".wasm", Wasm: wasm, SHA256: registry.Digest(wasm), Harness: name})
			if err != nil {
				return nil, err
			}
			loaded = append(loaded, p)
			m := p.Manifest()
			cfg.Plugins = append(cfg.Plugins, host.LoadedPlugin{Plugin: p, Info: host.PluginInfo{
				Name: m.Name, Version: m.Version, ABIVersion: m.ABIVersion, Harness: m.Harness, SHA256: p.Digest(),
				Transports: m.Transports, NativeSkills: m.NativeSkills, Roots: m.Roots, Source: name + ".wasm",
			}, Profile: profiles[m.Harness]})
		}
		return host.New(ctx, cfg)
	}
}

// realRequest is a typical request: an http server with a secret header and a tool list, an
// http server with a stored token, a plain-http remote server the policy drops, and a skill.
func realRequest(harness string) string {
	h := ""
	if harness != "" {
		h = `"harness":"` + harness + `",`
	}
	return `{` + h + `"run":{"ambientAuth":false,"user":"alice"},` +
		`"skills":[{"name":"repo-review","description":"Review the repository","instructions":"Read the diff and report.",` +
		`"resources":[{"relPath":"templates/report.md","content":"# Report"}]}],` +
		`"mcpServers":[` +
		`{"id":"fs","transport":"http","url":"https://fs.example.com/mcp"},` +
		`{"id":"docs","transport":"http","url":"https://mcp.example.com/mcp","headers":{"Authorization":"Bearer ` + testSecret + `"},"secretKeys":["Authorization"],"allowedTools":["search","fetch"]},` +
		`{"id":"plain","transport":"http","url":"http://mcp.example.com/mcp"}],"tokens":{"fs":"` + testSecret + `-2"}}`
}

func TestRealHost(t *testing.T) {
	s, logs := newTestServer(t, Config{}, realLoader(t))
	defer s.Close()
	h := s.Handler()
	tests := []struct {
		name        string
		target      string
		body        string
		wantStatus  int
		wantCode    string
		wantHarness string
	}{
		{name: "claude", target: "/v1/render", body: realRequest("claude"), wantStatus: 200, wantHarness: "claude"},
		{name: "codex", target: "/v1/render", body: realRequest("codex"), wantStatus: 200, wantHarness: "codex"},
		{name: "pi by query", target: "/v1/render?harness=pi", body: realRequest(""), wantStatus: 200, wantHarness: "pi"},
		{name: "query overrides body", target: "/v1/render?harness=codex", body: realRequest("claude"), wantStatus: 200, wantHarness: "codex"},
		{name: "no harness", target: "/v1/render", body: realRequest(""), wantStatus: 400, wantCode: OutcomeBadRequest},
		{name: "harness without plugin", target: "/v1/render", body: realRequest("zed"), wantStatus: 400, wantCode: OutcomeBadRequest},
		{name: "not JSON", target: "/v1/render", body: `{"harness":"claude",`, wantStatus: 400, wantCode: OutcomeBadRequest},
		{name: "trailing data", target: "/v1/render", body: `{"harness":"claude"} {}`, wantStatus: 400, wantCode: OutcomeBadRequest},
		{name: "duplicate member", target: "/v1/render", body: `{"harness":"claude","harness":"codex"}`, wantStatus: 422, wantCode: OutcomeRejected},
		{name: "folded member", target: "/v1/render", body: `{"harness":"claude","mcpServers":[{"id":"x","command":"/bin/a","Command":"/bin/evil"}]}`, wantStatus: 422, wantCode: OutcomeRejected},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(h, http.MethodPost, tc.target, tc.body)
			require.Equal(t, tc.wantStatus, rec.Code, "POST %s: status (body %s)", tc.target, rec.Body.String())
			assert.NotContains(t, rec.Body.String(), testSecret, "POST %s: answer echoes a secret", tc.target)
			if tc.wantCode != "" {
				var eb ErrorBody
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &eb), "POST %s: decode %s", tc.target, rec.Body.String())
				assert.Equal(t, tc.wantCode, eb.Error.Code, "POST %s: error code", tc.target)
				return
			}
			var res wireResult
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &res), "POST %s: decode %s", tc.target, rec.Body.String())
			assert.Equal(t, tc.wantHarness, res.Harness, "POST %s: rendered harness", tc.target)
			assert.True(t, res.DryRun, "POST %s: a dry run without Roots", tc.target)
			assert.Equal(t, []string{"fs", "docs"}, res.Servers, "POST %s: surviving servers", tc.target)
			assert.NotEmpty(t, res.Files, "POST %s: planned files", tc.target)
			var codes []string
			for _, d := range res.Dropped {
				codes = append(codes, d.Code)
			}
			assert.Contains(t, codes, "url_not_allowed", "POST %s: the plain-http remote server is dropped", tc.target)
		})
	}
	assert.Equal(t, float64(4), counter(t, s.metrics.denials, "url_not_allowed"), "loadout_policy_denials_total{reason=url_not_allowed} after four renders")
	assert.NotContains(t, logs.String(), testSecret, "logs echo a secret")

	require.NoError(t, s.Reload(context.Background()), "Reload a real host")
	rec := do(h, http.MethodPost, "/v1/render", realRequest("claude"))
	assert.Equal(t, http.StatusOK, rec.Code, "POST /v1/render after a reload: %s", rec.Body.String())
	var pb PluginsBody
	require.NoError(t, json.Unmarshal(do(h, http.MethodGet, "/v1/plugins", "").Body.Bytes(), &pb), "decode plugins")
	assert.Equal(t, uint64(2), pb.Generation, "generation after one reload")
	var harnesses []string
	for _, p := range pb.Plugins {
		harnesses = append(harnesses, p.Harness)
	}
	assert.Equal(t, realPlugins, harnesses, "harnesses of the loaded plugins")
}

func TestRealHostRoots(t *testing.T) {
	roots := t.TempDir()
	s, _ := newTestServer(t, Config{Roots: roots}, realLoader(t))
	defer s.Close()
	rec := do(s.Handler(), http.MethodPost, "/v1/render", realRequest("claude"))
	require.Equal(t, http.StatusOK, rec.Code, "POST /v1/render with Roots: %s", rec.Body.String())
	var res wireResult
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &res), "decode %s", rec.Body.String())
	assert.False(t, res.DryRun, "a render with Roots writes")
	require.NotEmpty(t, res.Files, "files written")
	dir := filepath.Join(roots, rec.Header().Get("X-Request-Id"))
	for _, f := range res.Files {
		assert.True(t, strings.HasPrefix(f.Written, dir+string(filepath.Separator)), "file %s:%s written at %s, want under %s", f.Root, f.Path, f.Written, dir)
	}
}
