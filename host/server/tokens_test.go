package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/spec"
	"github.com/loadout-dev/loadout/host/tokens"
	"github.com/loadout-dev/loadout/internal/testredis"
)

// tokenPattern finds run tokens in written files.
var tokenPattern = regexp.MustCompile(`lrt_[A-Za-z0-9_-]{43}`)

// mintRequest asks for run tokens for a stdio server, an http server and a plain-http remote
// server the policy drops.
func mintRequest(harness, run string) string {
	return `{"harness":"` + harness + `","run":{"id":"` + run + `","user":"alice"},"mcpServers":[` +
		`{"id":"fs","command":"/usr/bin/fs-mcp","token":{"mint":true,"ttl":"2h"}},` +
		`{"id":"docs","transport":"http","url":"https://mcp.example.com/mcp","token":{"mint":true}},` +
		`{"id":"plain","transport":"http","url":"http://mcp.example.com/mcp","token":{"mint":true}}]}`
}

// redisService is a token service over the Redis at addr: one per replica.
func redisService(t *testing.T, addr string) *tokens.Service {
	t.Helper()
	st, err := tokens.OpenRedis(context.Background(), "redis://"+addr+"/0", tokens.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	svc, err := tokens.New(tokens.Config{Store: st})
	require.NoError(t, err)
	return svc
}

func resolve(h http.Handler, token, server string) *httptest.ResponseRecorder {
	b, _ := json.Marshal(ResolveRequest{Token: token, Server: server})
	return do(h, http.MethodPost, "/v1/tokens/resolve", string(b))
}

// renderBody is a client's view of a render answer with tokens.
type renderBody struct {
	wireResult
	Tokens []TokenInfo `json:"tokens"`
}

// TestMintReplicas renders on replica A (a real host writing files) and resolves and revokes
// on replica B; the two share one Redis and nothing else.
func TestMintReplicas(t *testing.T) {
	addr := testredis.Start(t)
	roots := t.TempDir()
	a, logsA := newTestServer(t, Config{Roots: roots, Tokens: redisService(t, addr)}, realLoader(t))
	defer a.Close()
	b, logsB := newTestServer(t, Config{Tokens: redisService(t, addr)}, fixedLoader(newFake("b")))
	defer b.Close()

	rec := do(a.Handler(), http.MethodPost, "/v1/render", mintRequest("claude", "run-7"))
	require.Equal(t, http.StatusOK, rec.Code, "render: %s", rec.Body.String())
	var res renderBody
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &res))
	assert.Equal(t, []string{"fs", "docs"}, res.Servers)
	require.Len(t, res.Tokens, 2, "a token for each kept server, none for the dropped one")
	for _, ti := range res.Tokens {
		assert.Equal(t, "run-7", ti.Run)
		assert.Equal(t, "alice", ti.User)
	}
	assert.Equal(t, "fs", res.Tokens[0].Server)
	assert.Equal(t, "docs", res.Tokens[1].Server)
	assert.WithinDuration(t, time.Now().Add(2*time.Hour), res.Tokens[0].ExpiresAt, time.Minute)
	assert.WithinDuration(t, time.Now().Add(tokens.DefaultDefaultTTL), res.Tokens[1].ExpiresAt, time.Minute)
	assert.Empty(t, tokenPattern.FindString(rec.Body.String()), "the answer holds a token")

	// The tokens are in the written files, where each server's credential goes.
	found := map[string]string{} // token -> where
	for _, f := range res.Files {
		data, err := os.ReadFile(f.Written)
		require.NoError(t, err)
		for _, tok := range tokenPattern.FindAllString(string(data), -1) {
			found[tok] = f.Root + ":" + f.Path
			assert.True(t, f.Secret, "token written to %s:%s, which is not a secret file", f.Root, f.Path)
			if strings.Contains(string(data), "Bearer "+tok) {
				found[tok] += " (bearer)"
			}
			// Claude spawns a stdio server through env -i with MCP_ACCESS_TOKEN set from a
			// spawn variable that holds the token (docs/SPAWN-ENV.md).
			if strings.Contains(string(data), "MCP_ACCESS_TOKEN=") && !strings.Contains(string(data), "Bearer "+tok) {
				found[tok] += " (env)"
			}
		}
	}
	require.Len(t, found, 2, "tokens in the written files: %v", found)

	servers := map[string]string{}
	for tok, where := range found {
		r := resolve(b.Handler(), tok, "")
		require.Equal(t, http.StatusOK, r.Code, "resolve on B: %s", r.Body.String())
		var rb ResolveBody
		require.NoError(t, json.Unmarshal(r.Body.Bytes(), &rb))
		assert.Equal(t, "run-7", rb.Run)
		assert.Equal(t, "alice", rb.User)
		servers[rb.Server] = where
		assert.Equal(t, http.StatusNotFound, resolve(b.Handler(), tok, "someone-else").Code, "another server's token")
		if rb.Server == "docs" {
			assert.Contains(t, where, "(bearer)", "the http server's token is an Authorization bearer")
		} else {
			assert.Contains(t, where, "(env)", "the stdio server's token is its MCP_ACCESS_TOKEN")
		}
	}
	assert.Len(t, servers, 2, "each token is bound to its own server: %v", servers)

	r := do(b.Handler(), http.MethodDelete, "/v1/runs/run-7", "")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.JSONEq(t, `{"run":"run-7","revoked":2}`, r.Body.String())
	for tok := range found {
		assert.Equal(t, http.StatusNotFound, resolve(a.Handler(), tok, "").Code, "a revoked token on A")
	}
	// The revoked run renders no more tokens, on any replica.
	r = do(a.Handler(), http.MethodPost, "/v1/render", mintRequest("claude", "run-7"))
	assert.Equal(t, http.StatusUnprocessableEntity, r.Code, r.Body.String())
	assert.Contains(t, r.Body.String(), spec.CodeRunRevoked)

	assert.Equal(t, float64(2), metricValue(t, a.metrics.minted))
	assert.Equal(t, float64(2), counter(t, b.metrics.resolves, "ok"))
	assert.Equal(t, float64(2), counter(t, b.metrics.resolves, "not_found"))
	assert.Equal(t, float64(1), counter(t, b.metrics.revokes, "ok"))
	assert.Equal(t, float64(2), metricValue(t, b.metrics.revoked))
	for tok := range found {
		assert.NotContains(t, logsA.String(), tok, "A logs a token")
		assert.NotContains(t, logsB.String(), tok, "B logs a token")
	}
}

