package conformity_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/conformity"
	"github.com/loadout-dev/loadout/conformity/corpus"
)

// TestEmbeddedIsTheCorpus: the corpus built into the binary is the one in the tree, case for
// case, with its exceptions, so a run outside a checkout certifies against the same cases.
func TestEmbeddedIsTheCorpus(t *testing.T) {
	t.Parallel()
	cp, ex, err := conformity.Embedded()
	require.NoError(t, err)
	assert.Equal(t, conformity.EmbeddedName, cp.Name)
	got, err := corpus.LoadFS(cp.FS)
	require.NoError(t, err)
	want, err := corpus.Load("testdata/cases")
	require.NoError(t, err)
	require.NotEmpty(t, want)
	assert.Equal(t, want, got, "the embedded cases are the tree's")
	wantEx, err := conformity.LoadExceptions(exceptionsFile)
	require.NoError(t, err)
	require.NotEmpty(t, wantEx)
	assert.Equal(t, wantEx, ex, "the embedded exceptions are the tree's")
}
