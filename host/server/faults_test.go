package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/tokens"
	"github.com/loadout-dev/loadout/internal/testredis"
)

// TestHealthzTokenStore: /healthz says degraded, with the store's state, while the token
// store does not answer, and ok again once it does.
func TestHealthzTokenStore(t *testing.T) {
	srv := testredis.StartServer(t, testredis.Durable...)
	st, err := tokens.OpenRedis(context.Background(), "redis://"+srv.Addr+"/0", tokens.Options{})
	require.NoError(t, err)
	defer st.Close()
	svc, err := tokens.New(tokens.Config{Store: st})
	require.NoError(t, err)
	s, _ := newTestServer(t, Config{Tokens: svc}, fixedLoader(newFake("a")))
	h := s.Handler()
	health := func() (int, HealthBody) {
		rec := do(h, http.MethodGet, "/healthz", "")
		var hb HealthBody
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &hb), "decode %s", rec.Body.String())
		return rec.Code, hb
	}
	code, hb := health()
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok", hb.Status)
	require.NotNil(t, hb.TokenStore)
	assert.Equal(t, "ok", hb.TokenStore.State)

	srv.Kill()
	code, hb = health()
	assert.Equal(t, http.StatusServiceUnavailable, code, "/healthz with the token store down")
	assert.Equal(t, "degraded", hb.Status)
	require.NotNil(t, hb.TokenStore)
	assert.Equal(t, "unavailable", hb.TokenStore.State)
	assert.NotEmpty(t, hb.TokenStore.Error, "the store's state says why")
	assert.NotZero(t, hb.Generation, "the renderer is still reported")

	srv.Restart()
	eventually(t, "/healthz ok once Redis is back", func() bool { c, _ := health(); return c == http.StatusOK })
}

// TestBodyTimeout: a body that does not arrive within BodyTimeout is answered 408, not 400.
func TestBodyTimeout(t *testing.T) {
	s, logs := newTestServer(t, Config{BodyTimeout: 200 * time.Millisecond}, fixedLoader(newFake("a")))
	base, _ := startServe(t, s)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "POST /v1/render HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(30*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "read the answer to a stalled body")
	defer resp.Body.Close()
	var eb ErrorBody
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&eb))
	assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode, "status of a stalled body (%+v)", eb)
	assert.Equal(t, OutcomeBodyTimeout, eb.Error.Code)
	assert.Contains(t, logs.String(), `"status":408`, "the access log")
}

// vettedFailure renders nothing: every render fails with err, as a vetted request's failure
// (host.RequestError) whose secrets are secrets.
type vettedFailure struct {
	err     error
	secrets []string
}

func (v *vettedFailure) Render(context.Context, host.RenderRequest) (*host.Result, error) {
	return nil, &host.RequestError{Err: v.err, Secrets: v.secrets}
}

func (v *vettedFailure) Plugins() []host.PluginInfo {
	return []host.PluginInfo{{Name: "a-claude", Version: "1.0.0", ABIVersion: 1, Harness: "claude", Source: "builtin"}}
}

func (v *vettedFailure) Close(context.Context) error { return nil }

// TestInternalErrorScrubbedBySecrets: a disk-full write fails 500 with the request id in the
// answer, and the logged cause masks the request's secrets, and only them: a header value that
// is not a secret ("loadout") stays, and so do the paths that contain it.
func TestInternalErrorScrubbedBySecrets(t *testing.T) {
	const path = "/srv/roots/.loadout-stage-12/config/settings.json"
	fail := &vettedFailure{
		err:     fmt.Errorf("write plan: open %s (client loadout, key Bearer %s): %w", path, testSecret, syscall.ENOSPC),
		secrets: []string{"Bearer " + testSecret},
	}
	s, logs := newTestServer(t, Config{}, fixedLoader(fail))
	body := `{"harness":"claude","mcpServers":[{"id":"docs","transport":"http","url":"https://mcp.example.com/mcp",` +
		`"headers":{"X-Client":"loadout","Authorization":"Bearer ` + testSecret + `"},"secretKeys":["Authorization"]}]}`
	rec := do(s.Handler(), http.MethodPost, "/v1/render", body)
	require.Equal(t, http.StatusInternalServerError, rec.Code, rec.Body.String())
	var eb ErrorBody
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &eb))
	id := rec.Header().Get("X-Request-Id")
	require.NotEmpty(t, id)
	assert.Contains(t, eb.Error.Message, id, "a 500 names the request id")

	var line map[string]any
	for _, r := range logs.records(t) {
		if r["msg"] == "render" {
			line = r
		}
	}
	require.NotNil(t, line, "the access log line")
	assert.Equal(t, id, line["id"])
	logged, _ := line["err"].(string)
	assert.Contains(t, logged, path, "a path holding a non-secret header value is logged as it is")
	assert.Contains(t, logged, "client loadout", "a non-secret header value is not masked")
	assert.Contains(t, logged, "no space left on device")
	assert.NotContains(t, logs.String(), testSecret, "the secret, and its credential alone, are masked")
}

// TestForcedShutdownLogsNoAnswer: a render cut off when the grace period runs out gets no
// answer (its connection is closed), and the access log says so instead of logging a 503.
func TestForcedShutdownLogsNoAnswer(t *testing.T) {
	fake := newFake("a")
	fake.started = make(chan struct{}, 1)
	s, logs := newTestServer(t, Config{ShutdownGrace: 100 * time.Millisecond, Timeout: time.Minute}, fixedLoader(fake))
	base, stop := startServe(t, s)
	got := make(chan error, 1)
	go func() {
		resp, err := http.Post(base+"/v1/render", "application/json", strings.NewReader(requestBody("slow")))
		if err == nil {
			resp.Body.Close()
			err = fmt.Errorf("answered %d", resp.StatusCode)
		}
		got <- err
	}()
	<-fake.started
	require.Error(t, stop(), "Serve when the grace period ran out")
	require.Error(t, <-got, "the cut-off client gets no answer")
	var line map[string]any
	for _, r := range logs.records(t) {
		if r["msg"] == "render" {
			line = r
		}
	}
	require.NotNil(t, line, "the access log line; logs:\n%s", logs.String())
	assert.Equal(t, float64(0), line["status"], "logged status of a render whose client got no answer")
	assert.Equal(t, OutcomeClosed, line["outcome"])
}
