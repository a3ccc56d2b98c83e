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

	"github.com/loadout-dev/loadout/internal/testredis"
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
	deadline := time.Now().Add(90 * time.Second)
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

// copyPolicies copies the repository's policies/ tree into a fresh directory.
func copyPolicies(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "policies")
	require.NoError(t, os.CopyFS(dst, os.DirFS(filepath.Join("..", "..", "policies"))), "copy policies/")
	return dst
}

func TestServeCommand(t *testing.T) {
	policies := copyPolicies(t)
	// The plugins built from the current sources, so the test needs no ./build.sh.
	base, stderr, stop := startServeCmd(t, append([]string{"--policies", policies, "--max-body", "1024"}, pluginArgs(t)...)...)

	resp, err := http.Post(base+"/v1/render", "application/json", strings.NewReader(
		`{"harness":"claude","mcpServers":[{"id":"docs","transport":"http","url":"https://mcp.example.com/mcp",`+
			`"headers":{"Authorization":"Bearer serve-cmd-secret"},"secretKeys":["Authorization"]}]}`))
	require.NoError(t, err, "POST /v1/render")
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err, "read the render answer")
	require.Equal(t, http.StatusOK, resp.StatusCode, "POST /v1/render for claude: %s", body)
	var res struct {
		Harness string   `json:"harness"`
		DryRun  bool     `json:"dryRun"`
		Servers []string `json:"servers"`
	}
	require.NoError(t, json.Unmarshal(body, &res), "decode %s", body)
	assert.Equal(t, "claude", res.Harness, "rendered harness")
	assert.True(t, res.DryRun, "without --roots a render is a dry run")
	assert.Equal(t, []string{"docs"}, res.Servers, "surviving servers")
	assert.NotContains(t, string(body), "serve-cmd-secret", "the answer echoes a secret")

	resp, err = http.Get(base + "/healthz")
	require.NoError(t, err, "GET /healthz")
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "GET /healthz on a started server")

	resp, err = http.Post(base+"/v1/render", "application/json", strings.NewReader(`{"harness":"claude","pad":"`+strings.Repeat("x", 2000)+`"}`))
	require.NoError(t, err, "POST /v1/render over --max-body")
	var eb struct {
		Error struct{ Code string } `json:"error"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&eb), "decode the 413 body")
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "POST /v1/render over --max-body 1024")
	assert.Equal(t, "too_large", eb.Error.Code, "error code over --max-body")

	// SIGHUP reloads; the log says so.
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP), "send SIGHUP")
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "renderer reloaded") },
		60*time.Second, 10*time.Millisecond, "reload after SIGHUP; stderr: %s", stderr.String())

	// A policy that does not compile makes the watched reload fail; the server keeps serving.
	broken := filepath.Join(policies, "loadout", "broken.rego")
	require.NoError(t, os.WriteFile(broken, []byte("package loadout.broken\n\nthis is not rego {\n"), 0o644), "write a broken policy")
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "reload failed") },
		60*time.Second, 10*time.Millisecond, "failed reload after a broken policy; stderr: %s", stderr.String())
	resp, err = http.Get(base + "/healthz")
	require.NoError(t, err, "GET /healthz after a failed reload")
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "GET /healthz after a failed reload")
	assert.Contains(t, stderr.String(), `"msg":"render"`, "access log line at info")

	assert.Equal(t, exitOK, stop(), "exit code after cancellation")
}

func TestServeCommandUsage(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "p.txt")
	require.NoError(t, os.WriteFile(notDir, []byte("x"), 0o644), "write a file")
	tests := []struct {
		name     string
		args     []string
		wantCode int
	}{
		{name: "unknown engine", args: []string{"--engine", "v8"}, wantCode: exitUsage},
		{name: "zero max body", args: []string{"--max-body", "0"}, wantCode: exitUsage},
		{name: "negative concurrency", args: []string{"--max-concurrent", "-1"}, wantCode: exitUsage},
		{name: "negative queue length", args: []string{"--queue-length", "-1"}, wantCode: exitUsage},
		{name: "zero queue timeout", args: []string{"--queue-timeout", "0s"}, wantCode: exitUsage},
		{name: "zero timeout", args: []string{"--timeout", "0s"}, wantCode: exitUsage},
		{name: "zero grace", args: []string{"--shutdown-grace", "0s"}, wantCode: exitUsage},
		{name: "plugin without pins", args: []string{"--plugin", filepath.Join(dir, "x.wasm")}, wantCode: exitUsage},
		{name: "roots not a directory", args: []string{"--roots", notDir}, wantCode: exitUsage},
		{name: "positional argument", args: []string{"extra"}, wantCode: exitUsage},
		{name: "missing policies fail the first load", args: []string{"--policies", filepath.Join(dir, "none")}, wantCode: exitInternal},
		{name: "unknown token store", args: []string{"--token-store", "postgres://u:hunter2@db/x"}, wantCode: exitUsage},
		{name: "token file store without a path", args: []string{"--token-store", "file:"}, wantCode: exitUsage},
		{name: "zero token max ttl", args: []string{"--token-max-ttl", "0s"}, wantCode: exitUsage},
		{name: "default ttl over the max", args: []string{"--token-max-ttl", "1h", "--token-default-ttl", "2h"}, wantCode: exitUsage},
		{name: "missing api key file", args: []string{"--token-api-key-file", filepath.Join(dir, "none")}, wantCode: exitUsage},
		{name: "short api key", args: []string{"--token-api-key-file", notDir}, wantCode: exitUsage},
		{name: "unreachable redis", args: []string{"--token-store", "redis://127.0.0.1:1/0"}, wantCode: exitInternal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			argv := append([]string{"serve", "--addr", "127.0.0.1:0"}, tc.args...)
			code := run(context.Background(), argv, strings.NewReader(""), io.Discard, &stderr, nil)
			assert.Equal(t, tc.wantCode, code, "loadout %s: exit code (stderr %s)", strings.Join(argv, " "), stderr.String())
			assert.NotContains(t, stderr.String(), "listening on", "loadout %s must not start", strings.Join(argv, " "))
			assert.NotContains(t, stderr.String(), "hunter2", "loadout %s echoes a password", strings.Join(argv, " "))
		})
	}
}

// TestServeRedisPersistence: serve refuses a Redis that keeps nothing through a crash, naming
// the override, and starts on it with the override.
func TestServeRedisPersistence(t *testing.T) {
	srv := testredis.StartServer(t, "--save", "", "--appendonly", "no")
	store := "redis://" + srv.Addr + "/0"
	var stderr bytes.Buffer
	argv := []string{"serve", "--addr", "127.0.0.1:0", "--token-store", store}
	code := run(context.Background(), argv, strings.NewReader(""), io.Discard, &stderr, nil)
	assert.Equal(t, exitInternal, code, "loadout %s: exit code (stderr %s)", strings.Join(argv, " "), stderr.String())
	assert.Contains(t, stderr.String(), "appendfsync always", "the refusal says what Redis needs")
	assert.Contains(t, stderr.String(), "--token-store-allow-lost-revocations", "the refusal names the override")

	_, logs, stop := startServeCmd(t, "--token-store", store, "--token-store-allow-lost-revocations")
	assert.Equal(t, 0, stop(), "serve with the override: %s", logs.String())
	assert.Contains(t, logs.String(), "may bring back revoked tokens", "the override is logged")
}

// TestServeCPUProfile: --cpu-profile writes a profile of the server (gzipped protobuf, mode
// 0600) when it stops.
func TestServeCPUProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "serve.pprof")
	_, logs, stop := startServeCmd(t, "--cpu-profile", path)
	require.Equal(t, 0, stop(), "serve with --cpu-profile: %s", logs.String())
	raw, err := os.ReadFile(path)
	require.NoError(t, err, "the profile")
	require.Greater(t, len(raw), 2)
	assert.Equal(t, []byte{0x1f, 0x8b}, raw[:2], "a gzipped profile")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

// TestServeTokens mints through the serve command with a file store and an API key, then
// resolves and revokes; the file store keeps tokens across a restart.
func TestServeTokens(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "api-key")
	const key = "serve-api-key-0123456789"
	require.NoError(t, os.WriteFile(keyFile, []byte(key+"\n"), 0o600))
	roots := filepath.Join(dir, "roots")
	require.NoError(t, os.Mkdir(roots, 0o700))
	args := []string{"--token-store", "file:" + filepath.Join(dir, "tokens.db"), "--token-api-key-file", keyFile,
		"--token-max-ttl", "3h", "--roots", roots}
	args = append(args, pluginArgs(t)...)
	base, stderr, stop := startServeCmd(t, args...)

	call := func(base, method, path, body, auth string) (int, string) {
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err, "%s %s", method, path)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	render := `{"harness":"codex","run":{"id":"run-cli","user":"carol"},"mcpServers":[` +
		`{"id":"docs","transport":"http","url":"https://mcp.example.com/mcp","token":{"mint":true,"ttl":"2h"}}]}`
	code, body := call(base, http.MethodPost, "/v1/render", render, "")
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `"tokens":[{"server":"docs","run":"run-cli","user":"carol"`)
	var res struct {
		Files []struct{ Written string } `json:"files"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &res))
	var token string
	for _, f := range res.Files {
		b, err := os.ReadFile(f.Written)
		require.NoError(t, err)
		if m := regexp.MustCompile(`lrt_[A-Za-z0-9_-]{43}`).Find(b); m != nil {
			token = string(m)
		}
	}
	require.NotEmpty(t, token, "the minted token in the written config")

	code, body = call(base, http.MethodPost, "/v1/render", strings.Replace(render, `"2h"`, `"4h"`, 1), "")
	assert.Equal(t, http.StatusUnprocessableEntity, code, "a ttl over --token-max-ttl: %s", body)
	assert.Contains(t, body, "mcpServers[0].token.ttl")

	resolveBody := `{"token":"` + token + `"}`
	code, _ = call(base, http.MethodPost, "/v1/tokens/resolve", resolveBody, "")
	assert.Equal(t, http.StatusUnauthorized, code, "resolve without the API key")
	code, body = call(base, http.MethodPost, "/v1/tokens/resolve", resolveBody, key)
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `"run":"run-cli","server":"docs","user":"carol"`)
	assert.Equal(t, exitOK, stop())
	assert.NotContains(t, stderr.String(), token, "serve logged a token")

	// A restart on the same file resolves the token, and revokes it.
	base, stderr, stop = startServeCmd(t, args...)
	code, body = call(base, http.MethodPost, "/v1/tokens/resolve", resolveBody, key)
	require.Equal(t, http.StatusOK, code, "resolve after a restart: %s", body)
	code, body = call(base, http.MethodDelete, "/v1/runs/run-cli", "", key)
	require.Equal(t, http.StatusOK, code, body)
	assert.JSONEq(t, `{"run":"run-cli","revoked":1}`, body)
	code, _ = call(base, http.MethodPost, "/v1/tokens/resolve", resolveBody, key)
	assert.Equal(t, http.StatusNotFound, code, "resolve after the revoke")
	assert.Equal(t, exitOK, stop())
	assert.NotContains(t, stderr.String(), "token routes are open", "warned although an API key is set")
}
