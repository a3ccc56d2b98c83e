package policy

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
)

// urlFacts are what parsing an http server's URL says (input.servers[i].facts.url,
// docs/POLICIES.md §1): the parts as the base rule reads them (^(https?)://([^/?#]*),
// case-insensitive, the host after the last '@' of the authority) and whether Go's net/url
// reads the same. Which URL is allowed is the policy's choice.
type urlFacts struct {
	BaseMatch    bool   // the URL matches the base rule
	Scheme       string // lowercased: the base rule's, else net/url's ("" when neither reads one)
	Host         string // lowercased, as the base rule reads it (an IPv6 literal without brackets)
	Port         int    // the explicit port when valid, else 443 for https, 80 for http, else 0
	Path         string // net/url's path ("" when it fails)
	Loopback     bool   // localhost (any case), a canonical dotted quad in 127/8, or [::1]
	DockerHost   bool   // the host is host.docker.internal (the host's loopback, seen from a container)
	IP           bool   // the host is an IP literal
	Userinfo     bool   // the authority holds an '@' (even with empty userinfo), or net/url reads a user
	ParsersAgree bool   // net/url reads the same scheme, host and port as the base rule
	BadBytes     bool   // a byte <= 0x20 or >= 0x7f, or '\'
	BadPort      bool   // a ':' after the host whose port is not 1-65535 in ASCII digits
}

func (u urlFacts) value() ast.Value {
	return ast.NewObject(
		item("baseMatch", ast.Boolean(u.BaseMatch)),
		item("scheme", ast.String(u.Scheme)),
		item("host", ast.String(u.Host)),
		item("port", ast.IntNumberTerm(u.Port).Value),
		item("path", ast.String(u.Path)),
		item("loopback", ast.Boolean(u.Loopback)),
		item("dockerHost", ast.Boolean(u.DockerHost)),
		item("ip", ast.Boolean(u.IP)),
		item("userinfo", ast.Boolean(u.Userinfo)),
		item("parsersAgree", ast.Boolean(u.ParsersAgree)),
		item("badBytes", ast.Boolean(u.BadBytes)),
		item("badPort", ast.Boolean(u.BadPort)),
	)
}

// parseURL reads raw. It never fails: what it cannot read is a fact.
func parseURL(raw string) urlFacts {
	var u urlFacts
	if raw == "" {
		return u
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= 0x20 || c >= 0x7f || c == '\\' {
			u.BadBytes = true
			break
		}
	}
	disagree := false

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
	var bracketed, hasPort bool
	var port string
	switch {
	case strings.HasPrefix(hostport, "["):
		bracketed = true
		if end := strings.IndexByte(hostport, ']'); end >= 0 {
			u.Host = strings.ToLower(hostport[1:end])
			after := hostport[end+1:]
			switch {
			case after == "":
			case after[0] == ':':
				port, hasPort = after[1:], true
			default:
				// Bytes after the literal that are not a port: no parser reads this host.
				disagree = true
			}
		} else {
			u.Host = strings.ToLower(hostport[1:])
			disagree = true
		}
	default:
		if colon := strings.IndexByte(hostport, ':'); colon >= 0 {
			u.Host = strings.ToLower(hostport[:colon])
			port, hasPort = hostport[colon+1:], true
		} else {
			u.Host = strings.ToLower(hostport)
		}
	}
	u.BadPort = hasPort && !validPort(port)

	parsed, err := url.Parse(raw)
	switch {
	case err != nil:
		disagree = true
	default:
		if !u.BaseMatch {
			u.Scheme = strings.ToLower(parsed.Scheme)
		}
		u.Path = parsed.Path
		if parsed.User != nil {
			u.Userinfo = true
		}
		if parsed.Opaque != "" || strings.ToLower(parsed.Scheme) != u.Scheme ||
			strings.ToLower(parsed.Hostname()) != u.Host || parsed.Port() != port {
			disagree = true
		}
	}
	u.ParsersAgree = !disagree

	switch {
	case hasPort && !u.BadPort:
		u.Port, _ = strconv.Atoi(port)
	case u.Scheme == "https":
		u.Port = 443
	case u.Scheme == "http":
		u.Port = 80
	}
	addr, ipErr := netip.ParseAddr(u.Host)
	u.IP = ipErr == nil && (bracketed || addr.Is4())
	switch {
	case bracketed:
		u.Loopback = u.Host == "::1"
	case u.Host == "localhost":
		u.Loopback = true
	case ipErr == nil:
		addr = addr.Unmap()
		u.Loopback = addr.Is4() && addr.IsLoopback() && addr.String() == u.Host
	}
	u.DockerHost = u.Host == ContainerHost
	return u
}

// ContainerHost is the name a container reaches its host's loopback by.
const ContainerHost = "host.docker.internal"

// containerURL rewrites the host of a loopback URL to ContainerHost, keeping every other byte
// (scheme, port, path, query) as written; ok is false for a URL that is not loopback.
func containerURL(raw string) (string, bool) {
	u := parseURL(raw)
	if !u.BaseMatch || !u.Loopback || !u.ParsersAgree || u.Userinfo {
		return raw, false
	}
	i := strings.Index(raw, "://")
	if i < 0 {
		return raw, false
	}
	start := i + 3
	end := len(raw)
	if j := strings.IndexAny(raw[start:], "/?#"); j >= 0 {
		end = start + j
	}
	authority := raw[start:end]
	hostEnd := len(authority)
	if strings.HasPrefix(authority, "[") {
		hostEnd = strings.IndexByte(authority, ']') + 1
	} else if c := strings.IndexByte(authority, ':'); c >= 0 {
		hostEnd = c
	}
	if hostEnd <= 0 {
		return raw, false
	}
	return raw[:start] + ContainerHost + authority[hostEnd:] + raw[end:], true
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
