package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/redact"
)

func TestRenderStatuses(t *testing.T) {
	fake := newFake("a")
	s, logs := newTestServer(t, Config{MaxBody: 2048, Timeout: 100 * time.Millisecond}, fixedLoader(fake))
	h := s.Handler()
	big := `{"harness":"claude","pad":"` + strings.Repeat("x", 4096) + `"}`
	tests := []struct {
		name       string
		target     string
		body       string
		wantStatus int
		wantCode   string // error code; "" for 200
		wantHarn   string // metric harness label
		wantKind   string // plugin failure kind
	}{
		{name: "ok from body", target: "/v1/render", body: requestBody("claude"), wantStatus: 200, wantHarn: "claude"},
		{name: "query overrides body", target: "/v1/render?harness=codex", body: requestBody("claude"), wantStatus: 200, wantHarn: "codex"},
		{name: "query not an id", target: "/v1/render?harness=Bad%21", body: requestBody("claude"), wantStatus: 400, wantCode: OutcomeBadRequest, wantHarn: "none"},
		{name: "query harness not loaded", target: "/v1/render?harness=nope", body: requestBody("claude"), wantStatus: 400, wantCode: OutcomeBadRequest, wantHarn: "unknown"},
		{name: "empty body", target: "/v1/render", body: "", wantStatus: 400, wantCode: OutcomeBadRequest, wantHarn: "none"},
		{name: "not JSON", target: "/v1/render", body: `{"harness":`, wantStatus: 400, wantCode: OutcomeBadRequest, wantHarn: "none"},
		{name: "refused as bad JSON by the pipeline", target: "/v1/render", body: requestBody("badjson"), wantStatus: 400, wantCode: OutcomeBadRequest, wantHarn: "badjson"},
		{name: "too large", target: "/v1/render", body: big, wantStatus: 413, wantCode: OutcomeTooLarge, wantHarn: "none"},
		{name: "rejected", target: "/v1/render", body: requestBody("reject"), wantStatus: 422, wantCode: OutcomeRejected, wantHarn: "reject"},
		{name: "plugin trap", target: "/v1/render", body: requestBody("trap"), wantStatus: 502, wantCode: OutcomePlugin, wantHarn: "trap", wantKind: "trap"},
		{name: "plugin deadline", target: "/v1/render", body: requestBody("spin"), wantStatus: 502, wantCode: OutcomePlugin, wantHarn: "spin", wantKind: "timeout"},
		{name: "request deadline", target: "/v1/render", body: requestBody("slow"), wantStatus: 503, wantCode: OutcomeTimeout, wantHarn: "slow"},
		{name: "renderer panics", target: "/v1/render", body: requestBody("panic"), wantStatus: 500, wantCode: OutcomeInternal, wantHarn: "panic"},
		{name: "renderer error", target: "/v1/render", body: requestBody("broken"), wantStatus: 500, wantCode: OutcomeInternal, wantHarn: "broken"},
		{name: "unknown harness in body", target: "/v1/render", body: requestBody("zzz"), wantStatus: 500, wantCode: OutcomeInternal, wantHarn: "unknown"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			outcome := tc.wantCode
			if outcome == "" {
				outcome = OutcomeOK
			}
			before := counter(t, s.metrics.requests, tc.wantHarn, outcome)
			var kindBefore float64
			if tc.wantKind != "" {
				kindBefore = counter(t, s.metrics.plugin, tc.wantKind)
			}
			rec := do(h, http.MethodPost, tc.target, tc.body)
			require.Equal(t, tc.wantStatus, rec.Code, "POST %s: status (body %s)", tc.target, rec.Body.String())
			assert.Equal(t, "application/json", rec.Header().Get("Content-Type"), "POST %s: content type", tc.target)
			assert.NotEmpty(t, rec.Header().Get("X-Request-Id"), "POST %s: request id header", tc.target)
			assert.NotContains(t, rec.Body.String(), testSecret, "POST %s: answer echoes a secret", tc.target)
			if tc.wantCode == "" {
				var res wireResult
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &res), "POST %s: decode result", tc.target)
				assert.Equal(t, tc.wantHarn, res.Harness, "POST %s: result harness", tc.target)
				assert.True(t, res.DryRun, "POST %s: without Roots a render is a dry run", tc.target)
			} else {
				var eb ErrorBody
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &eb), "POST %s: decode error body %s", tc.target, rec.Body.String())
				assert.Equal(t, tc.wantCode, eb.Error.Code, "POST %s: error code", tc.target)
				assert.NotEmpty(t, eb.Error.Message, "POST %s: error message", tc.target)
			}
			if tc.wantStatus == http.StatusServiceUnavailable {
				assert.Equal(t, "1", rec.Header().Get("Retry-After"), "POST %s: Retry-After on 503", tc.target)
			}
			assert.Equal(t, before+1, counter(t, s.metrics.requests, tc.wantHarn, outcome),
				"POST %s: loadout_render_requests_total{harness=%q,outcome=%q}", tc.target, tc.wantHarn, outcome)
			if tc.wantKind != "" {
				assert.Equal(t, kindBefore+1, counter(t, s.metrics.plugin, tc.wantKind), "POST %s: loadout_plugin_failures_total{kind=%q}", tc.target, tc.wantKind)
			}
		})
	}
	assert.NotContains(t, logs.String(), testSecret, "the log echoes a secret")
	assert.Equal(t, float64(2), counter(t, s.metrics.denials, "url_not_allowed"), "loadout_policy_denials_total{reason=url_not_allowed} after two ok renders")
	assert.Zero(t, gaugeValue(t, s.metrics.inflight), "loadout_inflight_requests after every request returned")
}

