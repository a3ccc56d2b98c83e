package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loadCase is one kind of request the load test sends, with the answer it must get.
type loadCase struct {
	name       string
	query      string
	body       string
	wantStatus int
	wantCode   string // error code; "" for 200
	wantHarn   string // result harness on 200
}

// TestLoad runs the server on a loopback port with 16 concurrent clients mixing valid, invalid,
// rejected, over-limit and hostile-plugin requests while the renderer set is reloaded (good and
// failing loads alternating). Every answer is checked; afterwards the metrics add up, memory
// stayed bounded, every replaced renderer was closed exactly once and no goroutine is left.
func TestLoad(t *testing.T) {
	const (
		workers   = 16
		perWorker = 400
		maxBody   = 16 << 10
	)
	goroutinesBefore := runtime.NumGoroutine()

	var (
		fakesMu sync.Mutex
		fakes   []*fakeRenderer
		loads   int
	)
	loader := func(context.Context) (Renderer, error) {
		fakesMu.Lock()
		defer fakesMu.Unlock()
		loads++
		if loads%3 == 0 {
			return nil, errors.New("plugin codex.wasm: sha256 mismatch")
		}
		f := newFake(fmt.Sprintf("gen%d", loads))
		fakes = append(fakes, f)
		return f, nil
	}
	s, logs := newTestServer(t, Config{MaxBody: maxBody, MaxConcurrent: 4, QueueWait: 10 * time.Second, Timeout: 10 * time.Second}, loader)
	base, stop := startServe(t, s)

	cases := []loadCase{
		{name: "valid", body: requestBody("claude"), wantStatus: 200, wantHarn: "claude"},
		{name: "valid override", query: "?harness=codex", body: requestBody("claude"), wantStatus: 200, wantHarn: "codex"},
		{name: "invalid JSON", body: `{"harness":"claude",`, wantStatus: 400, wantCode: OutcomeBadRequest},
		{name: "bad query", query: "?harness=..", body: requestBody("claude"), wantStatus: 400, wantCode: OutcomeBadRequest},
		{name: "rejected", body: requestBody("reject"), wantStatus: 422, wantCode: OutcomeRejected},
		{name: "over limit", body: `{"harness":"claude","pad":"` + strings.Repeat("p", maxBody) + `"}`, wantStatus: 413, wantCode: OutcomeTooLarge},
		{name: "hostile plugin trap", body: requestBody("trap"), wantStatus: 502, wantCode: OutcomePlugin},
		{name: "hostile plugin spin", body: requestBody("spin"), wantStatus: 502, wantCode: OutcomePlugin},
	}

	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	heapBefore := ms.HeapAlloc

	tr := &http.Transport{MaxIdleConnsPerHost: workers}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}

	reloadCtx, stopReloads := context.WithCancel(context.Background())
	reloadsDone := make(chan struct{})
	go func() {
		defer close(reloadsDone)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-reloadCtx.Done():
				return
			case <-tick.C:
				_ = s.Reload(reloadCtx) // failures are expected every third load
			}
		}
	}()

	var (
		wg       sync.WaitGroup
		failMu   sync.Mutex
		failures []string
		idsMu    sync.Mutex
		ids      = map[string]bool{}
	)
	fail := func(format string, args ...any) {
		failMu.Lock()
		defer failMu.Unlock()
		if len(failures) < 20 {
			failures = append(failures, fmt.Sprintf(format, args...))
		}
	}
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				tc := cases[(w+i)%len(cases)]
				status, id, body, err := post(client, base+"/v1/render"+tc.query, tc.body)
				if err != nil {
					fail("%s: POST: %v", tc.name, err)
					continue
				}
				if msg := checkLoadAnswer(tc, status, body); msg != "" {
					fail("%s: %s", tc.name, msg)
				}
				idsMu.Lock()
				if id == "" || ids[id] {
					fail("%s: request id %q missing or repeated", tc.name, id)
				}
				ids[id] = true
				idsMu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	stopReloads()
	<-reloadsDone
	total := workers * perWorker
	t.Logf("%d requests in %s (%.0f req/s) with %d renderer loads", total, elapsed, float64(total)/elapsed.Seconds(), loads)
	require.Empty(t, failures, "wrong or lost answers under load")
	assert.Len(t, ids, total, "distinct request ids")

	runtime.GC()
	runtime.ReadMemStats(&ms)
	growth := int64(ms.HeapAlloc) - int64(heapBefore)
	t.Logf("heap before %d, after %d bytes", heapBefore, ms.HeapAlloc)
	assert.Less(t, growth, int64(32<<20), "heap growth over %d requests", total)

	var sum float64
	for _, h := range []string{"claude", "codex", "reject", "trap", "spin", "none", "unknown"} {
		for _, o := range []string{OutcomeOK, OutcomeBadRequest, OutcomeRejected, OutcomeTooLarge, OutcomePlugin, OutcomeOverloaded, OutcomeTimeout, OutcomeInternal, OutcomeCanceled, OutcomeClosed} {
			sum += counter(t, s.metrics.requests, h, o)
		}
	}
	assert.Equal(t, float64(total), sum, "loadout_render_requests_total summed over every label")
	assert.Zero(t, counter(t, s.metrics.requests, "none", OutcomeOverloaded), "no request was refused as overloaded")
	assert.Positive(t, counter(t, s.metrics.reloads, "error"), "failed reloads were counted")
	assert.Zero(t, gaugeValue(t, s.metrics.inflight), "loadout_inflight_requests after the load")

	// Close the client's idle connections first: http.Server.Shutdown waits up to 5 s for a
	// connection the transport dialed but never used (StateNew) before it counts it idle.
	tr.CloseIdleConnections()
	stopStart := time.Now()
	require.NoError(t, stop(), "Serve after cancel")
	t.Logf("shutdown took %s", time.Since(stopStart))
	fakesMu.Lock()
	for _, f := range fakes {
		assert.Equal(t, int32(1), f.closed.Load(), "renderer %s closed exactly once", f.name)
	}
	fakesMu.Unlock()
	assert.NotContains(t, logs.String(), "closed twice", "no renderer closed twice")
	assert.NotContains(t, logs.String(), "render on a closed renderer", "no render ran on a closed renderer")
	assert.NotContains(t, logs.String(), testSecret, "logs echo a secret")

	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > goroutinesBefore && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("goroutines settled %s after shutdown", time.Since(stopStart))
	if n := runtime.NumGoroutine(); n > goroutinesBefore {
		buf := make([]byte, 1<<20)
		t.Fatalf("goroutines: %d before, %d after shutdown:\n%s", goroutinesBefore, n, buf[:runtime.Stack(buf, true)])
	}
}

