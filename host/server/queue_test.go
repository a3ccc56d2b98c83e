package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQueueLength: with the slot taken and the queue full, a render is answered 503 at once,
// however long the queue would let it wait; the queued one gets the slot when it frees.
func TestQueueLength(t *testing.T) {
	fake := newFake("a")
	fake.gate = make(chan struct{})
	fake.started = make(chan struct{}, 1)
	s, _ := newTestServer(t, Config{MaxConcurrent: 1, QueueLength: 1, QueueWait: time.Hour}, fixedLoader(fake))
	h := s.Handler()
	running := make(chan *httptest.ResponseRecorder)
	go func() { running <- do(h, http.MethodPost, "/v1/render", requestBody("slow")) }()
	<-fake.started
	queued := make(chan *httptest.ResponseRecorder)
	go func() { queued <- do(h, http.MethodPost, "/v1/render", requestBody("claude")) }()
	eventually(t, "the second request to queue", func() bool { return s.queued.Load() == 1 })

	rec := do(h, http.MethodPost, "/v1/render", requestBody("claude"))
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, "a render over the queue length: %s", rec.Body.String())
	var eb ErrorBody
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &eb), "decode %s", rec.Body.String())
	assert.Equal(t, OutcomeOverloaded, eb.Error.Code)
	assert.Equal(t, "1", rec.Header().Get("Retry-After"))

	close(fake.gate)
	assert.Equal(t, http.StatusOK, (<-running).Code, "the running render")
	assert.Equal(t, http.StatusOK, (<-queued).Code, "the queued render, once the slot freed")
	assert.Zero(t, s.queued.Load(), "nothing left queued")
}

// TestQueueDefaults: the defaults queue four times the slots, for seconds, not a fixed 100 ms.
func TestQueueDefaults(t *testing.T) {
	s, _ := newTestServer(t, Config{MaxConcurrent: 3}, fixedLoader(newFake("a")))
	assert.Equal(t, 12, s.cfg.QueueLength)
	assert.Equal(t, DefaultQueueWait, s.cfg.QueueWait)
	assert.GreaterOrEqual(t, DefaultQueueWait, time.Second)
}
