package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/loadout-dev/loadout/policies"
)

// SchemaFile is the name of a tunables area's JSON Schema, next to its data.yaml
// (tunables/<area>/schema.jsonschema): a name the opa loader does not read as data.
const SchemaFile = "schema.jsonschema"

// tunablesRoot is the data document that holds the tunables areas.
const tunablesRoot = "tunables"

// schemaSet maps a schema's file name to its bytes.
type schemaSet map[string][]byte

// readSchemas returns the schemas of the tunables areas of fsys, by file name (prefix/…).
func readSchemas(fsys fs.FS, prefix string) (schemaSet, error) {
	out := schemaSet{}
	if fsys == nil {
		return out, nil
	}
	files, err := fs.Glob(fsys, path.Join(tunablesRoot, "*", SchemaFile))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, fmt.Errorf("load policies: %w", err)
		}
		if prefix != "" {
			f = prefix + "/" + f
		}
		out[f] = b
	}
	return out, nil
}

// treeSchemas are the schemas in force for a tree: the defaults' (when they are in force) and
// the team directory's own.
func treeSchemas(fsys fs.FS, name string, defaults bool) (schemaSet, error) {
	out := schemaSet{}
	if defaults {
		def, err := readSchemas(policies.FS, "")
		if err != nil {
			return nil, err
		}
		maps.Copy(out, def)
	}
	if fsys != nil {
		team, err := readSchemas(fsys, name)
		if err != nil {
			return nil, err
		}
		maps.Copy(out, team)
	}
	return out, nil
}

// checkData runs the load checks on a tree's data: its tunables against their schemas, and
// every reference of its modules to a tunable.
func checkData(t tree, data map[string]any, fsys fs.FS, name string, defaults bool) error {
	schemas, err := treeSchemas(fsys, name, defaults)
	if err != nil {
		return err
	}
	if err := checkTunables(data, schemas); err != nil {
		return err
	}
	return checkDataRefs(t.modules, data)
}

// checkTunables validates each tunables area that has a schema against it: an unknown key (a
// misspelled tunable) or a value of the wrong type refuses the policy, naming the area, the key
// and the schema.
func checkTunables(data map[string]any, schemas schemaSet) error {
	tun, _ := data[tunablesRoot].(map[string]any)
	var errs []string
	for _, file := range slices.Sorted(maps.Keys(schemas)) {
		area := path.Base(path.Dir(file))
		c := jsonschema.NewCompiler()
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemas[file]))
		if err != nil {
			return fmt.Errorf("load policies: %s: %w", file, err)
		}
		if err := c.AddResource(file, doc); err != nil {
			return fmt.Errorf("load policies: %s: %w", file, err)
		}
		sch, err := c.Compile(file)
		if err != nil {
			return fmt.Errorf("load policies: %s: %w", file, err)
		}
		raw, err := json.Marshal(tun[area])
		if err != nil {
			return fmt.Errorf("load policies: data.%s.%s: %w", tunablesRoot, area, err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return fmt.Errorf("load policies: data.%s.%s: %w", tunablesRoot, area, err)
		}
		if err := sch.Validate(inst); err != nil {
			var ve *jsonschema.ValidationError
			msg := err.Error()
			if errors.As(err, &ve) {
				msg = flatten(ve)
			}
			errs = append(errs, fmt.Sprintf("data.%s.%s does not match %s: %s", tunablesRoot, area, file, msg))
		}
	}
	if len(errs) > 0 {
		return errors.New("load policies: " + strings.Join(errs, "; "))
	}
	return nil
}

// englishPrinter prints the schema library's error messages.
var englishPrinter = message.NewPrinter(language.English)

