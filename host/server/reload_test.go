package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seqLoader hands out its steps in order: a Renderer, or an error. It stays on the last step.
type seqLoader struct {
	mu    sync.Mutex
	steps []any
	calls int
}

func (l *seqLoader) load(context.Context) (Renderer, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	step := l.steps[min(l.calls, len(l.steps)-1)]
	l.calls++
	if err, ok := step.(error); ok {
		return nil, err
	}
	return step.(Renderer), nil
}

func (l *seqLoader) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls
}

// promptOf renders for claude and returns the prompt, which names the renderer that served it.
func promptOf(t *testing.T, h http.Handler) string {
	t.Helper()
	rec := do(h, http.MethodPost, "/v1/render", requestBody("claude"))
	require.Equal(t, http.StatusOK, rec.Code, "POST /v1/render: body %s", rec.Body.String())
	var res wireResult
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &res), "decode %s", rec.Body.String())
	return res.Prompt
}

func TestReloadGoodThenBadKeepsGood(t *testing.T) {
	first, second := newFake("first"), newFake("second")
	bad := errors.New("policy loadout.url does not compile")
	loader := &seqLoader{steps: []any{first, bad, second}}
	s, logs := newTestServer(t, Config{}, loader.load)
	h := s.Handler()
	require.Equal(t, "renderer first", promptOf(t, h), "render after New")

	err := s.Reload(context.Background())
	require.ErrorIs(t, err, bad, "Reload with a failing loader")
	assert.Equal(t, "renderer first", promptOf(t, h), "render after a failed reload keeps the good set")
	assert.Zero(t, first.closed.Load(), "the good set is not closed by a failed reload")
	assert.Equal(t, float64(1), counter(t, s.metrics.reloads, "error"), "loadout_reloads_total{result=error}")
	assert.Equal(t, float64(1), counter(t, s.metrics.reloads, "ok"), "loadout_reloads_total{result=ok} (the first load)")
	var errLine map[string]any
	for _, r := range logs.records(t) {
		if r["level"] == "ERROR" {
			errLine = r
		}
	}
	require.NotNil(t, errLine, "a failed reload logs at error level; logs:\n%s", logs.String())
	assert.Contains(t, errLine["err"], "does not compile", "the error log says why")

	rec := do(h, http.MethodGet, "/metrics", "")
	require.Equal(t, http.StatusOK, rec.Code, "GET /metrics")
	assert.Contains(t, rec.Body.String(), `loadout_reloads_total{result="error"} 1`, "GET /metrics shows the failed reload")
	assert.Equal(t, http.StatusOK, do(h, http.MethodGet, "/healthz", "").Code, "GET /healthz after a failed reload: a good set is loaded")

	require.NoError(t, s.Reload(context.Background()), "Reload with a good loader")
	assert.Equal(t, "renderer second", promptOf(t, h), "render after a good reload")
	assert.Equal(t, int32(1), first.closed.Load(), "the replaced set is closed once idle")
	var pb PluginsBody
	require.NoError(t, json.Unmarshal(do(h, http.MethodGet, "/v1/plugins", "").Body.Bytes(), &pb), "decode plugins")
	assert.Equal(t, uint64(2), pb.Generation, "plugins generation after one good reload")
	assert.Equal(t, "second-claude", pb.Plugins[0].Name, "plugins of the new set")

	s.Close()
	assert.Equal(t, int32(1), second.closed.Load(), "Close closes the current set")
	assert.Equal(t, http.StatusServiceUnavailable, do(h, http.MethodGet, "/healthz", "").Code, "GET /healthz after Close")
	assert.Equal(t, http.StatusServiceUnavailable, do(h, http.MethodPost, "/v1/render", requestBody("claude")).Code, "POST /v1/render after Close")
}

func TestInFlightSurvivesSwap(t *testing.T) {
	first, second := newFake("first"), newFake("second")
	first.gate = make(chan struct{})
	first.started = make(chan struct{}, 1)
	loader := &seqLoader{steps: []any{first, second}}
	s, _ := newTestServer(t, Config{}, loader.load)
	h := s.Handler()

	slow := make(chan *httptest.ResponseRecorder)
	go func() { slow <- do(h, http.MethodPost, "/v1/render", requestBody("slow")) }()
	<-first.started
	require.NoError(t, s.Reload(context.Background()), "Reload during a render")
	assert.Zero(t, first.closed.Load(), "the old set stays open while a request uses it")
	assert.Equal(t, "renderer second", promptOf(t, h), "a new request runs on the new set")

	close(first.gate)
	rec := <-slow
	require.Equal(t, http.StatusOK, rec.Code, "the in-flight render after the swap: body %s", rec.Body.String())
	var res wireResult
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &res), "decode %s", rec.Body.String())
	assert.Equal(t, "renderer first", res.Prompt, "the in-flight render finished on the set it started with")
	assert.Equal(t, int32(1), first.closed.Load(), "the old set is closed after its last request")
	assert.Zero(t, second.closed.Load(), "the current set stays open")
}

