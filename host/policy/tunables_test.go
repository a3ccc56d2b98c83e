package policy

import (
	"context"
	"io/fs"
	"path"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/policies"
)

// Every tunables area of the defaults ships its schema.
func TestEveryDefaultTunablesAreaHasASchema(t *testing.T) {
	t.Parallel()
	areas, err := fs.Glob(policies.FS, "tunables/*/data.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, areas)
	for _, a := range areas {
		_, err := fs.Stat(policies.FS, path.Join(path.Dir(a), SchemaFile))
		assert.NoError(t, err, "%s has no %s", path.Dir(a), SchemaFile)
	}
}

// A misspelled or mistyped tunable, or a reference to a tunable that does not exist, refuses
// the policy at load instead of making a rule decide nothing.
func TestTunableTyposRefuseThePolicy(t *testing.T) {
	t.Parallel()
	corpSchema := `{"type": "object", "additionalProperties": false, "required": ["hosts"],
		"properties": {"hosts": {"type": "array", "items": {"type": "string"}}}}`
	corpRule := "package loadout.corp\n\nimport data.tunables.corp as conf\n\ndeny contains {\"server\": i, \"code\": \"host\", \"msg\": sprintf(\"%s not in %v\", [s.id, conf.KEY])} if {\n\tsome i, s in input.servers\n\ts.transport == \"http\"\n\tnot s.facts.url.host in conf.hosts\n}\n"
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"misspelled default tunable", map[string]string{"tunables/userservers/data.yaml": "userServer: remote\n"},
			"data.tunables.userservers does not match tunables/userservers/schema.jsonschema: at /: additional properties 'userServer' not allowed"},
		{"mistyped default tunable", map[string]string{"tunables/secrets/data.yaml": "always_secret_headers: authorization\n"},
			"at /always_secret_headers: got string, want array"},
		{"misspelled team tunable", map[string]string{"tunables/corp/data.yaml": "hots: [a.corp.example]\n", "tunables/corp/schema.jsonschema": corpSchema, "loadout/corp.rego": strings.ReplaceAll(corpRule, "KEY", "hosts")},
			"does not match team/tunables/corp/schema.jsonschema"},
		{"misspelled reference in a message", map[string]string{"tunables/corp/data.yaml": "hosts: [a.corp.example]\n", "tunables/corp/schema.jsonschema": corpSchema, "loadout/corp.rego": strings.ReplaceAll(corpRule, "KEY", "hots")},
			"team/loadout/corp.rego:5: data.tunables.corp.hots is not in the policy's data"},
		{"misspelled area", map[string]string{"loadout/corp.rego": "package loadout.corp\n\ndeny contains {\"server\": 0, \"code\": \"x\"} if count(data.tunables.secret.always_secret_headers) > 0\n"},
			"team/loadout/corp.rego:3: data.tunables.secret is not in the policy's data (data.tunables has allow, secrets, url, userservers)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tree := fstest.MapFS{}
			for name, src := range tc.files {
				tree[name] = &fstest.MapFile{Data: []byte(src)}
			}
			_, err := New(context.Background(), Config{FS: tree, Name: "team"})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}

	// The same team area, spelled right, loads.
	tree := fstest.MapFS{
		"tunables/corp/data.yaml":         {Data: []byte("hosts: [a.corp.example]\n")},
		"tunables/corp/schema.jsonschema": {Data: []byte(corpSchema)},
		"loadout/corp.rego":               {Data: []byte(strings.ReplaceAll(corpRule, "KEY", "hosts"))},
	}
	_, err := New(context.Background(), Config{FS: tree, Name: "team"})
	require.NoError(t, err)
}
