package readback

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/loadout-dev/loadout/sdk/profile"
)

// scopeList reads a scopes value: one string of space-separated scopes, or a list of strings.
func scopeList(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, " ")
}

// readJSONOAuth reads the object of a key meaning oauth through the profile's oauthKeys.
func (r *reader) readJSONOAuth(loc string, s *Server, key string, x *Value) {
	s.OAuth.Present = true
	if x.Kind != Object {
		r.add(loc+"."+key, RuleServerMismatch, "%s is a %s, want an object", key, x.Kind)
		return
	}
	for _, m := range x.Members {
		mloc := loc + "." + key + "." + m.Name
		for _, str := range m.Value.Strings() {
			s.Strings = append(s.Strings, Located{Field: "oauth", Key: m.Name, S: str})
		}
		switch meaning := r.cf.OAuthKeys[m.Name]; meaning {
		case "":
			r.add(mloc, RuleConfigKey, "oauth key %q is not allowed", truncate(m.Name, 64))
		case "clientId", "authServerMetadataUrl":
			if m.Value.Kind != String {
				r.add(mloc, RuleServerMismatch, "%s is a %s, want a string", m.Name, m.Value.Kind)
				continue
			}
			if meaning == "clientId" {
				s.OAuth.ClientID = strp(m.Value.Str)
			} else {
				s.OAuth.MetadataURL = strp(m.Value.Str)
				r.checkMetadataURL(mloc, m.Value.Str)
			}
		case "callbackPort":
			n, err := strconv.ParseInt(m.Value.Number, 10, 32)
			if m.Value.Kind != Number || err != nil {
				r.add(mloc, RuleServerMismatch, "%s must be an integer", m.Name)
				continue
			}
			s.OAuth.CallbackPort = &n
		case "scopes":
			r.checkScopesForm(mloc, m.Value.Kind == String, m.Value.Kind == Array)
			r.readJSONScopes(mloc, s, m.Value)
		}
	}
}

func (r *reader) readJSONScopes(loc string, s *Server, x *Value) {
	s.OAuth.HasScopes = true
	switch x.Kind {
	case String:
		s.OAuth.Scopes = scopeList(x.Str)
	case Array:
		s.OAuth.Scopes = []string{}
		for _, it := range x.Items {
			if it.Kind != String {
				r.add(loc, RuleServerMismatch, "scopes hold a %s, want strings", it.Kind)
				continue
			}
			s.OAuth.Scopes = append(s.OAuth.Scopes, it.Str)
		}
	default:
		r.add(loc, RuleServerMismatch, "scopes are a %s, want a string or a list of strings", x.Kind)
	}
}

// readTOMLOAuth reads the table of a key meaning oauth through the profile's oauthKeys.
func (r *reader) readTOMLOAuth(loc string, s *Server, key string, x any) {
	s.OAuth.Present = true
	t, ok := x.(map[string]any)
	if !ok {
		r.add(loc+"."+key, RuleServerMismatch, "%s is a %T, want a table", key, x)
		return
	}
	for _, k := range slices.Sorted(maps.Keys(t)) {
		v := t[k]
		mloc := loc + "." + key + "." + k
		for _, str := range tomlStrings(map[string]any{k: v}) {
			s.Strings = append(s.Strings, Located{Field: "oauth", Key: k, S: str})
		}
		switch meaning := r.cf.OAuthKeys[k]; meaning {
		case "":
			r.add(mloc, RuleConfigKey, "oauth key %q is not allowed", truncate(k, 64))
		case "clientId", "authServerMetadataUrl":
			str, ok := v.(string)
			if !ok {
				r.add(mloc, RuleServerMismatch, "%s is a %T, want a string", k, v)
				continue
			}
			if meaning == "clientId" {
				s.OAuth.ClientID = &str
			} else {
				s.OAuth.MetadataURL = &str
				r.checkMetadataURL(mloc, str)
			}
		case "callbackPort":
			n, ok := v.(int64)
			if !ok {
				r.add(mloc, RuleServerMismatch, "%s is a %T, want an integer", k, v)
				continue
			}
			s.OAuth.CallbackPort = &n
		case "scopes":
			_, isString := v.(string)
			_, isList := v.([]any)
			r.checkScopesForm(mloc, isString, isList)
			r.readTOMLScopes(mloc, s, v)
		}
	}
}

func (r *reader) readTOMLScopes(loc string, s *Server, x any) {
	s.OAuth.HasScopes = true
	switch v := x.(type) {
	case string:
		s.OAuth.Scopes = scopeList(v)
	case []any:
		s.OAuth.Scopes = []string{}
		for _, it := range v {
			str, ok := it.(string)
			if !ok {
				r.add(loc, RuleServerMismatch, "scopes hold a %T, want strings", it)
				continue
			}
			s.OAuth.Scopes = append(s.OAuth.Scopes, str)
		}
	default:
		r.add(loc, RuleServerMismatch, "scopes are a %T, want a string or a list of strings", x)
	}
}

// checkScopesForm holds the scopes of an oauth object to the form config.oauthScopes names, when
// it names one: the harness reads no other.
func (r *reader) checkScopesForm(loc string, isString, isList bool) {
	switch r.cf.OAuthScopes {
	case profile.OAuthScopesString:
		if !isString {
			r.add(loc, RuleServerMismatch, "scopes must be one space-separated string (config.oauthScopes %s)", r.cf.OAuthScopes)
		}
	case profile.OAuthScopesList:
		if !isList {
			r.add(loc, RuleServerMismatch, "scopes must be a list of strings (config.oauthScopes %s)", r.cf.OAuthScopes)
		}
	}
}

// checkMetadataURL refuses a metadata URL the harness does not take (config.oauthMetadataUrls):
// a renderer leaves it out, with a warning.
func (r *reader) checkMetadataURL(loc, u string) {
	if !r.cf.MetadataURLTaken(u) {
		r.add(loc, RuleServerMismatch, "authServerMetadataUrl %q is not one the harness takes (config.oauthMetadataUrls %s)", truncate(u, 64), r.cf.OAuthMetadataURLs)
	}
}
