package docs

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/conformity/corpus"
	"github.com/loadout-dev/loadout/host/spec"
)

// repoRoot is the directory holding go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok, "runtime.Caller(0) must locate this file")
	return filepath.Dir(filepath.Dir(file))
}

// compile compiles one of this directory's schemas.
func compile(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	path := filepath.Join(repoRoot(t), "docs", name)
	c := jsonschema.NewCompiler()
	sch, err := c.Compile(path)
	require.NoError(t, err, "compile %s", path)
	return sch
}

func instance(t *testing.T, body []byte) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	require.NoError(t, err, "decode %s", body)
	return v
}

// shapeCodes are the diagnostics the request schema stands for: a request the parser reports
// one of them for does not validate. Other diagnostics are about content (a sanitized name, a
// refused command) and the schema does not decide them.
var shapeCodes = map[string]bool{
	spec.CodeUnknownField:     true,
	spec.CodeWrongType:        true,
	spec.CodeNotAnObject:      true,
	spec.CodeNonStringEntry:   true,
	spec.CodeInvalidID:        true,
	spec.CodeInvalidTransport: true,
	spec.CodeInvalidValue:     true,
	spec.CodeInvalidOAuth:     true,
}

func TestRequestSchemaAcceptsTheExamples(t *testing.T) {
	sch := compile(t, "request.schema.json")
	root := repoRoot(t)
	files, err := filepath.Glob(filepath.Join(root, "examples", "*.json"))
	require.NoError(t, err)
	files = append(files, filepath.Join(root, "scripts", "bench", "request.json"))
	require.Greater(t, len(files), 1, "examples/*.json")
	for _, f := range files {
		body, err := os.ReadFile(f)
		require.NoError(t, err)
		_, diags, err := spec.Parse(body)
		require.NoError(t, err, "spec.Parse(%s)", f)
		assert.Empty(t, diags, "%s is an example: loadout keeps all of it", f)
		assert.NoError(t, sch.Validate(instance(t, body)), "%s against request.schema.json", f)
	}
}

// TestRequestSchemaMatchesTheParser runs the conformity corpus through both: a case the parser
// keeps without a diagnostic validates, and a case with a shape diagnostic does not. A case
// the decoder refuses outright (a repeated member, trailing data) is not a JSON document a
// schema can judge, and is left out.
func TestRequestSchemaMatchesTheParser(t *testing.T) {
	sch := compile(t, "request.schema.json")
	cases, err := corpus.Load(filepath.Join(repoRoot(t), "conformity", "testdata", "cases"))
	require.NoError(t, err, "load the corpus")
	var clean, shape, refused int
	for _, c := range cases {
		_, diags, err := spec.Parse(c.Body())
		if err != nil {
			refused++
			continue
		}
		var codes []string
		for _, d := range diags {
			if shapeCodes[d.Code] {
				codes = append(codes, d.Code+" at "+d.Field)
			}
		}
		verr := sch.Validate(instance(t, c.Body()))
		switch {
		case len(diags) == 0:
			clean++
			assert.NoError(t, verr, "case %s: loadout keeps the whole request, so the schema must accept it", c.File)
		case len(codes) > 0:
			shape++
			assert.Error(t, verr, "case %s: the parser reports %v, so the schema must refuse it", c.File, codes)
		}
	}
	t.Logf("corpus: %d clean cases validate, %d with shape diagnostics do not, %d refused by the decoder", clean, shape, refused)
	assert.Greater(t, clean, 10, "the corpus has clean cases")
	assert.Greater(t, shape, 3, "the corpus has cases with shape diagnostics")
}

func TestRequestSchemaUserServers(t *testing.T) {
	sch := compile(t, "request.schema.json")
	for _, body := range []string{
		`{"userServers":[{"id":"notes","transport":"http","url":"https://notes.example/mcp","headers":{"X":"y"}}]}`,
		`{"userServers":[{"id":"-dash","command":"npx","token":null}],"mcpServers":[]}`,
		`{"userServers":[{"id":"` + strings.Repeat("a", 62) + `","command":"x"}]}`,
		`{"mcpServers":[{"id":"a","command":"x","token":{"mint":true}}]}`,
	} {
		_, diags, err := spec.Parse([]byte(body))
		require.NoError(t, err, "spec.Parse(%s)", body)
		require.Empty(t, diags, "%s: loadout keeps all of it", body)
		assert.NoError(t, sch.Validate(instance(t, []byte(body))), "%s against request.schema.json", body)
	}
}

