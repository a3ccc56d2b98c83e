package doccheck

import (
	"io/fs"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// repoRoot is the directory holding go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok, "runtime.Caller(0) must locate this file")
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// repoFiles lists the files of the tree: git's tracked and untracked-but-not-ignored files, or,
// outside a git checkout, every file outside hidden and build directories.
func repoFiles(t *testing.T, root string) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "--cached", "--others", "--exclude-standard", "-z")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		var files []string
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
		return files
	}
	var files []string
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if e.IsDir() && rel != "." && (strings.HasPrefix(e.Name(), ".") || rel == "bin" || rel == "out") {
			return filepath.SkipDir
		}
		if e.Type().IsRegular() {
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	require.NoError(t, err, "walk %s", root)
	return files
}

// TestRepository holds the tree to its own references: every relative Markdown link and every
// "NAME.md §N" mention in a .md, .go, .sh or .rego file resolves.
func TestRepository(t *testing.T) {
	root := repoRoot(t)
	var files []string
	for _, f := range repoFiles(t, root) {
		// This package's tests hold broken references on purpose, as fixtures.
		if Checked(f) && !(strings.HasPrefix(f, "internal/doccheck/") && strings.HasSuffix(f, "_test.go")) {
			files = append(files, f)
		}
	}
	n := len(files)
	require.Greater(t, n, 100, "the repository check must see the tree's files (found %d)", n)
	for _, p := range Check(root, files) {
		t.Errorf("%s", p)
	}
}
