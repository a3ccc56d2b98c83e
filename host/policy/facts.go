package policy

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/loadout-dev/loadout/host/spec"
)

// Facts are what Go reads out of a request so that the policy only decides and never parses.
// They are aligned by index with the request: Servers[i] describes request.mcpServers[i], and
// within it Env[j] and Headers[j] describe the server's env[j] and headers[j]. Facts are
// sparse: a false boolean, an empty string or list is left out of the policy input (the JSON
// tags say so), which keeps the input small and the rules simple (`f.x` / `not f.x`).
type Facts struct {
	Servers []ServerFacts `json:"servers"`
	// HTTP lists the indices of the http servers, Credentialed those with credentials or
	// users set, so rules about them need not visit every server.
	HTTP         []int `json:"http,omitempty"`
	Credentialed []int `json:"credentialed,omitempty"`
	// HostEnv are the names of the host environment variables, in order (never their values).
	HostEnv []string `json:"hostEnv,omitempty"`
}

// Server flags: the boolean facts of a server that hold, in this order. The policy maps each
// to a deny code (or ignores it).
const (
	FlagIDInvalid            = "idInvalid"            // id does not match ^[a-z0-9][a-z0-9_-]{0,63}$
	FlagIDDoubleUnderscore   = "idDoubleUnderscore"   // id holds "__" (R2)
	FlagIDTrailingUnderscore = "idTrailingUnderscore" // id ends with "_" (R2)
	FlagTransportInvalid     = "transportInvalid"     // transport is neither stdio nor http
	// FlagCommandInvalid: a stdio command is blank, has surrounding whitespace, holds NUL, CR
	// or LF, or starts with '-' (R12).
	FlagCommandInvalid = "commandInvalid"
	// URL flags, for http servers only (base rule and R1).
	FlagURLMissing       = "urlMissing"       // the url is empty
	FlagURLBadBytes      = "urlBadBytes"      // a byte <= 0x20 or >= 0x7f, or '\'
	FlagURLUserinfo      = "urlUserinfo"      // the authority holds an '@', even with empty userinfo
	FlagURLHostsDisagree = "urlHostsDisagree" // net/url fails, or reads another scheme, host or port
	FlagURLBadPort       = "urlBadPort"       // a ':' after the host whose port is not 1-65535 in digits
	FlagURLEmptyHost     = "urlEmptyHost"     // the base rule reads an empty host
)

// ServerFacts are the facts of one server.
type ServerFacts struct {
	Flags   []string      `json:"flags,omitempty"`
	URL     *URLFacts     `json:"url,omitempty"` // http servers only
	Env     []EnvFacts    `json:"env,omitempty"`
	Headers []HeaderFacts `json:"headers,omitempty"`
	// SharedAuthorityOK: sharedAuthority is a non-blank single line.
	SharedAuthorityOK bool `json:"sharedAuthorityOK,omitempty"`
	// Token: the request carries a non-empty stored token for this server's id.
	Token bool `json:"token,omitempty"`
}

// URLFacts describe an http server's URL (base rule and R1); the failures are server flags.
type URLFacts struct {
	// BaseMatch: the url matches ^(https?)://([^/?#]*) case-insensitively; Scheme is then its
	// lowercased scheme, else the lowercased scheme Go's net/url reads (or "").
	BaseMatch bool   `json:"baseMatch,omitempty"`
	Scheme    string `json:"scheme,omitempty"`
	// BaseHost is the host as the base rule reads it: after the LAST '@' of the authority, the
	// bracketed IPv6 literal (brackets removed) or the part before the first ':', lowercased.
	BaseHost string `json:"baseHost,omitempty"`
	// URLHost is the host as Go's net/url reads it (Hostname, lowercased); "" if it fails.
	URLHost string `json:"urlHost,omitempty"`
	// Loopback: the base host is localhost (any case), a canonical dotted quad in 127.0.0.0/8
	// (net/netip, Unmap before IsLoopback), or exactly [::1].
	Loopback bool `json:"loopback,omitempty"`

	present, badBytes, userinfo, hostsDisagree, badPort, hostEmpty bool
}

