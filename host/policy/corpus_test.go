package policy

import (
	"context"
	"errors"
	"flag"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/conformity/corpus"
	"github.com/loadout-dev/loadout/host/exposure"
	"github.com/loadout-dev/loadout/host/spec"
)

var casesDir = flag.String("cases", "../../conformity/testdata/cases", "directory of conformity cases to run")

// sortedPairs turns a context map into an ordered pair list (by name, for determinism).
func sortedPairs(m map[string]string) []spec.Pair {
	out := make([]spec.Pair, 0, len(m))
	for k, v := range m {
		out = append(out, spec.Pair{Name: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// TestCorpus runs every conformity case through spec.Parse, Decide and Vet (for a harness
// without exposure of its own) and checks what the policy stage decides: kept servers, skills and resources, the redaction set, spawn
// environments and whole-request rejection.
func TestCorpus(t *testing.T) {
	cases, err := corpus.Load(*casesDir)
	require.NoError(t, err, "corpus.Load(%s)", *casesDir)
	require.NotEmpty(t, cases, "corpus.Load(%s) found no case", *casesDir)
	ctx := context.Background()
	e, err := New(ctx, Config{})
	require.NoError(t, err, "New with the embedded policies")

	for _, c := range cases {
		t.Run(c.File, func(t *testing.T) {
			t.Parallel()
			e := e
			if c.Context.Data != nil {
				var err error
				e, err = New(ctx, Config{Data: c.Context.Data})
				require.NoError(t, err, "New with the case's context.data")
			}
			req, _, err := spec.Parse(c.Body())
			hostEnv := sortedPairs(c.Context.HostEnv)
			var v *Vetted
			if err == nil {
				req.Tokens = sortedPairs(c.Context.Tokens)
				var d *Decision
				d, err = e.Decide(ctx, req, hostEnv, "")
				if err == nil {
					// A case's servers are those of a harness without exposure of its own
					// that has a deny list, as every built-in one but Pi.
					v, err = Vet(req, d, hostEnv, VetOptions{Exposure: &exposure.Harness{Name: "corpus", Deny: true}})
				}
			}
			if c.Expect.Rejected {
				var re *spec.RejectError
				assert.True(t, errors.As(err, &re) || IsRejected(err), "%s: want the request rejected, got err=%v", c.Name, err)
				return
			}
			require.NoError(t, err, "%s: parse, decide and vet", c.Name)

			ar := v.Request()
			servers := []string{}
			for _, s := range ar.Servers {
				servers = append(servers, s.ID)
			}
			assert.Equal(t, c.Expect.Servers, servers, "%s: kept servers", c.Name)
			skills := []string{}
			resources := map[string][]string{}
			for _, sk := range ar.Skills {
				skills = append(skills, sk.Name)
				paths := []string{}
				for _, r := range sk.Resources {
					paths = append(paths, r.Path)
				}
				resources[sk.Name] = paths
			}
			assert.Equal(t, c.Expect.Skills, skills, "%s: kept skills", c.Name)
			for _, name := range skills {
				want := c.Expect.Resources[name]
				if want == nil {
					want = []string{}
				}
				assert.Equal(t, want, resources[name], "%s: resources of skill %q", c.Name, name)
			}
			gotRedact := v.Redactions()
			wantRedact := slices.Clone(c.Expect.Redact)
			if wantRedact == nil {
				wantRedact = []string{}
			}
			assert.ElementsMatch(t, wantRedact, gotRedact, "%s: redaction set", c.Name)
			for id, want := range c.Expect.SpawnEnv {
				got := map[string]string{}
				for _, p := range v.SpawnEnv(id) {
					got[p.Name] = p.Value
				}
				assert.Equal(t, want, got, "%s: spawn env of %q", c.Name, id)
			}
		})
	}
}
