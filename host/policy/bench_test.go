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
		d, err := e.Decide(ctx, req, benchHostEnv)
		if err != nil {
			b.Fatalf("Decide: %v", err)
		}
		if _, err := Vet(req, d, benchHostEnv, VetOptions{ContentByRef: true}); err != nil {
			b.Fatalf("Vet: %v", err)
		}
	}
	b.ReportMetric(float64(threadCPU()-start)/float64(b.N), "cpu-ns/op")
}

func BenchmarkDecideVet5(b *testing.B)  { benchmarkDecideVet(b, 5) }
func BenchmarkDecideVet50(b *testing.B) { benchmarkDecideVet(b, 50) }

// BenchmarkDecideStages measures each stage of Decide+Vet on the 5-server request, and the
// decision document evaluated both ways, side by side: by the residual (what Decide runs for
// the embedded policies) and by OPA's topdown over the prepared query (what it runs for a
// policy outside the residual's fragment).
func BenchmarkDecideStages(b *testing.B) {
	ctx := context.Background()
	e, err := New(ctx, Config{})
	if err != nil {
		b.Fatalf("New: %v", err)
	}
	req := benchRequest(5)
	facts := computeFacts(req, benchHostEnv, e.tunables)
	input := inputValue(req, &facts, e.tunables)
	doc, err := e.evalQuery(ctx, input)
	if err != nil {
		b.Fatalf("evalQuery: %v", err)
	}
	d, err := decodeDecision(doc.Value, req)
	if err != nil {
		b.Fatalf("decodeDecision: %v", err)
	}
	stages := []struct {
		name string
		run  func() error
	}{
		{"facts", func() error { computeFacts(req, benchHostEnv, e.tunables); return nil }},
		{"input", func() error { inputValue(req, &facts, e.tunables); return nil }},
		{"eval-residual", func() error {
			if _, ok := e.residual.eval(ctx, input); !ok {
				return fmt.Errorf("residual did not decide")
			}
			return nil
		}},
		{"eval-opa", func() error { _, err := e.evalQuery(ctx, input); return err }},
		{"decode", func() error { _, err := decodeDecision(doc.Value, req); return err }},
		{"vet", func() error { _, err := Vet(req, d, benchHostEnv, VetOptions{ContentByRef: true}); return err }},
	}
	for _, s := range stages {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := s.run(); err != nil {
					b.Fatalf("%s: %v", s.name, err)
				}
			}
		})
	}
}
