// Command canary is a minimal stdio MCP server used by the end-to-end tests to observe what a
// harness hands to a server it spawns.
//
// Usage: canary OUT.json [ARG...]
//
// Arguments after the first are ignored (they show up in the report's command lines), except
// tool=NAME, which offers one more tool of that name (a name holding a ".", say).
// On start it writes a Report as JSON to OUT.json (atomically, through a temporary file in the
// same directory): its complete environment in os.Environ order, its pid, its working directory,
// and the command line of
// itself and of every ancestor process up to pid 1, read from /proc. The output path is an
// argument, never an environment variable, so the observed environment is only what the harness
// chose to pass.
//
// It then serves MCP over stdio (newline-delimited JSON-RPC 2.0): initialize,
// notifications/initialized, ping, tools/list (one tool, "canary_ping") and tools/call. Any other
// request gets a method-not-found error; notifications are ignored. It exits when stdin closes.
// It is single-threaded and holds no state beyond the report it wrote.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Report is what the canary writes on start. The e2e tests decode the same shape.
type Report struct {
	Pid int `json:"pid"`
	// Cwd is the working directory the server was started in.
	Cwd string `json:"cwd"`
	// Env is os.Environ() as written by the kernel, in order.
	Env []string `json:"env"`
	// Cmdlines holds the argv of this process first, then of its parent, and so on up to (not
	// including) pid 1 or the first process whose /proc entry cannot be read.
	Cmdlines []Cmdline `json:"cmdlines"`
}

// Cmdline is the argv of one process, from /proc/<pid>/cmdline.
type Cmdline struct {
	Pid  int      `json:"pid"`
	Argv []string `json:"argv"`
}

// ToolName is the canary's one tool.
const ToolName = "canary_ping"

func main() {
	if len(os.Args) < 2 || os.Args[1] == "" {
		fmt.Fprintln(os.Stderr, "usage: canary OUT.json [ARG...]")
		os.Exit(2)
	}
	if err := writeReport(os.Args[1]); err != nil {
		fmt.Fprintf(os.Stderr, "canary: %v\n", err)
		os.Exit(1)
	}
	var extra []string
	for _, a := range os.Args[2:] {
		if name, ok := strings.CutPrefix(a, "tool="); ok && name != "" {
			extra = append(extra, name)
		}
	}
	if err := serve(os.Stdin, os.Stdout, extra); err != nil {
		fmt.Fprintf(os.Stderr, "canary: %v\n", err)
		os.Exit(1)
	}
}

func writeReport(path string) error {
	rep := Report{Pid: os.Getpid(), Env: os.Environ()}
	cwd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("working directory: %w", err)
	}
	rep.Cwd = cwd
	for pid := os.Getpid(); pid > 1; {
		raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil {
			break
		}
		rep.Cmdlines = append(rep.Cmdlines, Cmdline{Pid: pid, Argv: splitNUL(raw)})
		ppid, err := parentOf(pid)
		if err != nil {
			break
		}
		pid = ppid
	}
	body, err := json.Marshal(rep)
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".canary-*")
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if _, err := tmp.Write(body); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("write report: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write report: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

func splitNUL(raw []byte) []string {
	raw = bytes.TrimSuffix(raw, []byte{0})
	if len(raw) == 0 {
		return []string{}
	}
	return strings.Split(string(raw), "\x00")
}

// parentOf reads the parent pid from /proc/<pid>/stat; the command name (field 2) may hold
// spaces and parentheses, so the fields are taken after its last ')'.
func parentOf(pid int) (int, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed stat for pid %d", pid)
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 2 {
		return 0, fmt.Errorf("malformed stat for pid %d", pid)
	}
	return strconv.Atoi(fields[1])
}

type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func serve(in io.Reader, out io.Writer, extra []string) error {
	tools := []any{map[string]any{
		"name":        ToolName,
		"description": "Answers pong; exists so the server has one tool.",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{}},
	}}
	for _, name := range extra {
		tools = append(tools, map[string]any{
			"name":        name,
			"description": "Answers pong; offered because the command line asked for it.",
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{}},
		})
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	enc := json.NewEncoder(out)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var msg message
		if err := json.Unmarshal(line, &msg); err != nil {
			if err := enc.Encode(response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{Code: -32700, Message: "parse error"}}); err != nil {
				return fmt.Errorf("write: %w", err)
			}
			continue
		}
		if len(msg.ID) == 0 || msg.Method == "" {
			continue // a notification, or a response to nothing we sent
		}
		res := response{JSONRPC: "2.0", ID: msg.ID}
		switch msg.Method {
		case "initialize":
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			_ = json.Unmarshal(msg.Params, &p)
			if p.ProtocolVersion == "" {
				p.ProtocolVersion = "2025-06-18"
			}
			res.Result = map[string]any{
				"protocolVersion": p.ProtocolVersion,
				"capabilities":    map[string]any{"tools": map[string]any{"listChanged": false}},
				"serverInfo":      map[string]any{"name": "loadout-canary", "version": "1.0.0"},
			}
		case "ping":
			res.Result = map[string]any{}
		case "tools/list":
			res.Result = map[string]any{"tools": tools}
		case "tools/call":
			res.Result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "pong"}}}
		default:
			res.Error = &rpcError{Code: -32601, Message: "method not found: " + msg.Method}
		}
		if err := enc.Encode(res); err != nil {
			return fmt.Errorf("write: %w", err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read: %w", err)
	}
	return nil
}