func TestRejectedBodyListsDropped(t *testing.T) {
	s, _ := newTestServer(t, Config{}, fixedLoader(&rejectWithResult{fakeRenderer: newFake("a")}))
	rec := do(s.Handler(), http.MethodPost, "/v1/render", requestBody("claude"))
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, "POST /v1/render refused with a result: body %s", rec.Body.String())
	var eb ErrorBody
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &eb), "decode %s", rec.Body.String())
	require.Len(t, eb.Dropped, 1, "dropped entries of the refusal")
	assert.Equal(t, "url_not_allowed", eb.Dropped[0].Code, "dropped code")
	assert.Equal(t, float64(1), counter(t, s.metrics.denials, "url_not_allowed"), "denials counted from a refused render's result")
}

// rejectWithResult refuses every request but reports what it dropped, as a policy deny does.
type rejectWithResult struct{ *fakeRenderer }

func (r *rejectWithResult) Render(ctx context.Context, rr host.RenderRequest) (*host.Result, error) {
	res, err := r.fakeRenderer.Render(ctx, rr)
	if err != nil {
		return nil, err
	}
	return res, rejectErr()
}

func TestRoutes(t *testing.T) {
	s, _ := newTestServer(t, Config{}, fixedLoader(newFake("a")))
	h := s.Handler()
	tests := []struct {
		name       string
		method     string
		target     string
		wantStatus int
		wantAllow  string
		check      func(t *testing.T, body []byte)
	}{
		{name: "plugins", method: http.MethodGet, target: "/v1/plugins", wantStatus: 200, check: func(t *testing.T, body []byte) {
			var pb PluginsBody
			require.NoError(t, json.Unmarshal(body, &pb), "decode %s", body)
			assert.Equal(t, uint64(1), pb.Generation, "plugins generation")
			require.Len(t, pb.Plugins, len(fakeHarnesses), "plugins listed")
			assert.Equal(t, "a-claude", pb.Plugins[0].Name, "plugins keep the renderer's order")
		}},
		{name: "healthz", method: http.MethodGet, target: "/healthz", wantStatus: 200, check: func(t *testing.T, body []byte) {
			var hb HealthBody
			require.NoError(t, json.Unmarshal(body, &hb), "decode %s", body)
			assert.Equal(t, "ok", hb.Status, "health status")
			assert.Equal(t, len(fakeHarnesses), hb.Plugins, "health plugin count")
		}},
		{name: "metrics", method: http.MethodGet, target: "/metrics", wantStatus: 200, check: func(t *testing.T, body []byte) {
			for _, name := range []string{"loadout_reloads_total", "loadout_inflight_requests"} {
				assert.Contains(t, string(body), name, "GET /metrics lists %s", name)
			}
		}},
		{name: "render needs POST", method: http.MethodGet, target: "/v1/render", wantStatus: 405, wantAllow: "POST"},
		{name: "plugins needs GET", method: http.MethodPost, target: "/v1/plugins", wantStatus: 405, wantAllow: "GET"},
		{name: "healthz needs GET", method: http.MethodDelete, target: "/healthz", wantStatus: 405, wantAllow: "GET"},
		{name: "metrics needs GET", method: http.MethodPut, target: "/metrics", wantStatus: 405, wantAllow: "GET"},
		{name: "unknown route", method: http.MethodGet, target: "/v2/render", wantStatus: 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(h, tc.method, tc.target, "")
			require.Equal(t, tc.wantStatus, rec.Code, "%s %s: status (body %s)", tc.method, tc.target, rec.Body.String())
			if tc.wantAllow != "" {
				assert.Equal(t, tc.wantAllow, rec.Header().Get("Allow"), "%s %s: Allow header", tc.method, tc.target)
			}
			if tc.wantStatus >= 400 {
				var eb ErrorBody
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &eb), "%s %s: error body is JSON: %s", tc.method, tc.target, rec.Body.String())
				assert.NotEmpty(t, eb.Error.Code, "%s %s: error code", tc.method, tc.target)
			}
			if tc.check != nil {
				tc.check(t, rec.Body.Bytes())
			}
		})
	}
}

