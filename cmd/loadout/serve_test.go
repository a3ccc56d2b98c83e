package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a buffer safe to write from the command and read from the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var listeningLine = regexp.MustCompile(`loadout: listening on (http://127\.0\.0\.1:\d+)`)

// startServeCmd runs `loadout serve` with args on a random loopback port and returns its base
// URL, its stderr, and a stop function that cancels it and returns its exit code.
func startServeCmd(t *testing.T, args ...string) (string, *syncBuffer, func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncBuffer{}
	code := make(chan int, 1)
	argv := append([]string{"--log-level", "info", "--log-format", "json", "serve", "--addr", "127.0.0.1:0"}, args...)
	go func() {
		code <- run(ctx, argv, strings.NewReader(""), io.Discard, stderr, []string{"PATH=/usr/bin", "HOME=/home/x"})
	}()
	var base string
	deadline := time.Now().Add(10 * time.Second)
	for base == "" {
		select {
		case c := <-code:
			t.Fatalf("loadout %s exited with %d before listening: %s", strings.Join(argv, " "), c, stderr.String())
		default:
		}
		if m := listeningLine.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("loadout %s did not print its address: %s", strings.Join(argv, " "), stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	var once sync.Once
	var exit int
	stop := func() int {
		once.Do(func() {
			cancel()
			exit = <-code
		})
		return exit
	}
	t.Cleanup(func() { stop() })
	return base, stderr, stop
}

func TestServeCommand(t *testing.T) {
	policies := t.TempDir()
	base, stderr, stop := startServeCmd(t, "--policies", policies, "--max-body", "256")

	resp, err := http.Get(base + "/healthz")
	require.NoError(t, err, "GET /healthz")
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "GET /healthz on a started server")

	resp, err = http.Post(base+"/v1/render", "application/json", strings.NewReader(`{"harness":"claude","pad":"`+strings.Repeat("x", 300)+`"}`))
	require.NoError(t, err, "POST /v1/render over --max-body")
	var eb struct {
		Error struct{ Code string } `json:"error"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&eb), "decode the 413 body")
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "POST /v1/render over --max-body 256")
	assert.Equal(t, "too_large", eb.Error.Code, "error code over --max-body")

	// SIGHUP reloads; the log says so.
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP), "send SIGHUP")
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "renderer reloaded") },
		5*time.Second, 10*time.Millisecond, "reload after SIGHUP; stderr: %s", stderr.String())

	// Removing the policy directory makes the watched reload fail; the server keeps serving.
	require.NoError(t, os.Remove(policies), "remove the policies directory")
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "reload failed") },
		5*time.Second, 10*time.Millisecond, "failed reload after the policies went away; stderr: %s", stderr.String())
	resp, err = http.Get(base + "/healthz")
	require.NoError(t, err, "GET /healthz after a failed reload")
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "GET /healthz after a failed reload")
	assert.Contains(t, stderr.String(), `"msg":"render"`, "access log line at info")

	assert.Equal(t, exitOK, stop(), "exit code after cancellation")
}

func TestServeCommandUsage(t *testing.T) {
	dir := t.TempDir()
	notWasm := filepath.Join(dir, "p.txt")
	require.NoError(t, os.WriteFile(notWasm, []byte("x"), 0o644), "write a non-wasm file")
	tests := []struct {
		name string
		args []string
	}{
		{name: "unknown engine", args: []string{"--engine", "v8"}},
		{name: "zero max body", args: []string{"--max-body", "0"}},
		{name: "negative concurrency", args: []string{"--max-concurrent", "-1"}},
		{name: "zero timeout", args: []string{"--timeout", "0s"}},
		{name: "missing policies", args: []string{"--policies", filepath.Join(dir, "none")}},
		{name: "plugin not wasm", args: []string{"--plugin", notWasm}},
		{name: "missing plugin", args: []string{"--plugin", filepath.Join(dir, "none.wasm")}},
		{name: "roots not a directory", args: []string{"--roots", notWasm}},
		{name: "positional argument", args: []string{"extra"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			argv := append([]string{"serve", "--addr", "127.0.0.1:0"}, tc.args...)
			code := run(context.Background(), argv, strings.NewReader(""), io.Discard, &stderr, nil)
			assert.Equal(t, exitUsage, code, "loadout %s: exit code (stderr %s)", strings.Join(argv, " "), stderr.String())
		})
	}
}
