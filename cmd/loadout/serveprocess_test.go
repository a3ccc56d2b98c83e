package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// clockTicks is the kernel's USER_HZ, the unit of utime and stime in /proc/<pid>/stat: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// serveBinary is the loadout binary BenchmarkServeProcess runs: $LOADOUT_BIN, else bin/loadout
// at the repository root (./build.sh builds it, with Wasmtime where cgo works).
func serveBinary(b *testing.B) string {
	if p := os.Getenv("LOADOUT_BIN"); p != "" {
		return p
	}
	p, err := filepath.Abs(filepath.Join("..", "..", "bin", "loadout"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		b.Fatalf("no loadout binary at %s: run ./build.sh (or set LOADOUT_BIN)", p)
	}
	return p
}

// serveProcess is a `loadout serve` started as its own process.
type serveProcess struct {
	cmd *exec.Cmd
	url string
}

var servingLine = regexp.MustCompile(`loadout: listening on (http://127\.0\.0\.1:\d+)`)

// startServeProcess runs bin serve on a loopback port with the engine and extra flags; ok is
// false when the binary has no such engine.
func startServeProcess(b *testing.B, bin, engine string, extra ...string) (*serveProcess, bool) {
	args := append([]string{"--log-level", "warn", "serve", "--addr", "127.0.0.1:0", "--engine", engine}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(os.TempDir(), "loadout-serve-bench-cache"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var log bytes.Buffer
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
			go func() { _, _ = io.Copy(io.Discard, stderr) }()
			return &serveProcess{cmd: cmd, url: m[1] + "/v1/render"}, true
		}
	}
	_ = cmd.Wait()
	if strings.Contains(log.String(), "built without it") {
		return nil, false
	}
	b.Fatalf("loadout %s did not start: %s", strings.Join(args, " "), log.String())
	return nil, false
}

// stop ends the process with SIGTERM (so a --cpu-profile is written) and waits for it.
func (p *serveProcess) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// usage is the process's user and system CPU time and its minor page faults so far, from
// /proc/<pid>/stat.
func (p *serveProcess) usage(b *testing.B) (time.Duration, int64) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	// The command name (field 2) is in parentheses and may hold spaces: count from after it.
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+2:]))
	minflt, err0 := strconv.ParseInt(f[7], 10, 64) // field 10
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err0 != nil || err1 != nil || err2 != nil {
		b.Fatalf("parse /proc/%d/stat: %q", p.cmd.Process.Pid, raw)
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, minflt
}

// BenchmarkServeProcess drives `loadout serve` as a separate process over loopback, as a
// platform does, posting examples/request.json (a dry run) from 1, 2, 4 and 8 closed-loop
// clients on each engine the binary has. It reports renders/s, the p50 and p99 latency, the
// server's CPU per render (from /proc/<pid>/stat, so the client's own work is not counted) and
// the share answered 503, with the server's minor page faults per render. The same binary runs both engines, one after the other, so their
// figures are comparable within one run. With LOADOUT_SERVE_PROFILE=DIR each engine's server
// writes a CPU profile to DIR/<engine>.pprof (`go tool pprof`).
//
//	go test ./cmd/loadout -run '^$' -bench ServeProcess -benchtime 2000x
func BenchmarkServeProcess(b *testing.B) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		b.Skip("needs Linux's /proc for the server's CPU time")
	}
	bin := serveBinary(b)
	body, err := os.ReadFile(filepath.Join("..", "..", "examples", "request.json"))
	if err != nil {
		b.Fatal(err)
	}
	profiles := os.Getenv("LOADOUT_SERVE_PROFILE")
	for _, engine := range []string{"wasmtime", "wazero"} {
		var extra []string
		if profiles != "" {
			extra = append(extra, "--cpu-profile", filepath.Join(profiles, engine+".pprof"))
		}
		p, ok := startServeProcess(b, bin, engine, extra...)
		if !ok {
			b.Logf("%s: this binary has no %s engine", bin, engine)
			continue
		}
		tr := &http.Transport{MaxIdleConnsPerHost: 8}
		post := func() (int, error) {
			req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, p.url, bytes.NewReader(body))
			if err != nil {
				return 0, err
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := tr.RoundTrip(req)
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
		for range 20 { // compile, fill the instance pools, warm the connections
			if _, err := post(); err != nil {
				p.stop()
				b.Fatal(err)
			}
		}
		for _, c := range []int{1, 2, 4, 8} {
			b.Run(fmt.Sprintf("engine=%s/c=%d", engine, c), func(b *testing.B) {
				lat := make([]time.Duration, b.N)
				var next, shed atomic.Int64
				var wg sync.WaitGroup
				cpu0, faults0 := p.usage(b)
				b.ResetTimer()
				start := time.Now()
				for range c {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							i := next.Add(1) - 1
							if i >= int64(b.N) {
								return
							}
							t0 := time.Now()
							code, err := post()
							lat[i] = time.Since(t0)
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
				cpu, faults := p.usage(b)
				cpu, faults = cpu-cpu0, faults-faults0
				slices.Sort(lat)
				ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "renders/s")
				b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
				b.ReportMetric(ms(lat[(len(lat)*99)/100]), "p99-ms")
				b.ReportMetric(ms(cpu)/float64(b.N), "server-cpu-ms/render")
				b.ReportMetric(float64(faults)/float64(b.N), "server-faults/render")
				b.ReportMetric(100*float64(shed.Load())/float64(b.N), "503-%")
			})
		}
		tr.CloseIdleConnections()
		p.stop()
	}
}
