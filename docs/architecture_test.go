package docs

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// module is the module path every package of the repository starts with.
const module = "github.com/loadout-dev/loadout"

// build is one configuration the project builds: environment (added to the process's) and
// flags of the go command.
type build struct {
	env, flags []string
}

// goList runs `go list` with args in the repository root for b and returns the import paths
// it prints.
func goList(t *testing.T, b build, args ...string) []string {
	t.Helper()
	env := b.env
	cmd := exec.Command("go", slices.Concat([]string{"list"}, b.flags, args)...)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	var stderr string
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = string(ee.Stderr)
	}
	require.NoError(t, err, "go list %s (%v): %s", strings.Join(args, " "), env, stderr)
	return strings.Fields(string(out))
}

// builds are the configurations the project builds: a package that only one of them sees
// (the wasmtime engine, the native C renderer) is a package all the same.
var (
	native   = build{env: []string{"CGO_ENABLED=1"}}
	wasmtime = build{env: []string{"CGO_ENABLED=1"}, flags: []string{"-tags=wasmtime"}}
	wasm     = build{env: []string{"GOOS=wasip1", "GOARCH=wasm"}}
	builds   = []build{native, wasmtime, wasm}
)

// modulePackages is every package of the module on every build, relative to the module
// ("" for its root), sorted.
func modulePackages(t *testing.T) []string {
	var all []string
	for _, b := range builds {
		for _, p := range goList(t, b, "./...") {
			all = append(all, strings.TrimPrefix(strings.TrimPrefix(p, module), "/"))
		}
	}
	slices.Sort(all)
	return slices.Compact(all)
}

// tableRow is one row of a Markdown table: its cells, trimmed.
func tableRow(line string) []string {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") {
		return nil
	}
	cells := strings.Split(line[1:len(line)-1], "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

var codeSpan = regexp.MustCompile("`([^`]*)`")

// packageTable reads the package table of the section headed heading in doc: each package
// the first column names (every code span of it) with its line, and each code span of the
// last column ("Depends on") spelled like a package, with its line.
func packageTable(doc, heading string) (named, deps map[string]int, err error) {
	named, deps = map[string]int{}, map[string]int{}
	in, header := false, false
	sc := bufio.NewScanner(strings.NewReader(doc))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			in = strings.TrimSpace(strings.TrimLeft(line, "#")) == heading
			continue
		}
		cells := tableRow(line)
		if !in || cells == nil {
			continue
		}
		if !header {
			header = true // the header row, then the separator
			continue
		}
		if strings.Trim(cells[0], "-: ") == "" {
			continue
		}
		for _, m := range codeSpan.FindAllStringSubmatch(cells[0], -1) {
			named[m[1]] = n
		}
		for _, m := range codeSpan.FindAllStringSubmatch(cells[len(cells)-1], -1) {
			if packageName.MatchString(m[1]) {
				deps[m[1]] = n
			}
		}
	}
	return named, deps, sc.Err()
}