// A mint that cannot be honoured refuses the render, naming the field.
func TestMintRefusals(t *testing.T) {
	s, _ := newTestServer(t, Config{}, realLoader(t))
	defer s.Close()
	tests := []struct{ name, body, want string }{
		{"no run id", `{"harness":"claude","mcpServers":[{"id":"fs","command":"/usr/bin/fs-mcp","token":{"mint":true}}]}`,
			"request refused at run.id: invalid_run_id"},
		{"bad run id", `{"harness":"claude","run":{"id":"a/b"},"mcpServers":[{"id":"fs","command":"/usr/bin/fs-mcp","token":{"mint":true}}]}`,
			"request refused at run.id: invalid_run_id"},
		{"ttl over the max", `{"harness":"claude","run":{"id":"r"},"mcpServers":[{"id":"fs","command":"/usr/bin/fs-mcp","token":{"mint":true,"ttl":"25h"}}]}`,
			"request refused at mcpServers[0].token.ttl: invalid_token"},
		{"bad ttl", `{"harness":"claude","run":{"id":"r"},"mcpServers":[{"id":"fs","command":"/usr/bin/fs-mcp","token":{"mint":true,"ttl":"soon"}}]}`,
			"request refused at mcpServers[0].token.ttl: invalid_token"},
		{"stored token too", `{"harness":"claude","run":{"id":"r"},"tokens":{"fs":"` + testSecret + `"},"mcpServers":[{"id":"fs","command":"/usr/bin/fs-mcp","token":{"mint":true}}]}`,
			"request refused at mcpServers[0].token.mint: token_conflict"},
	}
	for _, tc := range tests {
		rec := do(s.Handler(), http.MethodPost, "/v1/render", tc.body)
		require.Equal(t, http.StatusUnprocessableEntity, rec.Code, "%s: %s", tc.name, rec.Body.String())
		var eb ErrorBody
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &eb))
		assert.Equal(t, OutcomeRejected, eb.Error.Code, tc.name)
		assert.Contains(t, eb.Error.Message, tc.want, tc.name)
		assert.NotContains(t, rec.Body.String(), testSecret, tc.name)
	}
	assert.Zero(t, metricValue(t, s.metrics.minted))
}

