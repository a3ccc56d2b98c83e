package conformity_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/internal/testplugins"
	"github.com/loadout-dev/loadout/plugins"
)

// TestNoHarnessKnowledgeInHostOrSuite holds the host and the conformity suite to what their
// profiles say: no non-test code in host/ or conformity/ names a harness, as a string (a
// harness id) or in an identifier, so a harness is added with a plugin and a profile and no
// host change. Comments and struct tags (the corpus format's field names) may name them.
func TestNoHarnessKnowledgeInHostOrSuite(t *testing.T) {
	profiles, err := plan.LoadProfiles(plugins.Profiles)
	require.NoError(t, err)
	var ids []string
	for id := range profiles {
		ids = append(ids, id)
	}
	require.NotEmpty(t, ids)
	root := testplugins.Root(t)
	var scanned int
	for _, dir := range []string{"host", "conformity"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			scanned++
			tags := map[*ast.BasicLit]bool{}
			ast.Inspect(f, func(n ast.Node) bool {
				if fld, ok := n.(*ast.Field); ok && fld.Tag != nil {
					tags[fld.Tag] = true
				}
				return true
			})
			ast.Inspect(f, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.BasicLit:
					if x.Kind != token.STRING || tags[x] {
						return true
					}
					s, err := strconv.Unquote(x.Value)
					if err != nil {
						return true
					}
					for _, id := range ids {
						assert.NotEqual(t, id, s, "%s: the string %q names a harness", fset.Position(x.Pos()), s)
					}
				case *ast.Ident:
					for _, id := range ids {
						if len(id) >= 4 && strings.Contains(strings.ToLower(x.Name), id) {
							assert.Fail(t, "identifier names a harness", "%s: %s (harness %s)", fset.Position(x.Pos()), x.Name, id)
						}
					}
				}
				return true
			})
			return nil
		})
		require.NoError(t, err)
	}
	assert.Greater(t, scanned, 20, "the scan reads the host's sources")
}
