package policy

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/loadout-dev/loadout/host/spec"
)

// benchRequest is a realistic request with n servers: alternating stdio servers (env with a
// secret, a refused key, tools) and http servers (a secret header, https or loopback URL).
func benchRequest(n int) *spec.Request {
	req := &spec.Request{
		Harness: "claude",
		Run:     spec.Run{User: "alice", HasUser: true},
		Skills: []spec.Skill{{Name: "review", Description: "Review code", Instructions: "Read the diff.",
			Resources: []spec.Resource{{RelPath: "templates/report.md", Content: "# Report"}}}},
	}
	for i := range n {
		id := fmt.Sprintf("srv-%d", i)
		if i%2 == 0 {
			req.Servers = append(req.Servers, spec.Server{
				Index: i, ID: id, Transport: "stdio", Command: "/usr/bin/mcp-fs", Args: []string{"--root", "."},
				Env: []spec.Pair{{Name: "FS_TOKEN", Value: fmt.Sprintf("secret-%d", i)}, {Name: "LD_PRELOAD", Value: "/x.so"},
					{Name: "LOG_LEVEL", Value: "debug"}},
				SecretKeys: []string{"FS_TOKEN"}, ToolsDeclared: true, AllowedTools: []string{"read", "write", "x,Bash"},
				Enabled: true,
			})
			req.Tokens = append(req.Tokens, spec.Pair{Name: id, Value: fmt.Sprintf("token-%d", i)})
			continue
		}
		url := "https://mcp.example.com/mcp"
		if i%4 == 1 {
			url = "http://127.0.0.1:8080/mcp"
		}
		req.Servers = append(req.Servers, spec.Server{
			Index: i, ID: id, Transport: "http", URL: url,
			Headers:    []spec.Pair{{Name: "Authorization", Value: fmt.Sprintf("Bearer h-%d", i)}, {Name: "X-Trace", Value: "1"}},
			SecretKeys: []string{"Authorization"}, Enabled: true,
		})
	}
	return req
}

var benchHostEnv = []spec.Pair{
	{Name: "PATH", Value: "/usr/bin:/bin"}, {Name: "HOME", Value: "/home/u"}, {Name: "LANG", Value: "C.UTF-8"},
	{Name: "LC_ALL", Value: "C"}, {Name: "AWS_SECRET_ACCESS_KEY", Value: "x"}, {Name: "TERM", Value: "xterm"},
}

// BenchmarkDecideVetScale runs Decide and Vet at 1, 10, 100 and 1,000 servers and reports
// the CPU time and allocations per server: flat figures across the sizes are what "linear in
// the request" means (masking every message against every secret once made 1,000 servers
// cost 20 times as much per server as 100).
func BenchmarkDecideVetScale(b *testing.B) {
	for _, n := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) { benchmarkDecideVet(b, n) })
	}
}

func benchmarkDecideVet(b *testing.B, n int) {
	ctx := context.Background()
	e, err := New(ctx, Config{})
	if err != nil {
		b.Fatalf("New: %v", err)
	}
	req := benchRequest(n)
	b.ReportAllocs()
	// cpu-ns/op is the CPU time of the benchmark's own thread per operation: on a shared
	// machine it stays meaningful when wall time (ns/op) does not.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
	b.ResetTimer()
	for b.Loop() {
		d, err := e.Decide(ctx, req, benchHostEnv, "")
		if err != nil {
			b.Fatalf("Decide: %v", err)
		}
		if _, err := Vet(req, d, benchHostEnv, VetOptions{ContentByRef: true}); err != nil {
			b.Fatalf("Vet: %v", err)
		}
	}
	cpu := float64(threadCPU()-start) / float64(b.N)
	b.ReportMetric(cpu, "cpu-ns/op")
	b.ReportMetric(cpu/float64(n), "cpu-ns/server")
}

func BenchmarkDecideVet5(b *testing.B)  { benchmarkDecideVet(b, 5) }
func BenchmarkDecideVet50(b *testing.B) { benchmarkDecideVet(b, 50) }

// BenchmarkDecide5 and BenchmarkDecide50 measure Decide alone (input document, OPA's
// evaluation of every rule, collection), the figure docs/PERFORMANCE.md reports against its
// targets (0.5 ms for 5 servers, 4 ms for 50).
func BenchmarkDecide5(b *testing.B)  { benchmarkDecide(b, 5) }
func BenchmarkDecide50(b *testing.B) { benchmarkDecide(b, 50) }

func benchmarkDecide(b *testing.B, n int) {
	ctx := context.Background()
	e, err := New(ctx, Config{})
	if err != nil {
		b.Fatalf("New: %v", err)
	}
	req := benchRequest(n)
	b.ReportAllocs()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.Decide(ctx, req, benchHostEnv, ""); err != nil {
			b.Fatalf("Decide: %v", err)
		}
	}
	b.ReportMetric(float64(threadCPU()-start)/float64(b.N), "cpu-ns/op")
}