// flatten is the leaf errors of ve on one line, each with the path of the value.
func flatten(ve *jsonschema.ValidationError) string {
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "/" + strings.Join(e.InstanceLocation, "/")
			out = append(out, fmt.Sprintf("at %s: %s", loc, e.ErrorKind.LocalizedString(englishPrinter)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return strings.Join(out, "; ")
}

// checkDataRefs refuses every reference of modules (tests left out) to a tunable the data does
// not have: data.tunables.url.allowed_shemes, or conf.allowed_shemes under `import
// data.tunables.url as conf`. OPA reads such a reference as undefined, which makes the rule
// that reads it (a deny, or a message) silently decide nothing.
func checkDataRefs(modules map[string]*ast.Module, data map[string]any) error {
	var errs []string
	for _, file := range slices.Sorted(maps.Keys(modules)) {
		if strings.HasSuffix(file, "_test.rego") {
			continue
		}
		m := modules[file]
		aliases := map[ast.Var]ast.Ref{}
		for _, imp := range m.Imports {
			ref, ok := imp.Path.Value.(ast.Ref)
			if !ok || !ref.HasPrefix(ast.DefaultRootRef) {
				continue
			}
			alias := imp.Alias
			if alias == "" {
				if s, ok := ref[len(ref)-1].Value.(ast.String); ok {
					alias = ast.Var(s)
				}
			}
			aliases[alias] = ref
		}
		seen := map[string]bool{}
		for _, r := range m.Rules {
			ast.WalkRefs(r, func(ref ast.Ref) bool {
				full := ref
				if v, ok := ref[0].Value.(ast.Var); ok && !ref.HasPrefix(ast.DefaultRootRef) {
					imp, ok := aliases[v]
					if !ok {
						return false
					}
					full = imp.Concat(ref[1:])
				}
				if msg := missingTunable(full, data); msg != "" && !seen[msg] {
					seen[msg] = true
					at := file
					if ref[0].Location != nil {
						at = fmt.Sprintf("%s:%d", ref[0].Location.File, ref[0].Location.Row)
					}
					errs = append(errs, at+": "+msg)
				}
				return false
			})
		}
	}
	if len(errs) > 0 {
		return errors.New("load policies: " + strings.Join(errs, "; "))
	}
	return nil
}

// missingTunable says what of ref (a data reference) the tunables do not have, or "".
func missingTunable(ref ast.Ref, data map[string]any) string {
	if len(ref) < 2 || !ref.HasPrefix(ast.DefaultRootRef) || !ref[1].Equal(ast.StringTerm(tunablesRoot)) {
		return ""
	}
	var cur any = data
	for i := 1; i < len(ref); i++ {
		key, ok := ref[i].Value.(ast.String)
		if !ok {
			return "" // a computed key: only its prefix is checked
		}
		obj, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		next, ok := obj[string(key)]
		if !ok {
			known := slices.Sorted(maps.Keys(obj))
			return fmt.Sprintf("%s is not in the policy's data (%s has %s): a misspelled tunable reads as undefined and the rule decides nothing", ref[:i+1], ref[:i], strings.Join(known, ", "))
		}
		cur = next
	}
	return ""
}

// Check runs loadout's load checks on the policy tree fsys (laid over the defaults unless
// replace; nil: the defaults), as New does, then OPA's strict compile of the whole tree, tests
// included, with Capabilities: what `opa check --strict --capabilities` (loadout policy
// capabilities) reports. The error names each file:row.
func Check(ctx context.Context, fsys fs.FS, name string, replace bool) error {
	if _, err := New(ctx, Config{FS: fsys, Name: name, ReplaceDefaults: replace}); err != nil {
		return err
	}
	t, _, _, err := assemble(fsys, nil, name, replace, true)
	if err != nil {
		return err
	}
	c := ast.NewCompiler().
		WithCapabilities(Capabilities()).
		WithStrict(true).
		WithEnablePrintStatements(true).
		WithUseTypeCheckAnnotations(true).
		WithDefaultRegoVersion(ast.RegoV1)
	c.Compile(t.modules)
	if c.Failed() {
		return &CompileError{Errors: c.Errors}
	}
	return nil
}
