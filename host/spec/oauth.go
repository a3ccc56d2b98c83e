package spec

import (
	"strconv"
	"strings"
)

// Lifecycle modes of a server: when the harness starts it and whether it stops an idle one.
const (
	LifecycleLazy          = "lazy"
	LifecycleEager         = "eager"
	LifecycleKeepAlive     = "keep-alive"
	LifecycleLazyKeepAlive = "lazy-keep-alive"
)

func validLifecycle(v string) bool {
	switch v {
	case LifecycleLazy, LifecycleEager, LifecycleKeepAlive, LifecycleLazyKeepAlive:
		return true
	}
	return false
}

// Limits of an oauth member.
const (
	MaxOAuthValueBytes = 2048 // a client id, a scope or the metadata URL
	MaxOAuthScopes     = 64
)

// oauth parses an http server's oauth member strictly: {clientId, callbackPort, scopes,
// authServerMetadataUrl}, each optional (null counts as absent). Anything else drops the server
// with CodeInvalidOAuth and the member it is about: a sign-in setting that cannot be read
// exactly must not be rendered partly. Whether the metadata URL may be used is the policy's
// URL rules. It reports whether the server is kept.
func (p *parser) oauth(s *Server, v *value, field string) bool {
	refuse := func(f, msg string) bool {
		p.add(KindServer, s.ID, f, CodeInvalidOAuth, msg+"; server dropped")
		return false
	}
	if v.kind != kindObject {
		return refuse(field, "oauth is "+kindName(v.kind)+", want an object {clientId, callbackPort, scopes, authServerMetadataUrl}")
	}
	var o OAuth
	for i := range v.members {
		m := &v.members[i]
		mv := &m.val
		mf := memberPath(field, m.name)
		if mv.kind == kindNull && isField(m.name, oauthFields) {
			continue
		}
		switch m.name {
		case "clientId":
			if mv.kind != kindString {
				return refuse(mf, "clientId is "+kindName(mv.kind)+", want a string")
			}
			if why := oauthValueProblem(mv.str); why != "" {
				return refuse(mf, "clientId "+why)
			}
			o.ClientID = mv.str
		case "callbackPort":
			port, ok := portNumber(mv)
			if !ok {
				return refuse(mf, "callbackPort is "+describeNumber(mv)+", want an integer port 1-65535")
			}
			o.CallbackPort = port
		case "scopes":
			if mv.kind != kindArray {
				return refuse(mf, "scopes is "+kindName(mv.kind)+`, want an array of scope strings such as ["read", "write"]`)
			}
			if len(mv.elems) > MaxOAuthScopes {
				return refuse(mf, "scopes has "+strconv.Itoa(len(mv.elems))+" entries, more than "+strconv.Itoa(MaxOAuthScopes))
			}
			scopes := make([]string, 0, len(mv.elems))
			for j := range mv.elems {
				e := &mv.elems[j]
				ef := indexPath(mf, j)
				switch {
				case e.kind != kindString:
					return refuse(ef, "scope is "+kindName(e.kind)+", want a string")
				case oauthValueProblem(e.str) != "":
					return refuse(ef, "scope "+oauthValueProblem(e.str))
				case slicesContains(scopes, e.str):
					return refuse(ef, "scope "+strconv.Quote(e.str)+" is listed twice")
				}
				scopes = append(scopes, e.str)
			}
			if len(scopes) > 0 {
				o.Scopes = scopes
			}
		case "authServerMetadataUrl":
			if mv.kind != kindString {
				return refuse(mf, "authServerMetadataUrl is "+kindName(mv.kind)+", want a string")
			}
			if why := oauthValueProblem(mv.str); why != "" {
				return refuse(mf, "authServerMetadataUrl "+why)
			}
			o.AuthServerMetadataURL = mv.str
		default:
			return refuse(mf, "unknown member "+strconv.Quote(m.name)+" (oauth has clientId, callbackPort, scopes and authServerMetadataUrl)")
		}
	}
	if o.ClientID != "" || o.CallbackPort != 0 || len(o.Scopes) > 0 || o.AuthServerMetadataURL != "" {
		s.OAuth = &o
	}
	return true
}

// oauthValueProblem says why s cannot be an oauth value, or returns "": it must be 1 to
// MaxOAuthValueBytes bytes of printable ASCII other than space, '"', '\', '$' and '!'. The
// last two keep every harness's expansion ($NAME, ${NAME}, a leading !command) out of it, so
// the value a harness reads is the value the policy vetted.
func oauthValueProblem(s string) string {
	if s == "" {
		return "is empty"
	}
	if len(s) > MaxOAuthValueBytes {
		return "is longer than " + strconv.Itoa(MaxOAuthValueBytes) + " bytes"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '$' || c == '!' {
			what := "byte 0x" + strconv.FormatUint(uint64(c), 16)
			if c > 0x20 && c < 0x7f {
				what = strconv.QuoteRune(rune(c))
			}
			return "holds " + what + `: only printable ASCII other than space, '"', '\', '$' and '!' is allowed`
		}
	}
	return ""
}

// portNumber reads a JSON number written as a plain integer 1-65535 (no sign, fraction or
// exponent).
func portNumber(v *value) (int, bool) {
	if v.kind != kindNumber || v.str == "" || len(v.str) > 5 || strings.Trim(v.str, "0123456789") != "" || v.str[0] == '0' {
		return 0, false
	}
	n, err := strconv.Atoi(v.str)
	return n, err == nil && n >= 1 && n <= 65535
}

// describeNumber is v as a diagnostic names a would-be number: its text, or its kind.
func describeNumber(v *value) string {
	if v.kind == kindNumber {
		return v.str
	}
	return describe(v)
}
