package format

import (
	"strconv"
	"strings"

	"github.com/loadout-dev/loadout/sdk/abi"
)

// Warning codes for settings a harness has no place for; one warning per server.
const (
	WarnOAuthUnsupported     = abi.WarnOAuthUnsupported
	WarnLifecycleUnsupported = abi.WarnLifecycleUnsupported
)

// OAuthWarning is the one warning for server s whose OAuth members left (their ABI names,
// each with the reason in parentheses when there is one) harness cannot carry, or nil when
// left is empty.
func OAuthWarning(s abi.Server, harness string, left []string) *abi.Warning {
	if len(left) == 0 {
		return nil
	}
	return &abi.Warning{Code: WarnOAuthUnsupported, Server: s.ID,
		Message: harness + " has no place for oauth " + strings.Join(left, ", ") + "; left out, the rest of the server is rendered"}
}

// LifecycleWarning is the one warning for server s when it sets a lifecycle or an idle timeout
// and harness has no such setting, or nil.
func LifecycleWarning(s abi.Server, harness string) *abi.Warning {
	var set []string
	if s.Lifecycle != "" {
		set = append(set, "lifecycle "+strconv.Quote(s.Lifecycle))
	}
	if s.IdleTimeout != 0 {
		set = append(set, "idleTimeout "+strconv.FormatFloat(s.IdleTimeout, 'g', -1, 64)+" minutes")
	}
	if len(set) == 0 {
		return nil
	}
	return &abi.Warning{Code: WarnLifecycleUnsupported, Server: s.ID,
		Message: harness + " has no per-server lifecycle setting: " + strings.Join(set, " and ") + " left out; it starts and stops the server its own way"}
}