// EnvFacts describe one entry of a server's env (R4).
type EnvFacts struct {
	Upper string `json:"upper"` // the key, uppercased
	// KeyInvalid: the key does not match ^[A-Za-z_][A-Za-z0-9_]{0,127}$.
	KeyInvalid bool `json:"keyInvalid,omitempty"`
	// ValueInvalid: the value holds a NUL.
	ValueInvalid bool `json:"valueInvalid,omitempty"`
	// Prefixes are Upper up to and including each '_', Suffixes Upper from each '_' on, so the
	// policy matches refused prefixes and suffixes by set lookup. Empty when KeyInvalid.
	Prefixes []string `json:"prefixes,omitempty"`
	Suffixes []string `json:"suffixes,omitempty"`
}

// HeaderFacts describe one configured header (R5).
type HeaderFacts struct {
	Lower        string `json:"lower"`                  // the name, lowercased
	NameInvalid  bool   `json:"nameInvalid,omitempty"`  // the name is not an RFC 9110 token
	ValueInvalid bool   `json:"valueInvalid,omitempty"` // the value holds CR, LF or NUL
}

// ComputeFacts computes the facts of req and hostEnv. It never fails: a value it cannot read
// is a fact.
func ComputeFacts(req *spec.Request, hostEnv []spec.Pair) Facts {
	f := Facts{Servers: make([]ServerFacts, len(req.Servers))}
	for _, p := range hostEnv {
		f.HostEnv = append(f.HostEnv, p.Name)
	}
	for i := range req.Servers {
		s := &req.Servers[i]
		f.Servers[i] = serverFacts(req, s)
		if s.Transport == "http" {
			f.HTTP = append(f.HTTP, i)
		}
		if s.Credentials != "" || s.HasUsers {
			f.Credentialed = append(f.Credentialed, i)
		}
	}
	return f
}

func serverFacts(req *spec.Request, s *spec.Server) ServerFacts {
	sf := ServerFacts{
		SharedAuthorityOK: strings.TrimSpace(s.SharedAuthority) != "" && !strings.ContainsAny(s.SharedAuthority, "\r\n"),
		Token:             tokenFor(req, s.ID) != "",
	}
	flag := func(ok bool, name string) {
		if ok {
			sf.Flags = append(sf.Flags, name)
		}
	}
	flag(!validID(s.ID), FlagIDInvalid)
	flag(strings.Contains(s.ID, "__"), FlagIDDoubleUnderscore)
	flag(strings.HasSuffix(s.ID, "_"), FlagIDTrailingUnderscore)
	flag(s.Transport != "stdio" && s.Transport != "http", FlagTransportInvalid)
	if s.Transport == "stdio" {
		flag(invalidCommand(s.Command), FlagCommandInvalid)
	}
	if s.Transport == "http" {
		u := urlFacts(s.URL)
		sf.URL = &u
		flag(!u.present, FlagURLMissing)
		flag(u.badBytes, FlagURLBadBytes)
		flag(u.userinfo, FlagURLUserinfo)
		flag(u.present && u.hostsDisagree, FlagURLHostsDisagree)
		flag(u.badPort, FlagURLBadPort)
		flag(u.present && u.hostEmpty, FlagURLEmptyHost)
	}
	if len(s.Env) > 0 {
		sf.Env = make([]EnvFacts, len(s.Env))
		for j, p := range s.Env {
			sf.Env[j] = envFacts(p)
		}
	}
	if len(s.Headers) > 0 {
		sf.Headers = make([]HeaderFacts, len(s.Headers))
		for j, p := range s.Headers {
			sf.Headers[j] = HeaderFacts{
				Lower:        strings.ToLower(p.Name),
				NameInvalid:  !isToken(p.Name),
				ValueInvalid: strings.ContainsAny(p.Value, "\r\n\x00"),
			}
		}
	}
	return sf
}

// tokenFor is the first stored token for server id, or "".
func tokenFor(req *spec.Request, id string) string {
	for _, t := range req.Tokens {
		if t.Name == id {
			return t.Value
		}
	}
	return ""
}