func TestRequestSchemaRefusesShapeMistakes(t *testing.T) {
	sch := compile(t, "request.schema.json")
	for name, body := range map[string]string{
		"unknown member":             `{"mcpServers":[{"id":"a","command":"x","comand":"y"}]}`,
		"folded member":              `{"mcpServers":[{"id":"a","Command":"x"}]}`,
		"stdio without command":      `{"mcpServers":[{"id":"a"}]}`,
		"http without url":           `{"mcpServers":[{"id":"a","transport":"http"}]}`,
		"bad transport":              `{"mcpServers":[{"id":"a","transport":"sse","url":"https://x"}]}`,
		"bad id":                     `{"mcpServers":[{"id":"A b","command":"x"}]}`,
		"args not strings":           `{"mcpServers":[{"id":"a","command":"x","args":[1]}]}`,
		"allowedTools a string":      `{"mcpServers":[{"id":"a","command":"x","allowedTools":"read"}]}`,
		"zero timeout":               `{"mcpServers":[{"id":"a","command":"x","timeout":0}]}`,
		"skill without instruction":  `{"skills":[{"name":"s"}]}`,
		"resource without content":   `{"skills":[{"name":"s","instructions":"i","resources":[{"relPath":"a"}]}]}`,
		"not an object":              `[]`,
		"user server unknown member": `{"userServers":[{"id":"a","command":"x","comand":"y"}]}`,
		"user server bad id":         `{"userServers":[{"id":"A","command":"x"}]}`,
		"user server id too long":    `{"userServers":[{"id":"` + strings.Repeat("a", 63) + `","command":"x"}]}`,
		"user server token":          `{"userServers":[{"id":"a","command":"x","token":{"mint":true}}]}`,
		"user server without url":    `{"userServers":[{"id":"a","transport":"http"}]}`,
		"userServers an object":      `{"userServers":{}}`,
		"oauth client secret":        `{"mcpServers":[{"id":"a","transport":"http","url":"https://x","oauth":{"clientSecret":"s"}}]}`,
		"oauth port zero":            `{"mcpServers":[{"id":"a","transport":"http","url":"https://x","oauth":{"callbackPort":0}}]}`,
		"oauth client id with $":     `{"mcpServers":[{"id":"a","transport":"http","url":"https://x","oauth":{"clientId":"${X}"}}]}`,
		"oauth scopes a string":      `{"mcpServers":[{"id":"a","transport":"http","url":"https://x","oauth":{"scopes":"read"}}]}`,
		"unknown lifecycle":          `{"mcpServers":[{"id":"a","command":"x","lifecycle":"sometimes"}]}`,
	} {
		assert.Error(t, sch.Validate(instance(t, []byte(body))), "%s: %s must not validate", name, body)
	}
}

// TestRequestSchemaRunGroups holds run.groups to the parser: a list it keeps validates, one it
// refuses does not.
func TestRequestSchemaRunGroups(t *testing.T) {
	sch := compile(t, "request.schema.json")
	for body, ok := range map[string]bool{
		`{"run":{"groups":["admins","dev"]}}`:    true,
		`{"run":{"groups":null}}`:                true,
		`{"run":{"groups":[]}}`:                  true,
		`{"run":{"groups":["admins","admins"]}}`: false,
		`{"run":{"groups":[""]}}`:                false,
		`{"run":{"groups":[1]}}`:                 false,
		`{"run":{"groups":"admins"}}`:            false,
	} {
		_, _, err := spec.Parse([]byte(body))
		assert.Equal(t, ok, err == nil, "spec.Parse(%s): %v", body, err)
		verr := sch.Validate(instance(t, []byte(body)))
		assert.Equal(t, ok, verr == nil, "%s against request.schema.json: %v", body, verr)
	}
}