// packageName is how a package of the module is spelled in the table.
var packageName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*(/[a-z0-9][a-z0-9_.-]*)*$`)

// tableProblems compares the packages a table names (and the dependencies it lists) with the
// packages that exist: each package missing from the table, and each name of the table that
// is no package.
func tableProblems(named, deps map[string]int, packages []string) []string {
	var out []string
	for _, p := range packages {
		if _, ok := named[p]; !ok {
			out = append(out, "package "+p+" has no row: add it to the table")
		}
	}
	for _, m := range []map[string]int{named, deps} {
		for _, name := range sortedKeys(m) {
			if !slices.Contains(packages, name) {
				out = append(out, "the table names "+name+" (line "+strconv.Itoa(m[name])+"), which is no package of the module")
			}
		}
	}
	return out
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

const tableHeading = "2. Packages and what each owns"

// TestArchitectureTableListsEveryPackage: docs/ARCHITECTURE.md §2 has a row for every package
// of the module, on every build, and names no package that does not exist.
func TestArchitectureTableListsEveryPackage(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "ARCHITECTURE.md"))
	require.NoError(t, err)
	named, deps, err := packageTable(string(doc), tableHeading)
	require.NoError(t, err)
	require.NotEmpty(t, named, "docs/ARCHITECTURE.md has no table under %q", tableHeading)
	packages := modulePackages(t)
	require.Contains(t, packages, "host/engine/wasmtime", "go list sees the packages of every build")
	assert.Empty(t, tableProblems(named, deps, packages), "docs/ARCHITECTURE.md §2 against go list ./...")
}

// TestTableProblems: the comparison reports a package without a row and a row naming no
// package, and nothing for a table that matches.
func TestTableProblems(t *testing.T) {
	doc := "# A\n\n## " + tableHeading + "\n\n| Package | Owns | Depends on |\n|---|---|---|\n" +
		"| `host`, `host/spec` | x | `sdk/abi` |\n| `sdk/abi` | y | — |\n\n## 3. Next\n\n| `not/read` | z | — |\n"
	named, deps, err := packageTable(doc, tableHeading)
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"host": 7, "host/spec": 7, "sdk/abi": 8}, named, "the first column's packages")
	assert.Equal(t, map[string]int{"sdk/abi": 7}, deps, "the dependencies")
	assert.Empty(t, tableProblems(named, deps, []string{"host", "host/spec", "sdk/abi"}), "a table that matches")
	assert.Equal(t, []string{
		"package host/redact has no row: add it to the table",
		"the table names host/spec (line 7), which is no package of the module",
	}, tableProblems(named, deps, []string{"host", "host/redact", "sdk/abi"}))
	assert.Equal(t, []string{
		"the table names sdk/abi (line 8), which is no package of the module",
		"the table names sdk/abi (line 7), which is no package of the module",
	}, tableProblems(named, deps, []string{"host", "host/spec"}), "a row and a dependency that are no package")
}

// forbiddenDeps are the module's packages a plugin or the SDK must not depend on: the host,
// the CLI and the conformity runner (docs/ARCHITECTURE.md §2, SECURITY.md §3: a plugin knows
// only the ABI).
var forbiddenDeps = []string{"host", "cmd", "conformity"}

// forbidden returns the packages of deps (import paths) under a forbidden directory.
func forbidden(deps []string) []string {
	var out []string
	for _, d := range deps {
		rel, ok := strings.CutPrefix(d, module+"/")
		if !ok {
			continue
		}
		for _, f := range forbiddenDeps {
			if rel == f || strings.HasPrefix(rel, f+"/") {
				out = append(out, d)
			}
		}
	}
	return out
}

// TestPluginsNeverImportHost: nothing a plugin or the SDK is built from, directly or through
// another package, is the host, the CLI or the conformity runner, on the WebAssembly build
// and the native one (the renderers' own tests, the SDK's native path).
func TestPluginsNeverImportHost(t *testing.T) {
	for _, b := range []build{wasm, native} {
		deps := goList(t, b, "-deps", "./plugins/...", "./sdk/...")
		require.Contains(t, deps, module+"/sdk/abi", "go list -deps (%v) lists the module's packages", b.env)
		assert.Empty(t, forbidden(deps), "packages plugins/... and sdk/... depend on (%v)", b.env)
	}
}

// TestRenderersNeverReadConfigs: no plugin is built from sdk/profile/readback, the reader of a
// written config: a renderer writes its config, and the reader is the host's and the renderers'
// tests' (docs/ARCHITECTURE.md §2).
func TestRenderersNeverReadConfigs(t *testing.T) {
	deps := goList(t, wasm, "-deps", "./plugins/...")
	require.Contains(t, deps, module+"/sdk/abi", "go list -deps (%v) lists the module's packages", wasm.env)
	assert.NotContains(t, deps, module+"/sdk/profile/readback", "packages plugins/... depend on (%v)", wasm.env)
}

// TestForbiddenFindsHostImports: the check catches a host, cmd or conformity package at any
// depth, and only those.
func TestForbiddenFindsHostImports(t *testing.T) {
	deps := []string{
		"fmt", module + "/sdk/abi", module + "/sdk/format",
		module + "/host", module + "/host/redact", module + "/cmd/loadout", module + "/conformity/corpus",
		module + "/hostile", module + "/internal/conformityish", "example.com/host/x",
	}
	assert.Equal(t, []string{module + "/host", module + "/host/redact", module + "/cmd/loadout", module + "/conformity/corpus"},
		forbidden(deps), "forbidden(%q)", deps)
	assert.Empty(t, forbidden(deps[:3]), "the ABI and the encoders are allowed")
}