// tokenServer is a server over an in-process store on an injectable clock.
func tokenServer(t *testing.T, cfg Config, r Renderer) (*Server, *tokens.Service, func(time.Duration)) {
	t.Helper()
	var mu sync.Mutex
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	advance := func(d time.Duration) {
		mu.Lock()
		now = now.Add(d)
		mu.Unlock()
	}
	svc, err := tokens.New(tokens.Config{Store: tokens.NewMemory(clock), Now: clock})
	require.NoError(t, err)
	cfg.Tokens = svc
	if r == nil {
		r = newFake("t")
	}
	s, _ := newTestServer(t, cfg, fixedLoader(r))
	t.Cleanup(s.Close)
	return s, svc, advance
}

// mintDirect mints and stores tokens for servers of run, as a render would.
func mintDirect(t *testing.T, svc *tokens.Service, run string, servers ...string) []string {
	t.Helper()
	var parts []string
	for _, id := range servers {
		parts = append(parts, `{"id":"`+id+`","command":"c","token":{"mint":true}}`)
	}
	req, _, err := spec.Parse([]byte(`{"run":{"id":"` + run + `","user":"bob"},"mcpServers":[` + strings.Join(parts, ",") + `]}`))
	require.NoError(t, err)
	m := svc.Begin()
	pairs, err := m.Mint(context.Background(), req)
	require.NoError(t, err)
	_, err = m.Commit(context.Background(), servers)
	require.NoError(t, err)
	var out []string
	for _, p := range pairs {
		out = append(out, p.Value)
	}
	return out
}

// alterLast returns tok with its last character replaced by a different one, so the result is
// never the token itself (a fixed replacement would equal it whenever the token ends in it).
func alterLast(tok string) string {
	last := tok[len(tok)-1]
	repl := byte('A')
	if last == 'A' {
		repl = 'B'
	}
	return tok[:len(tok)-1] + string(repl)
}

func TestResolveRoute(t *testing.T) {
	s, svc, advance := tokenServer(t, Config{}, nil)
	h := s.Handler()
	toks := mintDirect(t, svc, "run-1", "docs")

	rec := resolve(h, toks[0], "docs")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.JSONEq(t, `{"run":"run-1","server":"docs","user":"bob","expiresAt":"2030-01-01T01:00:00Z"}`, rec.Body.String())

	for _, tc := range []struct {
		method, body string
		status       int
	}{
		{http.MethodGet, "", http.StatusMethodNotAllowed},
		{http.MethodPost, ``, http.StatusBadRequest},
		{http.MethodPost, `{"token":`, http.StatusBadRequest},
		{http.MethodPost, `{"token":""}`, http.StatusBadRequest},
		{http.MethodPost, `{"token":"` + toks[0] + `","extra":1}`, http.StatusBadRequest},
		{http.MethodPost, `{"token":"` + toks[0] + `"} {}`, http.StatusBadRequest},
		{http.MethodPost, `{"token":"` + strings.Repeat("x", maxResolveBody) + `"}`, http.StatusRequestEntityTooLarge},
		{http.MethodPost, `{"token":"lrt_not-a-token"}`, http.StatusNotFound},
		{http.MethodPost, `{"token":"` + alterLast(toks[0]) + `"}`, http.StatusNotFound},
	} {
		rec := do(h, tc.method, "/v1/tokens/resolve", tc.body)
		assert.Equal(t, tc.status, rec.Code, "%s %.60s: %s", tc.method, tc.body, rec.Body.String())
		assert.NotContains(t, rec.Body.String(), toks[0], "an error echoes the token")
	}

	advance(time.Hour)
	rec = resolve(h, toks[0], "")
	assert.Equal(t, http.StatusNotFound, rec.Code, "an expired token")
	var eb ErrorBody
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &eb))
	assert.Equal(t, codeTokenNotFound, eb.Error.Code)
}

