package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// command starts argv in its own process group, so that a timeout or the end of a test kills
// the harness and every server it spawned.
func command(ctx context.Context, dir string, env []string, argv ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// killGroup kills the process group of a started command.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// result is the outcome of a finished command.
type result struct {
	Stdout, Stderr []byte
	Exit           int
}

// run runs argv to completion within timeout. A non-zero exit is not an error (several offline
// checks exit 1 on a failed server, which the tests parse); a start failure or a timeout is.
func run(ctx context.Context, timeout time.Duration, dir string, env []string, stdin []byte, argv ...string) (result, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := command(ctx, dir, env, argv...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	err := cmd.Run()
	res := result{Stdout: out.Bytes(), Stderr: errb.Bytes(), Exit: cmd.ProcessState.ExitCode()}
	if ctx.Err() != nil {
		return res, fmt.Errorf("%s: timed out after %s (stderr: %s)", argv[0], timeout, tail(errb.Bytes()))
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return res, fmt.Errorf("%s: %w", argv[0], err)
	}
	return res, nil
}

// tail returns the last 2 KiB of b, for error messages.
func tail(b []byte) string {
	if len(b) > 2048 {
		b = b[len(b)-2048:]
	}
	return string(b)
}

// firstLine starts argv and returns the first stdout line for which match is true, then kills
// the process group (Claude Code keeps retrying its API after the line the tests need).
func firstLine(ctx context.Context, timeout time.Duration, dir string, env []string, match func([]byte) bool, argv ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := command(ctx, dir, env, argv...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", argv[0], err)
	}
	defer func() {
		_ = killGroup(cmd)
		_ = cmd.Wait()
	}()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if match(sc.Bytes()) {
			return append([]byte(nil), sc.Bytes()...), nil
		}
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%s: no matching line within %s (stderr: %s)", argv[0], timeout, tail(errb.Bytes()))
	}
	return nil, fmt.Errorf("%s: exited without a matching line (stderr: %s)", argv[0], tail(errb.Bytes()))
}

// rpcClient talks newline-delimited JSON to a long-running process (codex app-server, pi --mode
// rpc). It is used by one goroutine at a time; responses are matched by their "id".
type rpcClient struct {
	cmd    *exec.Cmd
	cancel context.CancelFunc
	stdin  io.WriteCloser
	lines  chan []byte
	stderr *lockedBuffer
	name   string
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return tail(l.b.Bytes())
}

// startRPC starts argv with pipes; Close kills its process group.
func startRPC(ctx context.Context, timeout time.Duration, dir string, env []string, argv ...string) (*rpcClient, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	cmd := command(ctx, dir, env, argv...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	c := &rpcClient{cmd: cmd, cancel: cancel, stdin: stdin, lines: make(chan []byte, 64), stderr: &lockedBuffer{}, name: argv[0]}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("%s: %w", argv[0], err)
	}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			c.lines <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	return c, nil
}

// send writes one JSON message.
func (c *rpcClient) send(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = c.stdin.Write(append(b, '\n'))
	return err
}

// await returns the first message whose "id" equals id (compared as JSON text).
func (c *rpcClient) await(id any) (json.RawMessage, error) {
	want, err := json.Marshal(id)
	if err != nil {
		return nil, err
	}
	for line := range c.lines {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(line, &m) != nil || !bytes.Equal(m.ID, want) {
			continue
		}
		return line, nil
	}
	return nil, fmt.Errorf("%s: no response with id %s (stderr: %s)", c.name, want, c.stderr.String())
}

// call sends msg and waits for the response with the same id.
func (c *rpcClient) call(id any, msg any) (json.RawMessage, error) {
	if err := c.send(msg); err != nil {
		return nil, fmt.Errorf("%s: write: %w", c.name, err)
	}
	return c.await(id)
}

// Close kills the process group and waits for the process.
func (c *rpcClient) Close() {
	_ = c.stdin.Close()
	_ = killGroup(c.cmd)
	_ = c.cmd.Wait()
	c.cancel()
}