// startServe runs s.Serve on a loopback listener and returns its base URL and a stop function
// that cancels Serve and returns its error.
func startServe(t *testing.T, s *Server) (string, func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err, "listen on 127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	var once sync.Once
	var serveErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			serveErr = <-done
		})
		return serveErr
	}
	t.Cleanup(func() { _ = stop() })
	return "http://" + ln.Addr().String(), stop
}

func TestWatchReloads(t *testing.T) {
	dir := t.TempDir()
	policies := filepath.Join(dir, "policies")
	require.NoError(t, os.MkdirAll(filepath.Join(policies, "loadout", "url"), 0o755), "mkdir policies")
	plugin := filepath.Join(dir, "claude.wasm")
	require.NoError(t, os.WriteFile(plugin, []byte("v1"), 0o644), "write plugin")

	loader := &seqLoader{steps: []any{newFake("first"), errors.New("plugin sha256 mismatch"), newFake("third")}}
	s, _ := newTestServer(t, Config{Watch: []string{policies, plugin}, Debounce: 30 * time.Millisecond}, loader.load)
	events := recordWatch(s)
	_, stop := startServe(t, s)
	events.waitFor(t, 0, "the watcher to start", func(ev watchEvent) bool { return ev.kind == watchStarted })

	// An unwatched file in the plugin's (watched) directory: the watcher sees the change,
	// ignores it and schedules nothing. The same kind of write, to a fresh file each time,
	// serves below as a marker: once it is reported, every earlier change was handled.
	markers := 0
	marker := func(what string) watchEvent {
		t.Helper()
		markers++
		name := filepath.Join(dir, fmt.Sprintf("notes-%d.txt", markers))
		from := events.len()
		require.NoError(t, os.WriteFile(name, []byte("x"), 0o644), "write the unwatched file %s", name)
		_, ev := events.waitFor(t, from, what, func(ev watchEvent) bool { return ev.kind == watchChange && ev.path == name })
		assert.False(t, ev.relevant, "a change to the unwatched %s is not relevant", name)
		return ev
	}
	ev := marker("an unwatched change")
	assert.False(t, ev.pending, "a change to an unwatched file schedules no reload")
	assert.Equal(t, 1, loader.count(), "a change to an unwatched file does not reload")

	// Several writes in a burst make one reload (debounce); this one fails.
	burst := events.len()
	for i := range 5 {
		require.NoError(t, os.WriteFile(plugin, []byte(strings.Repeat("v", i+2)), 0o644), "rewrite plugin")
	}
	marker("the marker after the burst") // every write of the burst is handled
	events.waitFor(t, burst, "the reload after the burst", func(ev watchEvent) bool { return ev.kind == watchReload })
	ev = marker("the marker after the reload")
	assert.False(t, ev.pending, "no second reload is scheduled after the burst's")
	assert.Equal(t, 1, events.count(burst, watchReload), "a burst of writes reloads once")
	assert.Equal(t, 2, loader.count(), "a burst of writes loads once")
	assert.Equal(t, 1.0, counter(t, s.metrics.reloads, "error"), "the reload failed and was counted")
	assert.Equal(t, "renderer first", promptOf(t, s.Handler()), "the good set stays after a failed reload")

	// A new file in a new subdirectory of the policies tree reloads too.
	sub := filepath.Join(policies, "loadout", "extra")
	require.NoError(t, os.Mkdir(sub, 0o755), "mkdir policy subdirectory")
	eventually(t, "the reload after mkdir", func() bool { return loader.count() == 3 })
	assert.Equal(t, "renderer third", promptOf(t, s.Handler()), "render after the good reload")
	require.NoError(t, os.WriteFile(filepath.Join(sub, "extra.rego"), []byte("package x"), 0o644), "write policy")
	eventually(t, "the reload after a write in the new subdirectory", func() bool { return loader.count() == 4 })

	require.NoError(t, stop(), "Serve after cancel")
}

// watchLog records what a server's watcher reports, in order (Server.watchHook).
type watchLog struct {
	mu     sync.Mutex
	events []watchEvent
	added  chan struct{} // signalled (without blocking) on every event
}

// recordWatch sets s's watch hook; call it before Serve.
func recordWatch(s *Server) *watchLog {
	l := &watchLog{added: make(chan struct{}, 1)}
	s.watchHook = func(ev watchEvent) {
		l.mu.Lock()
		l.events = append(l.events, ev)
		l.mu.Unlock()
		select {
		case l.added <- struct{}{}:
		default:
		}
	}
	return l
}

