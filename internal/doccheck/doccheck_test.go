package doccheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sect is the section sign. (TestRepository skips this package's tests, whose fixtures hold
// broken references on purpose.)
const sect = "§"

// writeTree writes files (slash path → content) under a fresh directory and returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755), "mkdir for %s", name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644), "write %s", name)
	}
	return root
}

func names(files map[string]string) []string {
	var out []string
	for n := range files {
		out = append(out, n)
	}
	return out
}

// goodTree is a small repository whose every reference resolves.
func goodTree() map[string]string {
	return map[string]string{
		"README.md": "# Project\n\nSee [the rules](docs/RULES.md), [a section](docs/RULES.md#2-paths),\n" +
			"[the code](cmd/) and [ref][r]. Links in `code [x](nowhere.md)` are not read.\n\n" +
			"```\n[also](not-read.md)\n```\n\n[r]: docs/RULES.md\n",
		"docs/RULES.md": "# Rules\n\n## 1. Names\n\nAs " + sect + "2 says, and RULES.md " + sect + "2.1.\n\n" +
			"## 2. Paths\n\n### 2.1 Length\n\nText.\n",
		"cmd/main.go": "// Package main follows docs/RULES.md " + sect + "1 and docs/RULES.md\n// " + sect + "2.1, " +
			sect + "2 and " + sect + "1.\npackage main\n",
		"scripts/x.sh": "# see docs/RULES.md " + sect + "2; README.md, and the skill's SKILL.md\n",
	}
}

func TestCheckAcceptsAGoodTree(t *testing.T) {
	files := goodTree()
	root := writeTree(t, files)
	assert.Empty(t, Check(root, names(files)), "Check on a tree whose references all resolve")
}

func TestCheckFindsBrokenReferences(t *testing.T) {
	tests := []struct {
		name    string
		file    string // the file of goodTree changed, or a file added to it
		content string
		wantRef string // the Ref of the one Problem wanted
	}{
		{"missing link target", "README.md", "See [gone](docs/GONE.md).\n", "docs/GONE.md"},
		{"link outside the tree", "README.md", "See [up](../secret.md).\n", "../secret.md"},
		{"missing anchor", "README.md", "See [x](docs/RULES.md#3-nothing).\n", "docs/RULES.md#3-nothing"},
		{"missing reference definition target", "README.md", "[r]: nowhere/x.md\n", "nowhere/x.md"},
		{"missing file of a section reference", "cmd/main.go", "// see docs/GONE.md " + sect + "1\npackage main\n", "docs/GONE.md " + sect + "1"},
		{"missing section", "cmd/main.go", "// see docs/RULES.md " + sect + "9\npackage main\n", "docs/RULES.md " + sect + "9"},
		{"missing section in a list", "cmd/main.go", "// see docs/RULES.md " + sect + "1, " + sect + "2.7\npackage main\n", "docs/RULES.md " + sect + "2.7"},
		{"missing section across a comment line", "cmd/main.go", "// see docs/RULES.md\n// " + sect + "4\npackage main\n", "docs/RULES.md " + sect + "4"},
		{"a bare file name that is not beside the file", "cmd/main.go", "// see RULES.md " + sect + "1\npackage main\n", "RULES.md " + sect + "1"},
		{"missing own section", "docs/OTHER.md", "# Other\n\n## 1. Names\n\nSee " + sect + "5.\n", sect + "5"},
		{"heading in the other convention", "docs/OTHER.md", "# Other\n\n## " + sect + "1 Names\n", "## " + sect + "1 Names"},
		{"a document mentioned by name", "cmd/main.go", "// as DESIGN.md says\npackage main\n", "DESIGN.md"},
		{"a document mentioned with its directory", "scripts/x.sh", "# see docs/GONE.md\n", "docs/GONE.md"},
		{"shell script", "scripts/x.sh", "# see docs/RULES.md " + sect + "3\n", "docs/RULES.md " + sect + "3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := goodTree()
			files[tc.file] = tc.content
			root := writeTree(t, files)
			got := Check(root, names(files))
			var refs []string
			for _, p := range got {
				refs = append(refs, p.Ref)
			}
			require.Len(t, got, 1, "Check with %s = %q: want one problem, got %v", tc.file, tc.content, got)
			assert.Equal(t, tc.wantRef, got[0].Ref, "the problem's reference")
			assert.Equal(t, tc.file, got[0].File, "the problem's file")
		})
	}
}

func TestCheckReportsUnreadableFiles(t *testing.T) {
	root := t.TempDir()
	got := Check(root, []string{"missing.md"})
	require.Len(t, got, 1, "Check of a file that does not exist")
	assert.True(t, strings.Contains(got[0].Msg, "cannot read"), "message %q", got[0].Msg)
}

func TestAnchor(t *testing.T) {
	for in, want := range map[string]string{
		"1. Base rules":               "1-base-rules",
		"3.3 Native MCP: `mcp.json`":  "33-native-mcp-mcpjson",
		"What a user feels: `render`": "what-a-user-feels-render",
	} {
		assert.Equal(t, want, Anchor(in), "Anchor(%q)", in)
	}
}