// validID reports whether id matches ^[a-z0-9][a-z0-9_-]{0,63}$.
func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case (c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// invalidCommand reports whether a stdio command breaks R12.
func invalidCommand(cmd string) bool {
	return strings.TrimSpace(cmd) == "" ||
		strings.TrimSpace(cmd) != cmd ||
		strings.ContainsAny(cmd, "\x00\r\n") ||
		strings.HasPrefix(cmd, "-")
}

func envFacts(p spec.Pair) EnvFacts {
	e := EnvFacts{
		Upper:        strings.ToUpper(p.Name),
		KeyInvalid:   !validEnvKey(p.Name),
		ValueInvalid: strings.IndexByte(p.Value, 0) >= 0,
	}
	if e.KeyInvalid {
		return e
	}
	for i := 0; i < len(e.Upper); i++ {
		if e.Upper[i] == '_' {
			e.Prefixes = append(e.Prefixes, e.Upper[:i+1])
			e.Suffixes = append(e.Suffixes, e.Upper[i:])
		}
	}
	return e
}

// validEnvKey reports whether k matches ^[A-Za-z_][A-Za-z0-9_]{0,127}$.
func validEnvKey(k string) bool {
	if k == "" || len(k) > 128 {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c == '_':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// isToken reports whether s is an RFC 9110 token: 1*tchar.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func urlFacts(raw string) URLFacts {
	u := URLFacts{present: raw != ""}
	if !u.present {
		return u
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= 0x20 || c >= 0x7f || c == '\\' {
			u.badBytes = true
			break
		}
	}

	// The base rule: ^(https?)://([^/?#]*), case-insensitive.
	var authority string
	lower := strings.ToLower(raw)
	for _, scheme := range []string{"https", "http"} {
		if strings.HasPrefix(lower, scheme+"://") {
			u.BaseMatch, u.Scheme = true, scheme
			rest := raw[len(scheme)+3:]
			if end := strings.IndexAny(rest, "/?#"); end >= 0 {
				rest = rest[:end]
			}
			authority = rest
			break
		}
	}
	hostport := authority
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		u.userinfo = true
		hostport = authority[at+1:]
	}
	var bracketed bool
	var port string
	var hasPort bool
	switch {
	case strings.HasPrefix(hostport, "["):
		bracketed = true
		if end := strings.IndexByte(hostport, ']'); end >= 0 {
			u.BaseHost = strings.ToLower(hostport[1:end])
			after := hostport[end+1:]
			switch {
			case after == "":
			case after[0] == ':':
				port, hasPort = after[1:], true
			default:
				// Bytes after the literal that are not a port: no parser reads this host.
				u.hostsDisagree = true
			}
		} else {
			u.BaseHost = strings.ToLower(hostport[1:])
			u.hostsDisagree = true
		}
	default:
		if colon := strings.IndexByte(hostport, ':'); colon >= 0 {
			u.BaseHost = strings.ToLower(hostport[:colon])
			port, hasPort = hostport[colon+1:], true
		} else {
			u.BaseHost = strings.ToLower(hostport)
		}
	}
	u.hostEmpty = u.BaseHost == ""
	u.badPort = hasPort && !validPort(port)

	parsed, err := url.Parse(raw)
	switch {
	case err != nil:
		u.hostsDisagree = true
	default:
		if !u.BaseMatch {
			u.Scheme = strings.ToLower(parsed.Scheme)
		}
		u.URLHost = strings.ToLower(parsed.Hostname())
		if parsed.User != nil {
			u.userinfo = true
		}
		if parsed.Opaque != "" || strings.ToLower(parsed.Scheme) != u.Scheme ||
			u.URLHost != u.BaseHost || parsed.Port() != port {
			u.hostsDisagree = true
		}
	}

	switch {
	case bracketed:
		u.Loopback = u.BaseHost == "::1"
	case u.BaseHost == "localhost":
		u.Loopback = true
	default:
		if addr, err := netip.ParseAddr(u.BaseHost); err == nil {
			addr = addr.Unmap()
			u.Loopback = addr.Is4() && addr.IsLoopback() && addr.String() == u.BaseHost
		}
	}
	return u
}

// validPort reports whether p is 1-65535 written in ASCII digits.
func validPort(p string) bool {
	if p == "" || len(p) > 5 {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}
