package host

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/plugins"
)

// TestCheckoutEnvWarnings: exactly the harness whose profile names a checkout file it loads
// into its environment (Gemini CLI's .gemini/.env) gets the checkout_env_file warning, naming
// the file.
func TestCheckoutEnvWarnings(t *testing.T) {
	profiles, err := plan.LoadProfiles(plugins.Profiles)
	require.NoError(t, err)
	for h, prof := range profiles {
		got := checkoutEnvWarnings(prof)
		if h != "gemini" {
			assert.Empty(t, got, "checkoutEnvWarnings(%s)", h)
			continue
		}
		require.Len(t, got, 1, "checkoutEnvWarnings(gemini)")
		assert.Equal(t, CodeCheckoutEnvFile, got[0].Code)
		assert.Contains(t, got[0].Message, "<checkout>/.gemini/.env")
	}
	// A path outside the checkout is refused.
	src, err := fs.ReadFile(plugins.Profiles, "gemini/profile.yaml")
	require.NoError(t, err)
	bad := strings.Replace(string(src), "checkoutEnvFile: .gemini/.env", "checkoutEnvFile: ../.env", 1)
	_, err = plan.LoadProfiles(fstest.MapFS{"gemini/profile.yaml": {Data: []byte(bad)}})
	assert.ErrorContains(t, err, `checkoutEnvFile "../.env"`)
}