// post sends one render request and returns status, request id and body.
func post(c *http.Client, url, body string) (int, string, []byte, error) {
	resp, err := c.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", nil, err
	}
	return resp.StatusCode, resp.Header.Get("X-Request-Id"), b, nil
}

// checkLoadAnswer returns what is wrong with an answer, or "".
func checkLoadAnswer(tc loadCase, status int, body []byte) string {
	if status != tc.wantStatus {
		return fmt.Sprintf("status %d, want %d (body %s)", status, tc.wantStatus, body)
	}
	if strings.Contains(string(body), testSecret) {
		return "answer echoes a secret"
	}
	if tc.wantCode == "" {
		var res wireResult
		if err := json.Unmarshal(body, &res); err != nil {
			return fmt.Sprintf("decode result: %v", err)
		}
		if res.Harness != tc.wantHarn || !res.DryRun || len(res.Servers) != 1 || !strings.HasPrefix(res.Prompt, "renderer gen") {
			return fmt.Sprintf("result %+v, want harness %s, a dry run, one server, a prompt from a loaded renderer", res, tc.wantHarn)
		}
		return ""
	}
	var eb ErrorBody
	if err := json.Unmarshal(body, &eb); err != nil {
		return fmt.Sprintf("decode error body %s: %v", body, err)
	}
	if eb.Error.Code != tc.wantCode || eb.Error.Message == "" {
		return fmt.Sprintf("error %+v, want code %s and a message", eb.Error, tc.wantCode)
	}
	return ""
}
