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
// within it Env[j] and Headers[j] describe the server's env[j] and headers[j].
type Facts struct {
	Servers []ServerFacts `json:"servers"`
	// HostEnv are the names of the host environment variables, in order (never their values).
	HostEnv []string `json:"hostEnv"`
}

// ServerFacts are the facts of one server.
type ServerFacts struct {
	ID      IDFacts       `json:"id"`
	Command CommandFacts  `json:"command"`
	URL     URLFacts      `json:"url"`
	Env     []EnvFacts    `json:"env"`
	Headers []HeaderFacts `json:"headers"`
	// SharedAuthorityOK: sharedAuthority is a non-blank single line.
	SharedAuthorityOK bool `json:"sharedAuthorityOK"`
	// Token: the request carries a non-empty stored token for this server's id.
	Token bool `json:"token"`
}

// IDFacts describe a server id: Invalid when it does not match ^[a-z0-9][a-z0-9_-]{0,63}$
// (base rule), DoubleUnderscore and TrailingUnderscore for R2.
type IDFacts struct {
	Invalid            bool `json:"invalid"`
	DoubleUnderscore   bool `json:"doubleUnderscore"`
	TrailingUnderscore bool `json:"trailingUnderscore"`
}

// CommandFacts describe a stdio command (R12): Invalid when it is blank, has surrounding
// whitespace, holds NUL, CR or LF, or starts with '-'.
type CommandFacts struct {
	Invalid bool `json:"invalid"`
}

// URLFacts describe an http server's URL (base rule and R1).
type URLFacts struct {
	Present bool `json:"present"` // the url is a non-empty string
	// BaseMatch: the url matches ^(https?)://([^/?#]*) case-insensitively; Scheme is then its
	// lowercased scheme, else the lowercased scheme Go's net/url reads (or "").
	BaseMatch bool   `json:"baseMatch"`
	Scheme    string `json:"scheme"`
	// BaseHost is the host as the base rule reads it: after the LAST '@' of the authority, the
	// bracketed IPv6 literal (brackets removed) or the part before the first ':', lowercased.
	BaseHost string `json:"baseHost"`
	// URLHost is the host as Go's net/url reads it (Hostname, lowercased); "" if it fails.
	URLHost string `json:"urlHost"`
	// HostsDisagree: net/url fails to parse the url, or reads another scheme, host or port
	// than the base rule.
	HostsDisagree bool `json:"hostsDisagree"`
	Userinfo      bool `json:"userinfo"`  // the authority holds an '@', even with empty userinfo
	BadBytes      bool `json:"badBytes"`  // a byte <= 0x20 or >= 0x7f, or '\'
	BadPort       bool `json:"badPort"`   // a ':' after the host whose port is not 1-65535 in digits
	HostEmpty     bool `json:"hostEmpty"` // the base rule reads an empty host
	// Loopback: the base host is localhost (any case), a canonical dotted quad in 127.0.0.0/8
	// (net/netip, Unmap before IsLoopback), or exactly [::1].
	Loopback bool `json:"loopback"`
}

// EnvFacts describe one entry of a server's env (R4).
type EnvFacts struct {
	Upper string `json:"upper"` // the key, uppercased
	// KeyInvalid: the key does not match ^[A-Za-z_][A-Za-z0-9_]{0,127}$.
	KeyInvalid bool `json:"keyInvalid"`
	// ValueInvalid: the value holds a NUL.
	ValueInvalid bool `json:"valueInvalid"`
	// Prefixes are Upper up to and including each '_', Suffixes Upper from each '_' on, so the
	// policy matches refused prefixes and suffixes by set lookup. Empty when KeyInvalid.
	Prefixes []string `json:"prefixes"`
	Suffixes []string `json:"suffixes"`
}

// HeaderFacts describe one configured header (R5).
type HeaderFacts struct {
	Lower        string `json:"lower"`        // the name, lowercased
	NameInvalid  bool   `json:"nameInvalid"`  // the name is not an RFC 9110 token
	ValueInvalid bool   `json:"valueInvalid"` // the value holds CR, LF or NUL
}

