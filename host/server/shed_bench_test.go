package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadout-dev/loadout/host/tokens"
)

// shedConcurrency is how many clients BenchmarkServeShed runs at once: four times a 2-core
// machine's render slots.
const shedConcurrency = 8

// manyServersRequest is a request of n http servers.
func manyServersRequest(n int) string {
	var b strings.Builder
	b.WriteString(`{"harness":"claude","mcpServers":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"s%d","transport":"http","url":"https://s%d.example.com/mcp","allowedTools":["search","fetch"]}`, i, i)
	}
	b.WriteString(`]}`)
	return b.String()
}

// BenchmarkServeShed sends renders to the real Host over HTTP from shedConcurrency clients at
// once, each sending its next request when the last was answered, on the server's default
// queue settings with every render written under Roots, and reports the share answered 503
// (503-%) and renders/s: a typical request, a request of 60 servers, and a request minting two
// run tokens into a file (bbolt) store. It fails when more than 1% of the typical or minting
// renders were shed: those are what the defaults are for.
func BenchmarkServeShed(b *testing.B) {
	cases := []struct {
		name  string
		body  string
		store bool // a bbolt token store
		limit float64
	}{
		{name: "ordinary", body: realRequest("claude"), limit: 1},
		{name: "servers-60", body: manyServersRequest(60)},
		{name: "mint-bolt", body: mintRequest("claude", "run-shed"), store: true, limit: 1},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			cfg := Config{Loader: realLoader(b), Registry: prometheus.NewRegistry(), Roots: b.TempDir()}
			if tc.store {
				st, err := tokens.OpenBolt(filepath.Join(b.TempDir(), "tokens.db"), nil)
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				if cfg.Tokens, err = tokens.New(tokens.Config{Store: st}); err != nil {
					b.Fatal(err)
				}
			}
			s, err := New(context.Background(), cfg)
			if err != nil {
				b.Fatalf("New: %v", err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- s.Serve(ctx, ln) }()
			tr := &http.Transport{MaxIdleConnsPerHost: shedConcurrency}
			defer func() {
				tr.CloseIdleConnections()
				cancel()
				<-done
			}()
			url := "http://" + ln.Addr().String() + "/v1/render"
			post := func() (int, error) {
				resp, err := tr.RoundTrip(mustRequest(url, tc.body))
				if err != nil {
					return 0, err
				}
				msg, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusServiceUnavailable {
					return resp.StatusCode, fmt.Errorf("status %d: %s", resp.StatusCode, msg)
				}
				return resp.StatusCode, nil
			}
			if _, err := post(); err != nil { // load the plugins before the clock starts
				b.Fatal(err)
			}
			var next, shed atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for range shedConcurrency {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						code, err := post()
						if err != nil {
							b.Error(err)
							return
						}
						if code == http.StatusServiceUnavailable {
							shed.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			rate := 100 * float64(shed.Load()) / float64(b.N)
			b.ReportMetric(rate, "503-%")
			b.ReportMetric(float64(b.N-int(shed.Load()))/elapsed.Seconds(), "renders/s")
			if tc.limit > 0 && b.N >= 100 && rate > tc.limit {
				b.Errorf("%.1f%% of %d renders answered 503 at concurrency %d, want at most %.0f%%", rate, b.N, shedConcurrency, tc.limit)
			}
		})
	}
}

func mustRequest(url, body string) *http.Request {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return req
}
