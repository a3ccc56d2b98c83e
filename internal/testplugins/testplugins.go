// Package testplugins builds the project's renderer plugins to WebAssembly for tests, once per
// source state: the result is cached under the user cache directory, keyed by a hash of every
// file that goes into the build, and a file lock keeps concurrent test binaries from building
// the same plugin twice. It is for tests only.
package testplugins

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/loadout-dev/loadout/internal/testenv"
)

// Root returns the repository root (the directory holding go.mod).
func Root(tb testing.TB) string {
	tb.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("testplugins: cannot locate the source file")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Path returns the path of plugins/<name> built to WebAssembly, building it if this source
// state has not been built before. A Go plugin is built with the standard toolchain
// (GOOS=wasip1 GOARCH=wasm -buildmode=c-shared); a C plugin with its own build.sh, which needs
// the WASI C toolchain (without it the test is skipped, or fails under LOADOUT_REQUIRE_ALL=1).
func Path(tb testing.TB, name string) string {
	tb.Helper()
	return build(tb, name, filepath.Join("plugins", name))
}

// RendererPath returns a faithful renderer for harness built to WebAssembly, for the
// hostile-plan tests (conformity/hostile tampers with its plan from the host side): the Go
// renderer under plugins/<harness> when there is one, else (mcpjson, acme) the generic renderer
// of internal/testplugins/generic built for the harness.
func RendererPath(tb testing.TB, harness string) string {
	tb.Helper()
	if _, err := os.Stat(filepath.Join(Root(tb), "plugins", harness, "main.go")); err == nil {
		return Path(tb, harness)
	}
	return buildWith(tb, "generic-"+harness, filepath.Join("internal", "testplugins", "generic"), []string{"-ldflags=" + stripped + " -X main.harness=" + harness})
}

// stripped is the linker flags ./build.sh builds a Go plugin with: the tests run the modules
// loadout embeds.
const stripped = "-s -w"

func build(tb testing.TB, name, rel string) string {
	tb.Helper()
	return buildWith(tb, name, rel, []string{"-ldflags=" + stripped})
}

// buildWith builds rel with extra go build flags.
func buildWith(tb testing.TB, name, rel string, flags []string) string {
	tb.Helper()
	root := Root(tb)
	src := filepath.Join(root, rel)
	if _, err := os.Stat(src); err != nil {
		tb.Fatalf("testplugins: plugin %q: %v", name, err)
	}
	sum, err := hashInputs(root, rel, flags)
	if err != nil {
		tb.Fatalf("testplugins: hash %s: %v", name, err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "loadout-testplugins", sum[:16])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatalf("testplugins: %v", err)
	}
	out := filepath.Join(dir, name+".wasm")
	unlock, err := lock(filepath.Join(dir, name+".lock"))
	if err != nil {
		tb.Fatalf("testplugins: lock: %v", err)
	}
	defer unlock()
	if _, err := os.Stat(out); err == nil {
		return out
	}
	tmp := out + ".tmp"
	var cmd *exec.Cmd
	if _, err := os.Stat(filepath.Join(src, "main.go")); err == nil {
		args := append([]string{"build", "-buildmode=c-shared", "-trimpath"}, flags...)
		cmd = exec.Command("go", append(args, "-o", tmp, "./"+filepath.ToSlash(rel))...)
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	} else {
		testenv.WASIToolchain(tb)
		cmd = exec.Command(filepath.Join(src, "build.sh"), tmp)
	}
	cmd.Dir = root
	if outb, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("testplugins: build %s: %v\n%s", name, err, outb)
	}
	if err := os.Rename(tmp, out); err != nil {
		tb.Fatalf("testplugins: %v", err)
	}
	return out
}

// Read returns the bytes of Path(tb, name).
func Read(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(Path(tb, name))
	if err != nil {
		tb.Fatalf("testplugins: %v", err)
	}
	return b
}

// hashInputs hashes go.mod, go.sum, sdk/, plugins/ and the plugin's own directory rel (paths
// and contents), the extra build flags and the Go version: a plugin may import another
// plugin's renderer.
func hashInputs(root, rel string, flags []string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%q\n", runtime.Version(), flags)
	var files []string
	for _, p := range []string{"go.mod", "go.sum"} {
		files = append(files, filepath.Join(root, p))
	}
	dirs := []string{"plugins", "sdk", rel}
	slices.Sort(dirs)
	for _, d := range slices.Compact(dirs) {
		err := filepath.WalkDir(filepath.Join(root, d), func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.Type().IsRegular() && !strings.HasSuffix(p, "_test.go") && !strings.Contains(p, string(filepath.Separator)+"testdata"+string(filepath.Separator)) {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(root, f)
		fmt.Fprintf(h, "%s %d\n", filepath.ToSlash(rel), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