func (l *watchLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.events)
}

// count is how many events of kind were reported from index from on.
func (l *watchLog) count(from int, kind string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, ev := range l.events[from:] {
		if ev.kind == kind {
			n++
		}
	}
	return n
}

// waitFor returns the first event from index from on that match accepts, and its index,
// waiting for the watcher to report it. The deadline only bounds a failing test: no outcome
// depends on it.
func (l *watchLog) waitFor(t *testing.T, from int, what string, match func(watchEvent) bool) (int, watchEvent) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		l.mu.Lock()
		for i := from; i < len(l.events); i++ {
			if match(l.events[i]) {
				ev := l.events[i]
				l.mu.Unlock()
				return i, ev
			}
		}
		from = len(l.events)
		l.mu.Unlock()
		select {
		case <-l.added:
		case <-deadline:
			t.Fatalf("timed out waiting for the watcher to report %s", what)
		}
	}
}

func TestServeGracefulShutdown(t *testing.T) {
	fake := newFake("a")
	fake.gate = make(chan struct{})
	fake.started = make(chan struct{}, 1)
	s, _ := newTestServer(t, Config{ShutdownGrace: 5 * time.Second}, fixedLoader(fake))
	base, stop := startServe(t, s)

	type reply struct {
		status int
		err    error
	}
	slow := make(chan reply)
	go func() {
		resp, err := http.Post(base+"/v1/render", "application/json", strings.NewReader(requestBody("slow")))
		if err != nil {
			slow <- reply{err: err}
			return
		}
		resp.Body.Close()
		slow <- reply{status: resp.StatusCode}
	}()
	<-fake.started
	stopped := make(chan error)
	go func() { stopped <- stop() }()
	eventually(t, "the listener to close", func() bool {
		c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	assert.Zero(t, fake.closed.Load(), "the renderer stays open while a request is in flight")
	close(fake.gate)
	r := <-slow
	require.NoError(t, r.err, "the in-flight request during shutdown")
	assert.Equal(t, http.StatusOK, r.status, "the in-flight request finishes during the grace period")
	require.NoError(t, <-stopped, "Serve after a graceful shutdown")
	assert.Equal(t, int32(1), fake.closed.Load(), "the renderer is closed after shutdown")
}

func TestServeGraceExpires(t *testing.T) {
	fake := newFake("a")
	fake.started = make(chan struct{}, 1)
	s, _ := newTestServer(t, Config{ShutdownGrace: 100 * time.Millisecond, Timeout: time.Minute}, fixedLoader(fake))
	base, stop := startServe(t, s)
	slow := make(chan error)
	go func() {
		resp, err := http.Post(base+"/v1/render", "application/json", strings.NewReader(requestBody("slow")))
		if err == nil {
			resp.Body.Close()
		}
		slow <- err
	}()
	<-fake.started
	start := time.Now()
	err := stop()
	require.Error(t, err, "Serve when the grace period ran out")
	assert.Less(t, time.Since(start), 5*time.Second, "Serve returns soon after the grace period")
	<-slow
	eventually(t, "the renderer to close", func() bool { return fake.closed.Load() == 1 })
}

func TestListenAndServe(t *testing.T) {
	fake, late := newFake("a"), newFake("late")
	loader := &seqLoader{steps: []any{fake, late}}
	s, logs := newTestServer(t, Config{Addr: "127.0.0.1:0"}, loader.load)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ListenAndServe(ctx) }()
	eventually(t, "ListenAndServe to serve", func() bool { return strings.Contains(logs.String(), `"msg":"serving"`) })
	cancel()
	require.NoError(t, <-done, "ListenAndServe on 127.0.0.1:0 after cancel")
	assert.Equal(t, int32(1), fake.closed.Load(), "the renderer is closed after ListenAndServe returns")
	require.Error(t, s.Reload(context.Background()), "Reload after shutdown")
	assert.Equal(t, int32(1), late.closed.Load(), "a reload after shutdown closes what it loaded")
	assert.Equal(t, int32(1), fake.closed.Load(), "a reload after shutdown leaves the closed set alone")

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err, "listen on 127.0.0.1:0")
	defer busy.Close()
	other := newFake("b")
	s2, _ := newTestServer(t, Config{Addr: busy.Addr().String()}, fixedLoader(other))
	require.Error(t, s2.ListenAndServe(context.Background()), "ListenAndServe on a taken address")
	assert.Equal(t, int32(1), other.closed.Load(), "ListenAndServe closes the renderer when it cannot listen")
}
