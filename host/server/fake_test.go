package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/spec"
)

// testSecret is a value the tests put under env/headers/tokens; it must never come back.
const testSecret = "s3cr3t-t0ken-value"

// fakeRenderer renders by the request's harness (the ?harness= override first):
//
//	claude, codex: a result echoing the harness, with one "url_not_allowed" drop
//	reject:        a *spec.RejectError whose message quotes the request's secret
//	badjson:       a *spec.RejectError with code invalid_json
//	trap:          an *engine.TrapError
//	spin:          engine.ErrTimeout
//	slow:          waits for ctx or the gate, then answers like claude
//	panic:         panics
//	broken:        a plain error (internal)
//	roots:         writes a file under the config root
type fakeRenderer struct {
	name    string
	gate    chan struct{} // closed to release "slow" renders; nil = wait for ctx only
	started chan struct{} // receives once per "slow" render when it starts (if non-nil)
	calls   atomic.Int64
	closed  atomic.Int32
}

var fakeHarnesses = []string{"claude", "codex", "reject", "badjson", "trap", "spin", "slow", "panic", "broken", "roots"}

func newFake(name string) *fakeRenderer { return &fakeRenderer{name: name} }

func (f *fakeRenderer) Plugins() []host.PluginInfo {
	var ps []host.PluginInfo
	for _, h := range fakeHarnesses {
		ps = append(ps, host.PluginInfo{Name: f.name + "-" + h, Version: "1.0.0", ABIVersion: 1, Harness: h, Source: "builtin"})
	}
	return ps
}

func (f *fakeRenderer) Close(context.Context) error {
	if f.closed.Add(1) > 1 {
		return errors.New("fake renderer closed twice")
	}
	return nil
}

func (f *fakeRenderer) Render(ctx context.Context, rr host.RenderRequest) (*host.Result, error) {
	f.calls.Add(1)
	if f.closed.Load() != 0 {
		return nil, errors.New("render on a closed renderer")
	}
	var body struct {
		Harness string `json:"harness"`
	}
	if err := json.Unmarshal(rr.Body, &body); err != nil {
		return nil, &spec.RejectError{Code: spec.CodeInvalidJSON, Message: err.Error()}
	}
	h := body.Harness
	if rr.Harness != "" {
		h = rr.Harness
	}
	ok := &host.Result{
		Harness: h, DryRun: rr.DryRun, Servers: []string{"docs"}, Skills: []string{}, Resources: host.ResourceList{},
		Dropped: []spec.Diagnostic{{Kind: "server", Name: "x", Field: "mcpServers[1].url", Code: "url_not_allowed", Message: "plain http to a remote host"}},
		Files:   []host.FileResult{}, Args: []string{"--strict-mcp-config"}, Env: []host.EnvVar{}, Warnings: []host.Warning{},
		Prompt: "renderer " + f.name,
	}
	switch h {
	case "claude", "codex":
		return ok, nil
	case "reject":
		return nil, fmt.Errorf("vet: %w", &spec.RejectError{Field: "mcpServers[0].env", Code: "env_refused", Message: "value " + testSecret + " refused"})
	case "badjson":
		return nil, &spec.RejectError{Code: spec.CodeInvalidJSON, Message: "unexpected end"}
	case "trap":
		return nil, fmt.Errorf("render claude: %w", &engine.TrapError{Export: "render", Msg: "unreachable " + testSecret})
	case "spin":
		return nil, fmt.Errorf("render: %w", engine.ErrTimeout)
	case "slow":
		if f.started != nil {
			f.started <- struct{}{}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-f.gate:
			return ok, nil
		}
	case "panic":
		panic("renderer bug " + testSecret)
	case "roots":
		if rr.DryRun {
			return nil, errors.New("roots render got a dry run")
		}
		p := filepath.Join(rr.Roots.Config, "settings.json")
		if err := os.WriteFile(p, []byte("{}"), 0o600); err != nil {
			return nil, err
		}
		ok.Files = []host.FileResult{{Root: "config", Path: "settings.json", Mode: "0600", Bytes: 2, Written: p}}
		return ok, nil
	}
	return nil, fmt.Errorf("broken renderer for %q", h)
}

// logBuffer is a concurrency-safe buffer for a JSON slog handler.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// records decodes every JSON log line.
func (l *logBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), "log line %q is not JSON", line)
		out = append(out, m)
	}
	return out
}

// newTestServer builds a Server over the given loader with a JSON debug logger into logs.
func newTestServer(t *testing.T, cfg Config, loader Loader) (*Server, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	cfg.Loader = loader
	cfg.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	s, err := New(context.Background(), cfg)
	require.NoError(t, err, "New(%+v)", cfg)
	return s, logs
}

// fixedLoader always returns r.
func fixedLoader(r Renderer) Loader {
	return func(context.Context) (Renderer, error) { return r, nil }
}

// do sends one request to h and returns the recorder.
func do(h http.Handler, method, target, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// requestBody is a render request for harness carrying testSecret in env, headers and tokens.
func requestBody(harness string) string {
	return fmt.Sprintf(`{"harness":%q,"mcpServers":[{"id":"fs","command":"/bin/fs","env":{"FS_TOKEN":%q},"secretKeys":["FS_TOKEN"]},`+
		`{"id":"docs","transport":"http","url":"https://mcp.example.com","headers":{"Authorization":"Bearer %s"}}],"tokens":{"fs":%q}}`,
		harness, testSecret, testSecret, testSecret)
}

// counter reads one labelled counter.
func counter(t *testing.T, v *prometheus.CounterVec, labels ...string) float64 {
	t.Helper()
	return metricValue(t, v.WithLabelValues(labels...))
}

// metricValue reads a counter or gauge.
func metricValue(t testing.TB, c prometheus.Metric) float64 {
	t.Helper()
	var m dto.Metric
	require.NoError(t, c.Write(&m), "read metric %s", c.Desc())
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	t.Fatalf("metric %s is neither a counter nor a gauge", c.Desc())
	return 0
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// gaugeValue reads a gauge.
func gaugeValue(t testing.TB, g prometheus.Gauge) float64 { return metricValue(t, g) }

// rejectErr is a policy refusal of the whole request.
func rejectErr() error {
	return &spec.RejectError{Code: "policy_denied", Message: "every server was denied"}
}

// wireResult is a client's view of the host.Result JSON document (host.ResourceList only
// marshals).
type wireResult struct {
	Harness   string              `json:"harness"`
	DryRun    bool                `json:"dryRun"`
	Servers   []string            `json:"servers"`
	Resources map[string][]string `json:"resources"`
	Dropped   []spec.Diagnostic   `json:"dropped"`
	Files     []host.FileResult   `json:"files"`
	Prompt    string              `json:"prompt"`
}
