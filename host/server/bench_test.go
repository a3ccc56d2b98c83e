package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadout-dev/loadout/host"
)

// BenchmarkServeRender measures render throughput through the whole HTTP stack on a loopback
// port (client, server, metrics, access log to a discard handler) with a fake renderer, and
// reports renders/s.
func BenchmarkServeRender(b *testing.B) {
	benchServe(b, fixedLoader(newFake("bench")), requestBody("claude"), "")
}

// benchServe serves renders from loader on a loopback port and posts body from parallel
// clients, failing on any answer but 200.
func benchServe(b *testing.B, loader Loader, body, query string) {
	s, err := New(context.Background(), Config{Loader: loader, Registry: prometheus.NewRegistry(), QueueWait: 10 * time.Second})
	if err != nil {
		b.Fatalf("New: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatalf("listen on 127.0.0.1:0: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	client := &http.Client{Transport: tr}
	url := "http://" + ln.Addr().String() + "/v1/render" + query
	b.SetParallelism(4)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Post(url, "application/json", strings.NewReader(body))
			if err != nil {
				b.Errorf("POST %s: %v", url, err)
				return
			}
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("POST %s: status %d, want 200: %s", url, resp.StatusCode, msg)
				return
			}
		}
	})
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "renders/s")
	tr.CloseIdleConnections()
	cancel()
	if err := <-done; err != nil {
		b.Errorf("Serve: %v", err)
	}
}

// BenchmarkServeRenderHost measures render throughput through the whole HTTP stack with the
// real Host (embedded policies, the claude plugin on wazero, or on wasmtime under the wasmtime
// build tag), dry runs of a typical request, and reports renders/s.
func BenchmarkServeRenderHost(b *testing.B) {
	benchServe(b, realLoader(b), realRequest("claude"), "")
}

// BenchmarkHostRenderDirect calls the real Host's Render without HTTP, with the same request
// and parallelism as BenchmarkServeRenderHost, so the two figures separate the server's cost
// from the pipeline's.
func BenchmarkHostRenderDirect(b *testing.B) {
	r, err := realLoader(b)(context.Background())
	if err != nil {
		b.Fatalf("load host: %v", err)
	}
	defer r.Close(context.Background())
	rr := host.RenderRequest{Body: []byte(realRequest("claude")), DryRun: true}
	b.SetParallelism(4)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := r.Render(context.Background(), rr); err != nil {
				b.Errorf("Render: %v", err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "renders/s")
}
