package host

import (
	"io/fs"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/plugins"
)

// TestCheckoutEnvWarnings: no built-in harness reads a checkout file into its environment any
// more (Gemini CLI's .gemini/.env is kept out by its pinned settings), and a profile that names
// such a file gets the checkout_env_file warning, naming the file; a path outside the checkout
// is refused.
func TestCheckoutEnvWarnings(t *testing.T) {
	profiles, err := plan.LoadProfiles(plugins.Profiles)
	require.NoError(t, err)
	for h, prof := range profiles {
		assert.Empty(t, checkoutEnvWarnings(prof), "checkoutEnvWarnings(%s)", h)
	}
	src, err := fs.ReadFile(plugins.Profiles, "gemini/profile.yaml")
	require.NoError(t, err)
	load := func(line string) (*plan.Profile, error) {
		got, err := plan.LoadProfiles(fstest.MapFS{"gemini/profile.yaml": {Data: append(slices.Clone(src), "\n"+line+"\n"...)}})
		return got["gemini"], err
	}
	prof, err := load("checkoutEnvFile: .gemini/.env")
	require.NoError(t, err)
	got := checkoutEnvWarnings(prof)
	require.Len(t, got, 1)
	assert.Equal(t, CodeCheckoutEnvFile, got[0].Code)
	assert.Contains(t, got[0].Message, "<checkout>/.gemini/.env")
	_, err = load("checkoutEnvFile: ../.env")
	assert.ErrorContains(t, err, `checkoutEnvFile "../.env"`)
}
