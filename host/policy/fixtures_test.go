package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/spec"
)

var update = flag.Bool("update", false, "rewrite the policy test fixtures (policies/fixtures) from testdata/fixtures")

// fixtureHostEnv is the host environment every fixture is built with (names only reach the
// policy).
var fixtureHostEnv = []spec.Pair{
	{Name: "HOME", Value: "/home/alice"}, {Name: "LANG", Value: "C.UTF-8"}, {Name: "PATH", Value: "/usr/bin:/bin"},
	{Name: "LC_ALL", Value: "C"}, {Name: "AWS_SECRET_ACCESS_KEY", Value: "not-for-servers"},
}

// TestFixtures holds the Rego tests' inputs (policies/fixtures/<name>/input.json, read as
// data.fixtures.<name>) equal to what `loadout policy input` prints for the requests of
// testdata/fixtures: the default policies are tested against real input documents. Run with
// -update after changing a request or the input document.
func TestFixtures(t *testing.T) {
	ctx := context.Background()
	e, err := New(ctx, Config{})
	require.NoError(t, err, "New")
	files, err := filepath.Glob("testdata/fixtures/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files, "no fixture request in testdata/fixtures")
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(file)
			require.NoError(t, err)
			req, _, err := spec.Parse(body)
			require.NoError(t, err, "spec.Parse(%s)", file)
			d, err := e.Decide(ctx, req, fixtureHostEnv, "")
			require.NoError(t, err, "Decide(%s)", file)
			doc, err := e.InputDocument(req, fixtureHostEnv, "", d.Secrets)
			require.NoError(t, err)
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetIndent("", "  ")
			require.NoError(t, enc.Encode(doc))
			out := filepath.Join("..", "..", "policies", FixturesDir, name, "input.json")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(out), 0o755))
				require.NoError(t, os.WriteFile(out, want.Bytes(), 0o644))
			}
			got, err := os.ReadFile(out)
			require.NoError(t, err, "read %s (run go test ./host/policy -run TestFixtures -update)", out)
			assert.Equal(t, want.String(), string(got), "%s is stale: run go test ./host/policy -run TestFixtures -update", out)
		})
	}
}
