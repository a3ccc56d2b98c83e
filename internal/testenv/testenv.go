// Package testenv lets a test say what it needs from the machine beyond Go: a tool on PATH
// (wat2wasm, the WASI C toolchain), the agent CLIs, built plugins. When a piece is missing the
// test is skipped with a message that names the piece and the command that installs it, so that
// `go test ./...` on a fresh clone passes or says exactly what to install.
//
// Under LOADOUT_REQUIRE_ALL=1, which test.sh (CI) sets, a missing piece fails the test instead:
// the suite that gates a change never passes by skipping.
//
// It is for tests only. Its functions are safe for concurrent use.
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// RequireAllEnv is the environment variable that turns a skip for a missing piece into a
// failure.
const RequireAllEnv = "LOADOUT_REQUIRE_ALL"

// Install commands, named in the messages.
const (
	// InstallDeps installs the tools the suite uses (apt packages, opa, the agent CLIs).
	InstallDeps = "scripts/deps.sh"
	// InstallCLIs installs only the agent CLIs, into .cache/clis.
	InstallCLIs = "scripts/clis.sh (scripts/deps.sh runs it)"
	// InstallBuild builds the plugins and bin/loadout.
	InstallBuild = "./build.sh"
)

// RequireAll reports whether a missing piece must fail the test rather than skip it.
func RequireAll() bool { return os.Getenv(RequireAllEnv) == "1" }

// Missing skips tb because what is missing (or fails it under LOADOUT_REQUIRE_ALL=1), naming the
// command that installs it.
func Missing(tb testing.TB, what, install string) {
	tb.Helper()
	if RequireAll() {
		tb.Fatalf("missing %s: install it with %s (%s=1 makes this a failure, not a skip)", what, install, RequireAllEnv)
		return
	}
	tb.Skipf("skipped: missing %s; install it with %s", what, install)
}

// Command returns the path of the named program on PATH, or calls Missing.
func Command(tb testing.TB, name, install string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(tb, name+" on PATH", install)
	}
	return p
}

// File calls Missing unless every path exists; what names them in the message.
func File(tb testing.TB, what, install string, paths ...string) {
	tb.Helper()
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			Missing(tb, what+" ("+p+")", install)
		}
	}
}

// WASIToolchain checks what plugins/mcpjson-c/build.sh needs to build the C plugin: clang (or
// $WASI_CC), wasm-ld and wasi-libc.
func WASIToolchain(tb testing.TB) {
	tb.Helper()
	const install = InstallDeps + " (apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32)"
	cc := os.Getenv("WASI_CC")
	if cc == "" {
		cc = "clang"
	}
	Command(tb, cc, install)
	if _, err := exec.LookPath("wasm-ld"); err != nil {
		Command(tb, "wasm-ld-14", install)
	}
	for _, h := range []string{"/usr/include/wasm32-wasi/stdio.h", "/usr/include/wasm32-wasip1/stdio.h"} {
		if _, err := os.Stat(h); err == nil {
			return
		}
	}
	Missing(tb, "wasi-libc (/usr/include/wasm32-wasi/stdio.h)", install)
}
