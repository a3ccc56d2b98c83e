// Package testredis starts a throwaway redis-server for tests: on a random loopback port, with
// its files in the test's temp dir, stopped when the test ends. By default it persists as
// loadout serve requires of a token store (append-only file, fsync on every write, no
// snapshots; docs/TOKENS.md); a test may give other settings, kill the server with SIGKILL
// and start it again on the same port and files. It is for tests only.
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
	"sync"
	"testing"
	"time"
)

// Binary is the server the package runs.
const Binary = "redis-server"

// Durable are the persistence settings Start uses: every write is in the append-only file,
// fsynced, before Redis answers it.
var Durable = []string{"--save", "", "--appendonly", "yes", "--appendfsync", "always"}

// Server is one redis-server of a test.
type Server struct {
	// Addr is the server's address, 127.0.0.1:port; it stays the same across Restart.
	Addr string

	tb      testing.TB
	bin     string
	args    []string
	dir     string
	logPath string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan error
}

// Start runs a redis-server with the Durable settings for tb and returns its address
// (127.0.0.1:port). The server is killed, and waited for, in tb's cleanup.
func Start(tb testing.TB) string {
	tb.Helper()
	return StartServer(tb, Durable...).Addr
}

// StartServer runs a redis-server for tb with the persistence settings of args (for example
// "--save", "", "--appendonly", "no": none at all). The server is killed, and waited for, in
// tb's cleanup.
func StartServer(tb testing.TB, args ...string) *Server {
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
		port, err := freePort()
		if err != nil {
			lastErr = err
			continue
		}
		dir := tb.TempDir()
		s := &Server{
			Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
			tb:   tb, bin: bin, args: append([]string(nil), args...),
			dir: dir, logPath: filepath.Join(dir, "redis.log"),
		}
		if lastErr = s.start(); lastErr == nil {
			tb.Cleanup(s.Kill)
			return s
		}
		// most likely the free port was taken before redis bound it
	}
	tb.Fatalf("testredis: start %s: %v", Binary, lastErr)
	return nil
}

// Kill kills the server with SIGKILL, as a crash would, and waits for it to exit. Killing a
// killed server does nothing.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
	s.cmd = nil
}

// Restart kills the server if it runs and starts it again on the same port, directory and
// settings: what it kept on disk is what it has.
func (s *Server) Restart() {
	s.tb.Helper()
	s.Kill()
	var err error
	for attempt := 0; attempt < 50; attempt++ {
		if err = s.start(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond) // the port may still be held by the killed process
	}
	s.tb.Fatalf("testredis: restart %s on %s: %v", Binary, s.Addr, err)
}

// start runs the server and waits until it answers PING.
func (s *Server) start() error {
	_, port, _ := net.SplitHostPort(s.Addr)
	args := append([]string{"--bind", "127.0.0.1", "--port", port, "--dir", s.dir,
		"--logfile", s.logPath, "--daemonize", "no"}, s.args...)
	cmd := exec.Command(s.bin, args...)
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		if ping(s.Addr) == nil {
			s.mu.Lock()
			s.cmd, s.exited = cmd, exited
			s.mu.Unlock()
			return nil
		}
		select {
		case err := <-exited:
			exited <- err
			stop()
			log, _ := os.ReadFile(s.logPath)
			return fmt.Errorf("exited (%v): %s", err, lastLines(string(log), 5))
		default:
		}
		if time.Now().After(deadline) {
			stop()
			return fmt.Errorf("no answer on %s within 15s", s.Addr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lastLines is the last n lines of log.
func lastLines(log string, n int) string {
	lines := strings.Split(strings.TrimSpace(log), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
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
