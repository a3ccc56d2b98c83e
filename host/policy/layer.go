package policy

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
)

// Source is one policy tree in force, in the order they are laid over each other.
type Source struct {
	// Kind is "defaults" (the embedded default policies), "directory" or "bundle".
	Kind string `json:"kind"`
	// Name says where the tree comes from: "embedded", a path or a URL.
	Name string `json:"name"`
	// Revision is a bundle's manifest revision.
	Revision string `json:"revision,omitempty"`
}

func (s Source) String() string {
	out := s.Kind + " " + s.Name
	if s.Revision != "" {
		out += " (revision " + s.Revision + ")"
	}
	return out
}

// defaultsSource is the embedded default policies as a Source.
var defaultsSource = Source{Kind: "defaults", Name: "embedded"}

// tree is a loaded policy tree: its modules by file name, each module's source text, and its
// data documents.
type tree struct {
	modules map[string]*ast.Module
	raw     map[string][]byte
	data    map[string]any
}

// parserOptions are the options every module of a policy tree is parsed with.
func parserOptions() ast.ParserOptions {
	return ast.ParserOptions{RegoVersion: ast.RegoV1, Capabilities: Capabilities(), ProcessAnnotation: true}
}

// layer lays team over base, the default policies: base's rules all stay and team's rules are
// added; team's data is laid over base's by path (mergeData), so a team overrides one tunable
// without copying the rest. A team module that is byte for byte a default module (a copy of
// the defaults kept next to the team's own files, or built into the team's bundle) is the
// default module and is left out. A
// team module that declares a package of the defaults, or has a default module's path with
// other contents, is refused: it would change the defaults' rules in place, which only an
// explicit replacement may do. With prefix set, team modules are named prefix/<path>, so
// file:row in decisions and errors names the team's file.
func layer(base, team tree, prefix string) (tree, error) {
	prefix = strings.TrimRight(prefix, "/")
	defaultPkgs := map[string]bool{}
	defaultRaw := map[string]bool{}
	for name, m := range base.modules {
		defaultPkgs[m.Package.Path.String()] = true
		defaultRaw[string(base.raw[name])] = true
	}
	out := tree{modules: maps.Clone(base.modules), raw: maps.Clone(base.raw), data: mergeData(base.data, team.data)}
	for _, name := range slices.Sorted(maps.Keys(team.modules)) {
		m := team.modules[name]
		clean := strings.TrimPrefix(name, "/")
		if defaultRaw[string(team.raw[name])] {
			continue
		}
		where := name
		if prefix != "" {
			where = prefix + "/" + clean
		}
		if _, ok := base.modules[clean]; ok {
			return tree{}, fmt.Errorf("load policies: %s: has the path of a default policy file with other contents; team policies are laid over the defaults and cannot change them (--replace-default-policies replaces them)", where)
		}
		if pkg := m.Package.Path.String(); defaultPkgs[pkg] && !strings.HasSuffix(name, "_test.rego") {
			return tree{}, fmt.Errorf("load policies: %s:%d: package %s belongs to the default policies; put team rules in a package of their own (every package under %s is read), or replace the defaults with --replace-default-policies", where, m.Package.Location.Row, strings.TrimPrefix(pkg, "data."), Namespace)
		}
		if prefix != "" {
			parsed, err := ast.ParseModuleWithOpts(where, string(team.raw[name]), parserOptions())
			if err != nil {
				return tree{}, fmt.Errorf("load policies: %w", compileError(err))
			}
			m = parsed
		}
		if _, dup := out.modules[where]; dup {
			return tree{}, fmt.Errorf("load policies: %s: two policy files have this name", where)
		}
		out.modules[where] = m
		out.raw[where] = team.raw[name]
	}
	return out, nil
}
