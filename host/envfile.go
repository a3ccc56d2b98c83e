package host

import (
	"fmt"

	"github.com/loadout-dev/loadout/host/plan"
)

// CodeCheckoutEnvFile: the harness reads a file of the checkout (the profile's
// checkoutEnvFile) and sets every variable of it that its environment lacks, and no switch
// prevents it: a repository can point the CLI's traffic at a proxy or another endpoint. Every
// render for such a harness carries the warning, so that a platform knows.
const CodeCheckoutEnvFile = "checkout_env_file"

// checkoutEnvWarnings warns once when the harness of prof reads a file of the checkout into
// its environment.
func checkoutEnvWarnings(prof *plan.Profile) []Warning {
	if prof == nil || prof.CheckoutEnvFile == "" {
		return nil
	}
	return []Warning{{Code: CodeCheckoutEnvFile, Message: fmt.Sprintf(
		"%s reads <checkout>/%s and sets every variable of it that its environment lacks (a proxy, an endpoint), and no switch prevents it: make sure the checkout holds no such file, or set every variable it could hold in the run's environment",
		prof.Harness, prof.CheckoutEnvFile)}}
}
