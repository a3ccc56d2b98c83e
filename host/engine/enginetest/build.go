package enginetest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/loadout-dev/loadout/internal/testenv"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// dir is the directory of this package's source, where testdata lives.
func dir(tb testing.TB) string {
	tb.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("enginetest: cannot locate the package source")
	}
	return filepath.Dir(file)
}

type built struct {
	once sync.Once
	wasm []byte
	err  error
}

var wats sync.Map // name -> *built

// WAT returns testdata/<name>.wat compiled with wat2wasm. Each module is built once per test
// binary, however many tests ask for it. Safe for concurrent use.
//
// Without wat2wasm (wabt) the test is skipped, or fails under LOADOUT_REQUIRE_ALL=1
// (internal/testenv).
func WAT(tb testing.TB, name string) []byte {
	tb.Helper()
	testenv.Command(tb, "wat2wasm", testenv.InstallDeps+" (apt-get install wabt)")
	v, _ := wats.LoadOrStore(name, &built{})
	b := v.(*built)
	b.once.Do(func() {
		src := filepath.Join(dir(tb), "testdata", name+".wat")
		var stderr bytes.Buffer
		cmd := exec.Command("wat2wasm", src, "--output=-")
		cmd.Stderr = &stderr
		b.wasm, b.err = cmd.Output()
		if b.err != nil {
			b.err = fmt.Errorf("wat2wasm %s: %w\n%s", src, b.err, stderr.Bytes())
		}
	})
	if b.err != nil {
		tb.Fatalf("enginetest: %v", b.err)
	}
	return b.wasm
}

var goPlugin built

// GoPlugin returns testdata/goplugin built with GOOS=wasip1 GOARCH=wasm -buildmode=c-shared.
// The result is cached under the user cache directory, keyed by a hash of its sources and the
// Go version, so it is built once per source state across test binaries. Safe for concurrent use.
func GoPlugin(tb testing.TB) []byte {
	tb.Helper()
	goPlugin.once.Do(func() { goPlugin.wasm, goPlugin.err = buildGoPlugin(dir(tb)) })
	if goPlugin.err != nil {
		tb.Fatalf("enginetest: %v", goPlugin.err)
	}
	return goPlugin.wasm
}

func buildGoPlugin(pkgDir string) ([]byte, error) {
	root := filepath.Clean(filepath.Join(pkgDir, "..", "..", ".."))
	src := filepath.Join(pkgDir, "testdata", "goplugin")
	h := sha256.New()
	fmt.Fprintln(h, runtime.Version())
	for _, f := range []string{filepath.Join(src, "main.go"), filepath.Join(root, "sdk", "abi", "abi.go"), filepath.Join(root, "go.mod")} {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(f), len(b))
		h.Write(b)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	out := filepath.Join(cache, "loadout-enginetest", hex.EncodeToString(h.Sum(nil))[:16], "goplugin.wasm")
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, err
	}
	lock, err := os.OpenFile(out+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return nil, err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if b, err := os.ReadFile(out); err == nil {
		return b, nil
	}
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-o", out+".tmp", ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build goplugin: %w\n%s", err, b)
	}
	if err := os.Rename(out+".tmp", out); err != nil {
		return nil, err
	}
	return os.ReadFile(out)
}

// Request returns the JSON of an abi.Request of at least size bytes: a few servers and skills
// whose instructions make up the bulk, like a real request. The same size gives the same bytes.
func Request(size int) []byte {
	req := abi.Request{ABIVersion: abi.Version, Harness: "goplugin", Servers: []abi.Server{}, Skills: []abi.Skill{}}
	for i := 0; i < 4; i++ {
		req.Servers = append(req.Servers, abi.Server{
			ID: fmt.Sprintf("server-%d", i), Transport: abi.TransportStdio, Command: "/usr/bin/tool",
			Args:            []string{"--serve", fmt.Sprintf("--port=%d", 7000+i)},
			Env:             []abi.Pair{{Name: "TOKEN", Value: fmt.Sprintf("{{loadout.secret.%d}}", i+1), Secret: true}},
			ToolsRestricted: true, AllowedTools: []string{"read", "search"}, Enabled: true,
		})
	}
	for i := 0; ; i++ {
		b, _ := json.Marshal(req)
		if len(b) >= size {
			return b
		}
		body := strings.Repeat(fmt.Sprintf("Step %d: read the file, then explain the change. ", i), 16)
		req.Skills = append(req.Skills, abi.Skill{Name: fmt.Sprintf("skill-%d", i), Description: "A skill.", Instructions: body})
	}
}