func TestRevokeRoute(t *testing.T) {
	s, svc, _ := tokenServer(t, Config{}, nil)
	h := s.Handler()
	a := mintDirect(t, svc, "run-a", "x", "y")
	b := mintDirect(t, svc, "run-b", "x")
	rec := do(h, http.MethodDelete, "/v1/runs/run-a", "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.JSONEq(t, `{"run":"run-a","revoked":2}`, rec.Body.String())
	for _, tok := range a {
		assert.Equal(t, http.StatusNotFound, resolve(h, tok, "").Code)
	}
	assert.Equal(t, http.StatusOK, resolve(h, b[0], "").Code, "another run's token")
	assert.JSONEq(t, `{"run":"run-a","revoked":0}`, do(h, http.MethodDelete, "/v1/runs/run-a", "").Body.String(), "revoke is idempotent")
	assert.Equal(t, http.StatusMethodNotAllowed, do(h, http.MethodGet, "/v1/runs/run-b", "").Code)
	assert.Equal(t, http.StatusBadRequest, do(h, http.MethodDelete, "/v1/runs/-x", "").Code)
	assert.Equal(t, http.StatusBadRequest, do(h, http.MethodDelete, "/v1/runs/a%2Fb", "").Code)
	assert.Equal(t, http.StatusNotFound, do(h, http.MethodDelete, "/v1/runs/a/b", "").Code)
}

func TestTokenAPIKey(t *testing.T) {
	const key = "platform-key-123"
	s, svc, _ := tokenServer(t, Config{TokenAPIKey: key}, nil)
	h := s.Handler()
	tok := mintDirect(t, svc, "run-k", "docs")[0]
	send := func(method, target, body, auth string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, target, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	body := `{"token":"` + tok + `"}`
	for _, auth := range []string{"", "Bearer wrong", "Basic " + key, "Bearer " + key + "x", "bearer " + key} {
		rec := send(http.MethodPost, "/v1/tokens/resolve", body, auth)
		assert.Equal(t, http.StatusUnauthorized, rec.Code, "resolve with %q", auth)
		assert.NotEmpty(t, rec.Header().Get("WWW-Authenticate"))
		assert.Equal(t, http.StatusUnauthorized, send(http.MethodDelete, "/v1/runs/run-k", "", auth).Code, "revoke with %q", auth)
	}
	assert.Equal(t, http.StatusOK, send(http.MethodPost, "/v1/tokens/resolve", body, "Bearer "+key).Code)
	assert.Equal(t, http.StatusOK, send(http.MethodDelete, "/v1/runs/run-k", "", "Bearer "+key).Code)
	assert.Equal(t, http.StatusOK, send(http.MethodGet, "/healthz", "", "").Code, "other routes need no key")
}

// TestRevokeUnderLoad resolves a run's tokens from many goroutines, on two replicas sharing a
// store, while one replica revokes the run: once DELETE returned, no resolve succeeds.
func TestRevokeUnderLoad(t *testing.T) {
	for _, kind := range []string{"memory", "redis"} {
		t.Run(kind, func(t *testing.T) {
			var svcA, svcB *tokens.Service
			if kind == "redis" {
				addr := testredis.Start(t)
				svcA, svcB = redisService(t, addr), redisService(t, addr)
			} else {
				var err error
				svcA, err = tokens.New(tokens.Config{Store: tokens.NewMemory(nil)})
				require.NoError(t, err)
				svcB = svcA
			}
			a, _ := newTestServer(t, Config{Tokens: svcA}, fixedLoader(newFake("a")))
			defer a.Close()
			b, _ := newTestServer(t, Config{Tokens: svcB}, fixedLoader(newFake("b")))
			defer b.Close()
			var servers []string
			for i := range 10 {
				servers = append(servers, fmt.Sprintf("s%d", i))
			}
			toks := mintDirect(t, svcA, "run-load", servers...)
			other := mintDirect(t, svcA, "run-other", "s0")[0]

			const readers, after = 6, 50
			var revoked atomic.Bool
			var before, late, otherLost atomic.Int64
			var wg sync.WaitGroup
			for r := range readers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					h := []http.Handler{a.Handler(), b.Handler()}[r%2]
					for i, left := 0, after; left > 0 && i < 100_000; i++ {
						wasRevoked := revoked.Load()
						rec := resolve(h, toks[(r+i)%len(toks)], "")
						switch {
						case rec.Code == http.StatusOK && wasRevoked:
							late.Add(1)
						case rec.Code == http.StatusOK:
							before.Add(1)
						case rec.Code != http.StatusNotFound:
							t.Errorf("resolve: %d %s", rec.Code, rec.Body.String())
							return
						}
						if wasRevoked {
							left--
							if i%10 == 0 && resolve(h, other, "").Code != http.StatusOK {
								otherLost.Add(1)
							}
						}
					}
				}()
			}
			for i := 0; before.Load() < readers && i < 100_000; i++ {
				time.Sleep(100 * time.Microsecond)
			}
			rec := do(a.Handler(), http.MethodDelete, "/v1/runs/run-load", "")
			revoked.Store(true)
			wg.Wait()
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			assert.JSONEq(t, `{"run":"run-load","revoked":10}`, rec.Body.String())
			assert.Positive(t, before.Load(), "resolves succeeded before the revoke")
			assert.Zero(t, late.Load(), "resolves that succeeded after DELETE returned")
			assert.Zero(t, otherLost.Load(), "another run's token stopped resolving")
		})
	}
}

