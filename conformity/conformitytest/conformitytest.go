// Package conformitytest runs the project's conformity corpus on a renderer from its own Go
// tests, natively, through the sdk's wire path: every built-in plugin's TestConformity calls
// RunNative, so the corpus, its exceptions and the checks are the ones the WebAssembly builds
// are certified with.
package conformitytest

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/conformity"
	"github.com/loadout-dev/loadout/sdk"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// CasesDir is the project's corpus, below the repository root.
const CasesDir = "conformity/testdata/cases"

// RunNative runs every case of the corpus on render (with manifest m) and fails t for each
// case that does not pass and no exception of conformity/testdata/exceptions.txt covers.
func RunNative(t *testing.T, m abi.Manifest, render sdk.RenderFunc) {
	t.Helper()
	root := repoRoot(t)
	dir := filepath.Join(root, CasesDir)
	ex, err := conformity.LoadExceptions(filepath.Join(root, "conformity", "testdata", "exceptions.txt"))
	require.NoError(t, err, "conformity.LoadExceptions")
	tg, err := conformity.Native(m, render)
	require.NoError(t, err, "conformity.Native(%s)", m.Name)
	rep, err := conformity.Run(context.Background(), conformity.Config{CaseDirs: []string{dir}, Targets: []conformity.Target{tg}, Exceptions: ex, TempDir: t.TempDir()})
	require.NoError(t, err, "conformity.Run(%s)", dir)
	require.NotEmpty(t, rep.Results, "conformity.Run(%s): no result", dir)
	for _, res := range rep.Results {
		assert.True(t, res.OK, "case %s on %s natively: %s", res.File, res.Harness, strings.Join(res.Failures, "\n"))
	}
}

// repoRoot is the repository root, two directories above this file.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok, "conformitytest: cannot locate its source file")
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}
