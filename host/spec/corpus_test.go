package spec_test

import (
	"errors"
	"flag"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/conformity/corpus"
	"github.com/loadout-dev/loadout/host/spec"
)

var casesDir = flag.String("cases", "../../conformity/testdata/cases", "directory of conformity case files to run through Parse")

// TestCorpus checks the Go-side expectations of every conformity case: rejection, the kept
// skills and their resources exactly, and that every expected server survives Parse in order
// (the policy decides the rest, so Parse may keep more).
func TestCorpus(t *testing.T) {
	cases, err := corpus.Load(*casesDir)
	require.NoError(t, err, "corpus.Load(%q)", *casesDir)
	require.NotEmpty(t, cases, "corpus.Load(%q) found no case", *casesDir)
	for _, c := range cases {
		t.Run(c.File, func(t *testing.T) {
			t.Parallel()
			req, diags, err := spec.Parse(c.Body())
			if c.Expect.Rejected {
				var re *spec.RejectError
				require.True(t, errors.As(err, &re), "Parse(%s) error = %v, want a *RejectError", c.File, err)
				assert.Nil(t, req, "Parse(%s) returned a request with its refusal", c.File)
				assert.Nil(t, diags, "Parse(%s) returned diagnostics with its refusal", c.File)
				return
			}
			require.NoError(t, err, "Parse(%s) refused a request the case accepts", c.File)

			skills := make([]string, 0, len(req.Skills))
			resources := map[string][]string{}
			for _, sk := range req.Skills {
				skills = append(skills, sk.Name)
				paths := make([]string, 0, len(sk.Resources))
				for _, r := range sk.Resources {
					paths = append(paths, r.RelPath)
				}
				resources[sk.Name] = paths
			}
			assert.Equal(t, orEmpty(c.Expect.Skills), skills, "Parse(%s) kept skills", c.File)
			for _, name := range skills {
				assert.Equal(t, orEmpty(c.Expect.Resources[name]), resources[name],
					"Parse(%s) kept resources of skill %q", c.File, name)
			}
			for name := range c.Expect.Resources {
				assert.Contains(t, skills, name, "Parse(%s): the case lists resources of skill %q, which was not kept", c.File, name)
			}

			ids := make([]string, 0, len(req.Servers))
			for _, s := range req.Servers {
				ids = append(ids, s.ID)
			}
			assert.True(t, isSubsequence(c.Expect.Servers, ids),
				"Parse(%s) kept servers %q, want %q among them in this order", c.File, ids, c.Expect.Servers)
		})
	}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// isSubsequence reports whether want appears in got in order (not necessarily contiguously).
// Each expected id matches the first unmatched server with that id, so duplicates line up.
func isSubsequence(want, got []string) bool {
	j := 0
	for _, g := range got {
		if j < len(want) && g == want[j] {
			j++
		}
	}
	return j == len(want)
}
