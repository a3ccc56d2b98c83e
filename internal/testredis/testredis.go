// Package testredis starts a throwaway redis-server for tests: on a random loopback port,
// with its files in the test's temp dir, no persistence, stopped when the test ends. It is
// for tests only.
//
// Without a redis-server binary on PATH the test is skipped with a message saying how to get
// one, except under LOADOUT_REQUIRE_ALL=1 (test.sh sets it), where it fails: the suite that
// claims to test the shared store must not pass by skipping it.
package testredis

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Binary is the server the package runs.
const Binary = "redis-server"

// Start runs a redis-server for tb and returns its address (127.0.0.1:port). The server is
// killed, and waited for, in tb's cleanup.
func Start(tb testing.TB) string {
	tb.Helper()
	bin, err := exec.LookPath(Binary)
	if err != nil {
		msg, fail := missing(os.Getenv)
		if fail {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		addr, err := start(tb, bin)
		if err == nil {
			return addr
		}
		lastErr = err // most likely the free port was taken before redis bound it
	}
	tb.Fatalf("testredis: start %s: %v", Binary, lastErr)
	return ""
}

// missing says what a test without the binary is told, and whether it fails (under
// LOADOUT_REQUIRE_ALL=1) rather than skips.
func missing(getenv func(string) string) (string, bool) {
	msg := "testredis: no " + Binary + " on PATH (Debian package redis-server; scripts/deps.sh installs it)"
	if getenv("LOADOUT_REQUIRE_ALL") == "1" {
		return msg + "; LOADOUT_REQUIRE_ALL=1 forbids skipping", true
	}
	return msg, false
}

func start(tb testing.TB, bin string) (string, error) {
	port, err := freePort()
	if err != nil {
		return "", err
	}
	dir := tb.TempDir()
	logPath := filepath.Join(dir, "redis.log")
	cmd := exec.Command(bin,
		"--bind", "127.0.0.1", "--port", strconv.Itoa(port),
		"--dir", dir, "--save", "", "--appendonly", "no",
		"--logfile", logPath, "--daemonize", "no")
	if err := cmd.Start(); err != nil {
		return "", err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(15 * time.Second)
	for {
		if ping(addr) == nil {
			tb.Cleanup(stop)
			return addr, nil
		}
		select {
		case err := <-exited:
			exited <- err
			stop()
			log, _ := os.ReadFile(logPath)
			return "", fmt.Errorf("exited (%v): %s", err, strings.TrimSpace(string(log)))
		default:
		}
		if time.Now().After(deadline) {
			stop()
			return "", fmt.Errorf("no answer on %s within 15s", addr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// ping sends PING and wants +PONG.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}
