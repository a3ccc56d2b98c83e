package plan

import (
	"slices"
	"strconv"
	"strings"

	"github.com/loadout-dev/loadout/sdk/abi"
)

// OAuthKeyMeanings are what a key inside a server's oauth object (the server key meaning
// oauth) may mean; the host reads each and compares it with the vetted server's OAuth.
var OAuthKeyMeanings = []string{"clientId", "callbackPort", "scopes", "authServerMetadataUrl"}

// renderedOAuth is what a rendered server says about OAuth and its lifecycle, by meaning.
type renderedOAuth struct {
	present                bool    // a key meaning oauth is there
	clientID, metadataURL  *string // clientID: also from a key meaning oauthClientId
	callbackPort           *int64
	scopes                 []string
	hasScopes              bool
	lifecycle, idleTimeout *string // idleTimeout: the number as written
}

// scopeList reads a scopes value: one string of space-separated scopes, or a list of strings.
func scopeList(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, " ")
}

// readJSONOAuth reads the object of a key meaning oauth through the profile's oauthKeys.
func (c *checker) readJSONOAuth(name, loc string, r *rendered, key string, x *Value) {
	r.oauth.present = true
	if x.Kind != Object {
		c.add(name, loc+"."+key, RuleServerMismatch, "%s is a %s, want an object", key, x.Kind)
		return
	}
	for _, m := range x.Members {
		mloc := loc + "." + key + "." + m.Name
		for _, s := range jsonStrings(m.Value) {
			r.strs = append(r.strs, located{field: "oauth", key: m.Name, s: s})
		}
		switch meaning := c.h.oauthKeys[m.Name]; meaning {
		case "":
			c.add(name, mloc, RuleConfigKey, "oauth key %q is not allowed", truncate(m.Name, 64))
		case "clientId", "authServerMetadataUrl":
			if m.Value.Kind != String {
				c.add(name, mloc, RuleServerMismatch, "%s is a %s, want a string", m.Name, m.Value.Kind)
				continue
			}
			s := m.Value.Str
			if meaning == "clientId" {
				r.oauth.clientID = &s
			} else {
				r.oauth.metadataURL = &s
			}
		case "callbackPort":
			n, err := strconv.ParseInt(m.Value.Number, 10, 32)
			if m.Value.Kind != Number || err != nil {
				c.add(name, mloc, RuleServerMismatch, "%s must be an integer", m.Name)
				continue
			}
			r.oauth.callbackPort = &n
		case "scopes":
			c.readJSONScopes(name, mloc, r, m.Value)
		}
	}
}

func (c *checker) readJSONScopes(name, loc string, r *rendered, x *Value) {
	r.oauth.hasScopes = true
	switch x.Kind {
	case String:
		r.oauth.scopes = scopeList(x.Str)
	case Array:
		r.oauth.scopes = []string{}
		for _, it := range x.Items {
			if it.Kind != String {
				c.add(name, loc, RuleServerMismatch, "scopes hold a %s, want strings", it.Kind)
				continue
			}
			r.oauth.scopes = append(r.oauth.scopes, it.Str)
		}
	default:
		c.add(name, loc, RuleServerMismatch, "scopes are a %s, want a string or a list of strings", x.Kind)
	}
}

// readTOMLOAuth reads the table of a key meaning oauth through the profile's oauthKeys.
func (c *checker) readTOMLOAuth(name, loc string, r *rendered, key string, x any) {
	r.oauth.present = true
	t, ok := x.(map[string]any)
	if !ok {
		c.add(name, loc+"."+key, RuleServerMismatch, "%s is a %T, want a table", key, x)
		return
	}
	names := make([]string, 0, len(t))
	for k := range t {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		v := t[k]
		mloc := loc + "." + key + "." + k
		for _, s := range tomlStrings(&TOMLDoc{Map: map[string]any{k: v}}) {
			r.strs = append(r.strs, located{field: "oauth", key: k, s: s})
		}
		switch meaning := c.h.oauthKeys[k]; meaning {
		case "":
			c.add(name, mloc, RuleConfigKey, "oauth key %q is not allowed", truncate(k, 64))
		case "clientId", "authServerMetadataUrl":
			s, ok := v.(string)
			if !ok {
				c.add(name, mloc, RuleServerMismatch, "%s is a %T, want a string", k, v)
				continue
			}
			if meaning == "clientId" {
				r.oauth.clientID = &s
			} else {
				r.oauth.metadataURL = &s
			}
		case "callbackPort":
			n, ok := v.(int64)
			if !ok {
				c.add(name, mloc, RuleServerMismatch, "%s is a %T, want an integer", k, v)
				continue
			}
			r.oauth.callbackPort = &n
		case "scopes":
			c.readTOMLScopes(name, mloc, r, v)
		}
	}
}