// ComputeFacts computes the facts of req and hostEnv. It never fails: a value it cannot read
// is a fact.
func ComputeFacts(req *spec.Request, hostEnv []spec.Pair) Facts {
	f := Facts{Servers: make([]ServerFacts, len(req.Servers)), HostEnv: make([]string, len(hostEnv))}
	for i, p := range hostEnv {
		f.HostEnv[i] = p.Name
	}
	for i := range req.Servers {
		f.Servers[i] = serverFacts(req, &req.Servers[i])
	}
	return f
}

func serverFacts(req *spec.Request, s *spec.Server) ServerFacts {
	sf := ServerFacts{
		ID:                idFacts(s.ID),
		SharedAuthorityOK: strings.TrimSpace(s.SharedAuthority) != "" && !strings.ContainsAny(s.SharedAuthority, "\r\n"),
		Token:             tokenFor(req, s.ID) != "",
		Env:               make([]EnvFacts, len(s.Env)),
		Headers:           make([]HeaderFacts, len(s.Headers)),
	}
	if s.Transport == "stdio" {
		sf.Command = commandFacts(s.Command)
	}
	if s.Transport == "http" {
		sf.URL = urlFacts(s.URL)
	}
	for j, p := range s.Env {
		sf.Env[j] = envFacts(p)
	}
	for j, p := range s.Headers {
		sf.Headers[j] = HeaderFacts{
			Lower:        strings.ToLower(p.Name),
			NameInvalid:  !isToken(p.Name),
			ValueInvalid: strings.ContainsAny(p.Value, "\r\n\x00"),
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

func idFacts(id string) IDFacts {
	return IDFacts{
		Invalid:            !validID(id),
		DoubleUnderscore:   strings.Contains(id, "__"),
		TrailingUnderscore: strings.HasSuffix(id, "_"),
	}
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

func commandFacts(cmd string) CommandFacts {
	return CommandFacts{Invalid: strings.TrimSpace(cmd) == "" ||
		strings.TrimSpace(cmd) != cmd ||
		strings.ContainsAny(cmd, "\x00\r\n") ||
		strings.HasPrefix(cmd, "-")}
}

func envFacts(p spec.Pair) EnvFacts {
	e := EnvFacts{
		Upper:        strings.ToUpper(p.Name),
		KeyInvalid:   !validEnvKey(p.Name),
		ValueInvalid: strings.IndexByte(p.Value, 0) >= 0,
		Prefixes:     []string{},
		Suffixes:     []string{},
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
	u := URLFacts{Present: raw != ""}
	if !u.Present {
		return u
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= 0x20 || c >= 0x7f || c == '\\' {
			u.BadBytes = true
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
		u.Userinfo = true
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
				u.HostsDisagree = true
			}
		} else {
			u.BaseHost = strings.ToLower(hostport[1:])
			u.HostsDisagree = true
		}
	default:
		if colon := strings.IndexByte(hostport, ':'); colon >= 0 {
			u.BaseHost = strings.ToLower(hostport[:colon])
			port, hasPort = hostport[colon+1:], true
		} else {
			u.BaseHost = strings.ToLower(hostport)
		}
	}
	u.HostEmpty = u.BaseHost == ""
	u.BadPort = hasPort && !validPort(port)

	parsed, err := url.Parse(raw)
	switch {
	case err != nil:
		u.HostsDisagree = true
	default:
		if !u.BaseMatch {
			u.Scheme = strings.ToLower(parsed.Scheme)
		}
		u.URLHost = strings.ToLower(parsed.Hostname())
		if parsed.User != nil {
			u.Userinfo = true
		}
		if parsed.Opaque != "" || strings.ToLower(parsed.Scheme) != u.Scheme ||
			u.URLHost != u.BaseHost || parsed.Port() != port {
			u.HostsDisagree = true
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