func TestOverloaded(t *testing.T) {
	fake := newFake("a")
	fake.gate = make(chan struct{})
	fake.started = make(chan struct{}, 1)
	s, _ := newTestServer(t, Config{MaxConcurrent: 1, QueueWait: 20 * time.Millisecond}, fixedLoader(fake))
	h := s.Handler()
	done := make(chan *httptest.ResponseRecorder)
	go func() { done <- do(h, http.MethodPost, "/v1/render", requestBody("slow")) }()
	<-fake.started
	rec := do(h, http.MethodPost, "/v1/render", requestBody("claude"))
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, "POST /v1/render with the only slot taken: body %s", rec.Body.String())
	var eb ErrorBody
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &eb), "decode %s", rec.Body.String())
	assert.Equal(t, OutcomeOverloaded, eb.Error.Code, "error code with the only slot taken")
	assert.Equal(t, "1", rec.Header().Get("Retry-After"), "Retry-After when overloaded")
	assert.Equal(t, float64(1), gaugeValue(t, s.metrics.inflight), "loadout_inflight_requests with one render running")

	// A request queued while the slot frees up gets it.
	queued := make(chan *httptest.ResponseRecorder)
	s.cfg.QueueWait = 5 * time.Second
	go func() { queued <- do(h, http.MethodPost, "/v1/render", requestBody("claude")) }()
	eventually(t, "the second request to queue", func() bool { return gaugeValue(t, s.metrics.inflight) == 2 })
	close(fake.gate)
	require.Equal(t, http.StatusOK, (<-done).Code, "the slow render after its gate opened")
	require.Equal(t, http.StatusOK, (<-queued).Code, "the queued render after the slot freed")
	assert.Equal(t, float64(1), counter(t, s.metrics.requests, "none", OutcomeOverloaded), "loadout_render_requests_total{outcome=overloaded}")
}

func TestRootsMaterialize(t *testing.T) {
	roots := t.TempDir()
	s, _ := newTestServer(t, Config{Roots: roots}, fixedLoader(newFake("a")))
	rec := do(s.Handler(), http.MethodPost, "/v1/render", requestBody("roots"))
	require.Equal(t, http.StatusOK, rec.Code, "POST /v1/render with Roots: body %s", rec.Body.String())
	var res wireResult
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &res), "decode %s", rec.Body.String())
	assert.False(t, res.DryRun, "a render with Roots is not a dry run")
	id := rec.Header().Get("X-Request-Id")
	want := filepath.Join(roots, id, "config", "settings.json")
	require.Len(t, res.Files, 1, "files of the render")
	assert.Equal(t, want, res.Files[0].Written, "file written under Roots/<request id>/config")
	for _, d := range []string{"config", "run", "checkout"} {
		fi, err := os.Stat(filepath.Join(roots, id, d))
		require.NoError(t, err, "stat root %s", d)
		assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "mode of root %s", d)
	}

	rec = do(s.Handler(), http.MethodPost, "/v1/render", requestBody("trap"))
	require.Equal(t, http.StatusBadGateway, rec.Code, "POST /v1/render failing with Roots")
	_, err := os.Stat(filepath.Join(roots, rec.Header().Get("X-Request-Id")))
	assert.True(t, errors.Is(err, os.ErrNotExist), "roots of a failed render are removed, stat said %v", err)
}

func TestAccessLog(t *testing.T) {
	s, logs := newTestServer(t, Config{}, fixedLoader(newFake("a")))
	rec := do(s.Handler(), http.MethodPost, "/v1/render", requestBody("reject"))
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, "POST /v1/render rejected")
	var access []map[string]any
	for _, r := range logs.records(t) {
		if r["msg"] == "render" {
			access = append(access, r)
		}
	}
	require.Len(t, access, 1, "one access log line per request; logs:\n%s", logs.String())
	line := access[0]
	assert.Equal(t, "INFO", line["level"], "access log level")
	assert.Equal(t, "reject", line["harness"], "access log harness")
	assert.Equal(t, OutcomeRejected, line["outcome"], "access log outcome")
	assert.Equal(t, float64(422), line["status"], "access log status")
	assert.Contains(t, line, "duration", "access log duration")
	assert.Contains(t, line["err"], "[REDACTED]", "the logged error masks the secret")
	assert.NotContains(t, logs.String(), testSecret, "logs echo a secret")
	assert.NotContains(t, logs.String(), "mcp.example.com", "logs hold the request body")
}

