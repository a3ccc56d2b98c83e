package plan

import (
	"slices"
	"strconv"

	"github.com/loadout-dev/loadout/sdk/abi"
)

// OAuthKeyMeanings are what a key inside a server's oauth object (the server key meaning
// oauth) may mean; the host reads each and compares it with the vetted server's OAuth.
var OAuthKeyMeanings = []string{"clientId", "callbackPort", "scopes", "authServerMetadataUrl"}

// compareOAuth checks a rendered server's OAuth and lifecycle settings against the vetted
// ones: every value rendered must be the vetted value, none may be invented, and a vetted
// value is left out only when a warning abi.WarnOAuthUnsupported (abi.WarnLifecycleUnsupported)
// names the server: the harness has no key for it, or cannot take this value.
func (c *checker) compareOAuth(name string, r *rendered, v abi.Server) {
	mismatch := func(field, format string, args ...any) {
		c.add(name, r.Loc+"."+field, RuleServerMismatch, format, args...)
	}
	o := r.OAuth
	vo := v.OAuth
	if vo == nil {
		if o.Present || o.HasScopes || o.ClientID != nil {
			mismatch("oauth", "the vetted server has no oauth setting")
		}
	} else {
		if o.ClientID != nil && *o.ClientID != vo.ClientID {
			mismatch("oauth", "oauth client id differs from the vetted one")
		}
		if o.CallbackPort != nil && *o.CallbackPort != int64(vo.CallbackPort) {
			mismatch("oauth", "oauth callback port %d differs from the vetted %d", *o.CallbackPort, vo.CallbackPort)
		}
		if o.MetadataURL != nil && *o.MetadataURL != vo.AuthServerMetadataURL {
			mismatch("oauth", "oauth authorization-server metadata URL differs from the vetted one")
		}
		if o.HasScopes && !slices.Equal(o.Scopes, vo.Scopes) {
			mismatch("oauth", "oauth scopes differ from the vetted ones")
		}
		if !c.warnCodes[v.ID][abi.WarnOAuthUnsupported] {
			for _, m := range []struct {
				set, rendered bool
				what          string
			}{
				{vo.ClientID != "", o.ClientID != nil, "client id"},
				{vo.CallbackPort != 0, o.CallbackPort != nil, "callback port"},
				{len(vo.Scopes) > 0, o.HasScopes, "scopes"},
				{vo.AuthServerMetadataURL != "", o.MetadataURL != nil, "authorization-server metadata URL"},
			} {
				if m.set && !m.rendered {
					mismatch("oauth", "the vetted oauth %s is not rendered and no %s warning names the server", m.what, abi.WarnOAuthUnsupported)
				}
			}
		}
	}
	if r.Lifecycle != nil && *r.Lifecycle != v.Lifecycle {
		mismatch("lifecycle", "lifecycle %q differs from the vetted %q", truncate(*r.Lifecycle, 32), v.Lifecycle)
	}
	if r.IdleTimeout != nil {
		f, err := strconv.ParseFloat(*r.IdleTimeout, 64)
		if err != nil || f != v.IdleTimeout || v.IdleTimeout == 0 {
			mismatch("idleTimeout", "idle timeout %s differs from the vetted %g minutes", truncate(*r.IdleTimeout, 32), v.IdleTimeout)
		}
	}
	if !c.warnCodes[v.ID][abi.WarnLifecycleUnsupported] {
		if v.Lifecycle != "" && r.Lifecycle == nil {
			mismatch("lifecycle", "the vetted lifecycle is not rendered and no %s warning names the server", abi.WarnLifecycleUnsupported)
		}
		if v.IdleTimeout != 0 && r.IdleTimeout == nil {
			mismatch("idleTimeout", "the vetted idle timeout is not rendered and no %s warning names the server", abi.WarnLifecycleUnsupported)
		}
	}
}
