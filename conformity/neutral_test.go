package conformity_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/internal/testplugins"
	"github.com/loadout-dev/loadout/plugins"
)

// TestNoHarnessKnowledgeInHostOrSuite holds the host, the CLI, the SDK and the conformity suite
// to what their profiles say: no non-test code in host/, cmd/, sdk/ or conformity/ names a
// harness, in a string (a harness id, or one of four letters or more within it) or an
// identifier, so a harness is added with a plugin and a profile and no change there. Comments
// and struct tags may name them, and so may a message naming a struct tag: the public corpus
// format has two fields named after the harnesses they were first written for.
func TestNoHarnessKnowledgeInHostOrSuite(t *testing.T) {
	profiles, err := plan.LoadProfiles(plugins.Profiles)
	require.NoError(t, err)
	var ids []string
	for id := range profiles {
		ids = append(ids, id)
	}
	require.NotEmpty(t, ids)
	root := testplugins.Root(t)
	// Parse every non-test file first: the messages of one file may name the struct tags of
	// another (conformity/run.go names conformity/corpus's fields).
	fset := token.NewFileSet()
	var files []*ast.File
	for _, dir := range []string{"host", "cmd", "sdk", "conformity"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			files = append(files, f)
			return err
		})
		require.NoError(t, err)
	}
	namesHarness := func(s string) bool {
		return slices.ContainsFunc(ids, func(id string) bool { return s == id || len(id) >= 4 && strings.Contains(strings.ToLower(s), id) })
	}
	// tags are the struct tags, which may name a harness; corpusFields the json names among
	// them that do.
	tags := map[*ast.BasicLit]bool{}
	var corpusFields []string
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if fld, ok := n.(*ast.Field); ok && fld.Tag != nil {
				tags[fld.Tag] = true
				if tag, err := strconv.Unquote(fld.Tag.Value); err == nil {
					if name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ","); name != "" && namesHarness(name) {
						corpusFields = append(corpusFields, name)
					}
				}
			}
			return true
		})
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.BasicLit:
				if x.Kind != token.STRING || tags[x] {
					return true
				}
				s, err := strconv.Unquote(x.Value)
				if err != nil || !namesHarness(s) {
					return true
				}
				if !slices.ContainsFunc(corpusFields, func(f string) bool { return strings.Contains(s, f) }) {
					assert.Fail(t, "string names a harness", "%s: the string %q names a harness", fset.Position(x.Pos()), s)
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
	}
	scanned := len(files)
	assert.Greater(t, scanned, 20, "the scan reads the host's sources")
}