func TestNewFailsWithoutGoodSet(t *testing.T) {
	_, err := New(context.Background(), Config{})
	require.Error(t, err, "New without a loader")
	boom := errors.New("policies do not compile")
	_, err = New(context.Background(), Config{Loader: func(context.Context) (Renderer, error) { return nil, boom }})
	require.ErrorIs(t, err, boom, "New with a failing loader")
}

// TestScrubber: serve's error scrubber masks a request's secrets with loadout redact's model
// (every spelling, the credential alone) and nothing else: an ordinary header value such as
// X-Client: loadout, an arg and the user stay readable, whether the error carries the request's
// redaction set (host.RequestError) or only the body says which values are secrets.
func TestScrubber(t *testing.T) {
	body := `{"mcpServers":[{"id":"a","command":"/bin/a","args":["not-secret"],"env":{"A":"plain-secret","B":"quo\"te\u00e9"},"secretKeys":["A","B"]},` +
		`{"id":"h","transport":"http","url":"https://h.example.com","headers":{"X-Client":"loadout","X-Key":"Bearer hdr-secret-1"},"secretKeys":["x-key"]}],` +
		`"tokens":{"a":"tok-secret"},"run":{"user":"alice"}}`
	tests := []struct {
		in, want string
	}{
		{in: "env A=plain-secret refused", want: "env A=[REDACTED] refused"},
		{in: `escaped quo\"teé and quo"teé, quoted "quo\"teé"`, want: `escaped [REDACTED] and [REDACTED], quoted "[REDACTED]"`},
		{in: "token tok-secret", want: "token [REDACTED]"},
		{in: "header Bearer hdr-secret-1, credential hdr-secret-1", want: "header [REDACTED], credential [REDACTED]"},
		{in: "X-Client: loadout", want: "X-Client: loadout"},
		{in: "args not-secret and user alice stay", want: "args not-secret and user alice stay"},
	}
	plain := errors.New("boom")
	carried := &host.RequestError{Err: plain, Secrets: slices.Concat(
		redact.Spellings("plain-secret"), redact.Spellings("quo\"teé"), redact.Spellings("tok-secret"), redact.Spellings("Bearer hdr-secret-1"))}
	for name, sc := range map[string]*scrubber{
		"from the body":         newErrorScrubber([]byte(body), plain),
		"from the error's set":  newErrorScrubber(nil, carried),
		"from the set, wrapped": newErrorScrubber([]byte(`{}`), fmt.Errorf("render: %w", carried)),
	} {
		for _, tc := range tests {
			assert.Equal(t, tc.want, sc.clean(tc.in), "%s: scrubber.clean(%q)", name, tc.in)
		}
	}
	minted := newErrorScrubber([]byte(`{"env":`), plain, "minted-token-1")
	assert.Equal(t, "x [REDACTED] loadout", minted.clean("x minted-token-1 loadout"), "a body that does not parse: only the minted tokens")
	undeclared := newErrorScrubber([]byte(`{"mcpServers":[{"id":"h","transport":"http","url":"https://h.example.com","headers":{"X-Client":"loadout"}}]}`), plain)
	assert.Equal(t, "header X-Client: loadout", undeclared.clean("header X-Client: loadout"), "a header the request does not hold secret is never masked")
}

// TestSlowClientsDoNotTakeSlots: clients that send headers and one byte of their body hold
// their connections while a legitimate request still gets a render slot, because the body is
// read before a slot is taken.
func TestSlowClientsDoNotTakeSlots(t *testing.T) {
	fake := newFake("claude")
	s, _ := newTestServer(t, Config{MaxConcurrent: 1, QueueWait: -1, BodyTimeout: time.Minute}, fixedLoader(fake))
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	const slow = 4
	for i := 0; i < slow; i++ {
		c, err := net.Dial("tcp", ts.Listener.Addr().String())
		require.NoError(t, err, "dial slow client %d", i)
		defer c.Close()
		_, err = io.WriteString(c, "POST /v1/render HTTP/1.1\r\nHost: loadout\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
		require.NoError(t, err, "slow client %d sends headers and one byte", i)
	}
	eventually(t, "the slow clients' requests to be in flight", func() bool { return gaugeValue(t, s.metrics.inflight) == slow })
	resp, err := http.Post(ts.URL+"/v1/render", "application/json", strings.NewReader(requestBody("claude")))
	require.NoError(t, err, "legitimate POST /v1/render")
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "legitimate render while %d slow clients hold connections: %s", slow, b)
}
