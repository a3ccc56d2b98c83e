package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
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
	post, stop := serveForBench(b, loader, query)
	defer stop()
	b.SetParallelism(4)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := post(body); err != nil {
				b.Error(err)
				return
			}
		}
	})
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "renders/s")
}

// serveForBench starts a server with loader on a loopback port; post sends one render and
// fails on any answer but 200; stop shuts the server down.
func serveForBench(b *testing.B, loader Loader, query string) (post func(body string) error, stop func()) {
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
	post = func(body string) error {
		resp, err := client.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			return fmt.Errorf("POST %s: %w", url, err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("POST %s: status %d, want 200: %s", url, resp.StatusCode, msg)
		}
		return nil
	}
	stop = func() {
		tr.CloseIdleConnections()
		cancel()
		if err := <-done; err != nil {
			b.Errorf("Serve: %v", err)
		}
	}
	return post, stop
}

// BenchmarkServeLatency sends renders to the real Host over HTTP at half the engine's
// throughput target (serveTargetRate: 1,000/s on Wasmtime, 300/s on wazero), open loop: each
// request leaves at its scheduled time whether or not the earlier ones were answered, and its
// latency is counted from that time, so a stall shows in the tail instead of slowing the
// sender. It reports the median and 99th percentile latency and the rate achieved.
func BenchmarkServeLatency(b *testing.B) {
	post, stop := serveForBench(b, realLoader(b), "")
	defer stop()
	body := realRequest("claude")
	if err := post(body); err != nil { // load the host before the clock starts
		b.Fatal(err)
	}
	interval := time.Second / time.Duration(serveTargetRate/2)
	lat := make([]time.Duration, b.N)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		at := start.Add(time.Duration(i) * interval)
		time.Sleep(time.Until(at))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := post(body); err != nil {
				b.Error(err)
			}
			lat[i] = time.Since(at)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[(len(lat)*99)/100]), "p99-ms")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "renders/s")
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