// mintRenderer mints through the request's Minter like the host does, then waits for gate
// before it answers with every server kept.
type mintRenderer struct {
	gate   chan struct{}
	minted chan []spec.Pair
}

func (m *mintRenderer) Plugins() []host.PluginInfo {
	return []host.PluginInfo{{Name: "mint", Version: "1.0.0", ABIVersion: 1, Harness: "claude", Source: "builtin"}}
}

func (m *mintRenderer) Close(context.Context) error { return nil }

func (m *mintRenderer) Render(ctx context.Context, rr host.RenderRequest) (*host.Result, error) {
	req, _, err := spec.Parse(rr.Body)
	if err != nil {
		return nil, err
	}
	pairs, err := rr.Minter.Mint(ctx, req)
	if err != nil {
		return nil, err
	}
	m.minted <- pairs
	if m.gate != nil {
		<-m.gate
	}
	res := &host.Result{Harness: "claude", DryRun: rr.DryRun, Skills: []string{}, Resources: host.ResourceList{},
		Dropped: []spec.Diagnostic{}, Files: []host.FileResult{}, Args: []string{}, Env: []host.EnvVar{}, Warnings: []host.Warning{}}
	for _, s := range req.Servers {
		res.Servers = append(res.Servers, s.ID)
	}
	return res, nil
}

// A run revoked while its render runs gets no live token: the render is refused.
func TestRevokeDuringRender(t *testing.T) {
	mr := &mintRenderer{gate: make(chan struct{}), minted: make(chan []spec.Pair, 1)}
	s, _, _ := tokenServer(t, Config{}, mr)
	h := s.Handler()
	body := `{"harness":"claude","run":{"id":"run-race"},"mcpServers":[{"id":"a","command":"a","token":{"mint":true}}]}`
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() { done <- do(h, http.MethodPost, "/v1/render", body) }()
	pairs := <-mr.minted
	require.Equal(t, http.StatusOK, do(h, http.MethodDelete, "/v1/runs/run-race", "").Code)
	close(mr.gate)
	rec := <-done
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), "run.id: run_revoked")
	assert.Equal(t, http.StatusNotFound, resolve(h, pairs[0].Value, "").Code, "the raced token")
	assert.NotContains(t, rec.Body.String(), pairs[0].Value)
}

// failingStore fails every call.
type failingStore struct{}

var errStoreDown = errors.New("store down " + testSecret)

func (failingStore) Put(context.Context, []tokens.Entry) error { return errStoreDown }
func (failingStore) Get(context.Context, tokens.Key) (tokens.Record, error) {
	return tokens.Record{}, errStoreDown
}
func (failingStore) RevokeRun(context.Context, string, time.Duration) (int, error) {
	return 0, errStoreDown
}
func (failingStore) Close() error { return nil }

// A store that fails answers 503 on every route, and a render with roots leaves no files.
func TestTokenStoreDown(t *testing.T) {
	svc, err := tokens.New(tokens.Config{Store: failingStore{}})
	require.NoError(t, err)
	mr := &mintRenderer{minted: make(chan []spec.Pair, 1)}
	s, logs := newTestServer(t, Config{Tokens: svc}, fixedLoader(mr))
	defer s.Close()
	h := s.Handler()
	rec := do(h, http.MethodPost, "/v1/render", `{"harness":"claude","run":{"id":"r"},"mcpServers":[{"id":"a","command":"a","token":{"mint":true}}]}`)
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), OutcomeTokenStore)
	assert.NotEmpty(t, rec.Header().Get("Retry-After"))
	pairs := <-mr.minted
	assert.NotContains(t, logs.String(), pairs[0].Value)
	assert.Equal(t, http.StatusServiceUnavailable, resolve(h, pairs[0].Value, "").Code)
	assert.Equal(t, http.StatusServiceUnavailable, do(h, http.MethodDelete, "/v1/runs/r", "").Code)
	assert.Equal(t, float64(1), counter(t, s.metrics.resolves, "error"))
	assert.Equal(t, float64(1), counter(t, s.metrics.revokes, "error"))
}

func TestTokenMetricsExposed(t *testing.T) {
	s, _, _ := tokenServer(t, Config{}, nil)
	body := do(s.Handler(), http.MethodGet, "/metrics", "").Body.String()
	var names []string
	for _, n := range []string{"loadout_tokens_minted_total", "loadout_token_resolves_total", "loadout_token_revokes_total", "loadout_tokens_revoked_total"} {
		if !strings.Contains(body, n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	assert.Empty(t, names, "metrics missing from /metrics")
}