func (c *checker) readTOMLScopes(name, loc string, r *rendered, x any) {
	r.oauth.hasScopes = true
	switch v := x.(type) {
	case string:
		r.oauth.scopes = scopeList(v)
	case []any:
		r.oauth.scopes = []string{}
		for _, it := range v {
			s, ok := it.(string)
			if !ok {
				c.add(name, loc, RuleServerMismatch, "scopes hold a %T, want strings", it)
				continue
			}
			r.oauth.scopes = append(r.oauth.scopes, s)
		}
	default:
		c.add(name, loc, RuleServerMismatch, "scopes are a %T, want a string or a list of strings", x)
	}
}

// compareOAuth checks a rendered server's OAuth and lifecycle settings against the vetted
// ones: every value rendered must be the vetted value, none may be invented, and a vetted
// value is left out only when a warning abi.WarnOAuthUnsupported (abi.WarnLifecycleUnsupported)
// names the server: the harness has no key for it, or cannot take this value.
func (c *checker) compareOAuth(name string, r *rendered, v abi.Server) {
	mismatch := func(field, format string, args ...any) {
		c.add(name, r.loc+"."+field, RuleServerMismatch, format, args...)
	}
	o := r.oauth
	vo := v.OAuth
	if vo == nil {
		if o.present || o.hasScopes || o.clientID != nil {
			mismatch("oauth", "the vetted server has no oauth setting")
		}
	} else {
		if o.clientID != nil && *o.clientID != vo.ClientID {
			mismatch("oauth", "oauth client id differs from the vetted one")
		}
		if o.callbackPort != nil && *o.callbackPort != int64(vo.CallbackPort) {
			mismatch("oauth", "oauth callback port %d differs from the vetted %d", *o.callbackPort, vo.CallbackPort)
		}
		if o.metadataURL != nil && *o.metadataURL != vo.AuthServerMetadataURL {
			mismatch("oauth", "oauth authorization-server metadata URL differs from the vetted one")
		}
		if o.hasScopes && !slices.Equal(o.scopes, vo.Scopes) {
			mismatch("oauth", "oauth scopes differ from the vetted ones")
		}
		if !c.warnCodes[v.ID][abi.WarnOAuthUnsupported] {
			for _, m := range []struct {
				set, rendered bool
				what          string
			}{
				{vo.ClientID != "", o.clientID != nil, "client id"},
				{vo.CallbackPort != 0, o.callbackPort != nil, "callback port"},
				{len(vo.Scopes) > 0, o.hasScopes, "scopes"},
				{vo.AuthServerMetadataURL != "", o.metadataURL != nil, "authorization-server metadata URL"},
			} {
				if m.set && !m.rendered {
					mismatch("oauth", "the vetted oauth %s is not rendered and no %s warning names the server", m.what, abi.WarnOAuthUnsupported)
				}
			}
		}
	}
	if o.lifecycle != nil && *o.lifecycle != v.Lifecycle {
		mismatch("lifecycle", "lifecycle %q differs from the vetted %q", truncate(*o.lifecycle, 32), v.Lifecycle)
	}
	if o.idleTimeout != nil {
		f, err := strconv.ParseFloat(*o.idleTimeout, 64)
		if err != nil || f != v.IdleTimeout || v.IdleTimeout == 0 {
			mismatch("idleTimeout", "idle timeout %s differs from the vetted %g minutes", truncate(*o.idleTimeout, 32), v.IdleTimeout)
		}
	}
	if !c.warnCodes[v.ID][abi.WarnLifecycleUnsupported] {
		if v.Lifecycle != "" && o.lifecycle == nil {
			mismatch("lifecycle", "the vetted lifecycle is not rendered and no %s warning names the server", abi.WarnLifecycleUnsupported)
		}
		if v.IdleTimeout != 0 && o.idleTimeout == nil {
			mismatch("idleTimeout", "the vetted idle timeout is not rendered and no %s warning names the server", abi.WarnLifecycleUnsupported)
		}
	}
}
