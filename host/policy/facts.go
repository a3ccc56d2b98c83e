package policy

import (
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/loadout-dev/loadout/host/spec"
)

// Facts are what Go reads out of a request so that the policy only decides and never parses or
// scans: every per-entry predicate (shape checks, membership in a tunable list, prefix and
// suffix matches, the tool-name pattern) is a fact computed once per request, with the lists
// and patterns read from the policy's own data (data.tunables) when the Engine is built.
// Servers[i] describes request.mcpServers[i] and Skills[k] request.skills[k]; only the
// entries with a fact are listed. The policy reads them as sets (FactSets, built by
// policyInput): the per-server form here is what Go computes and tests.
type Facts struct {
	Servers []ServerFacts `json:"servers"`
	Skills  []SkillFacts  `json:"skills"`
	// HTTP lists the indices of the http servers.
	HTTP []int `json:"http,omitempty"`
	// HostEnv are the names of the host environment variables, in order (never their values).
	HostEnv []string `json:"hostEnv,omitempty"`
}

// Server flags: the server-level facts that hold, in this order. The policy maps each to a
// deny code (or ignores it).
const (
	FlagIDInvalid            = "idInvalid"            // id does not match ^[a-z0-9][a-z0-9_-]{0,63}$
	FlagIDDoubleUnderscore   = "idDoubleUnderscore"   // id holds "__" (R2)
	FlagIDTrailingUnderscore = "idTrailingUnderscore" // id ends with "_" (R2)
	FlagIDReserved           = "idReserved"           // id is in allow.ids.reserved or starts with one of allow.ids.reserved_prefixes
	FlagTransportInvalid     = "transportInvalid"     // transport is neither stdio nor http
	// FlagCommandInvalid: a stdio command is blank, has surrounding whitespace, holds NUL, CR
	// or LF, or starts with '-' (R12).
	FlagCommandInvalid = "commandInvalid"
	// FlagCredentialsUnknown: credentials is neither "" (none) nor one of
	// allow.credentials.modes.
	FlagCredentialsUnknown = "credentialsUnknown"
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
	Flags []string  `json:"flags,omitempty"`
	URL   *URLFacts `json:"url,omitempty"` // http servers only
	// Env, Headers and Tools list, in request order, the entries of env, headers and
	// allowedTools that have a fact other than ValueEmpty; the others are left out.
	Env     []EntryFacts `json:"env,omitempty"`
	Headers []EntryFacts `json:"headers,omitempty"`
	Tools   []EntryFacts `json:"tools,omitempty"`
	// SharedAuthorityOK: sharedAuthority is a non-blank single line.
	SharedAuthorityOK bool `json:"sharedAuthorityOK,omitempty"`
	// Token: the request carries a non-empty stored token for this server's id.
	Token bool `json:"token,omitempty"`
	// UserListed: the run has a user and the server's users list holds it (exactly).
	UserListed bool `json:"userListed,omitempty"`
	// NoValidTool: the server declares allowedTools and none of its entries matches
	// allow.tools.pattern (an empty list has none).
	NoValidTool bool `json:"noValidTool,omitempty"`
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
	// SchemeAnywhere / SchemeLoopback: Scheme is in url.schemes_anywhere / url.schemes_loopback.
	SchemeAnywhere bool `json:"schemeAnywhere,omitempty"`
	SchemeLoopback bool `json:"schemeLoopback,omitempty"`

	present, badBytes, userinfo, hostsDisagree, badPort, hostEmpty bool
}

// EntryFacts describe one entry of a server's env, headers or allowedTools. Key is the env or
// header name or the tool entry, as the request spells it; the booleans are the facts that
// hold (each applies to the fields its comment names).
type EntryFacts struct {
	Key string `json:"key"`
	// KeyInvalid (env): the key does not match ^[A-Za-z_][A-Za-z0-9_]{0,127}$.
	KeyInvalid bool `json:"keyInvalid,omitempty"`
	// KeyRefused (env): the uppercased key is in allow.env_refused.keys, or starts with one of
	// its prefixes or ends with one of its suffixes (R4).
	KeyRefused bool `json:"keyRefused,omitempty"`
	// NameInvalid (headers: not an RFC 9110 token; allowedTools: does not match
	// allow.tools.pattern, R3).
	NameInvalid bool `json:"nameInvalid,omitempty"`
	// ValueInvalid (env: the value holds a NUL; headers: CR, LF or NUL).
	ValueInvalid bool `json:"valueInvalid,omitempty"`
	// UserCredential: the name is in secrets.user_credential_env (env, uppercased) or
	// secrets.user_credential_headers (headers, lowercased).
	UserCredential bool `json:"userCredential,omitempty"`
	// TokenHeader (headers): the name is Authorization (any case), where an http server's
	// stored token goes.
	TokenHeader bool `json:"tokenHeader,omitempty"`
	// SecretNamed (env, headers): the name is one of the server's secretKeys.
	SecretNamed bool `json:"secretNamed,omitempty"`
	// AlwaysSecret (headers): the lowercased name is in secrets.always_secret_headers.
	AlwaysSecret bool `json:"alwaysSecret,omitempty"`
	// ValueEmpty (env, headers): the value is empty.
	ValueEmpty bool `json:"valueEmpty,omitempty"`
}

// listed reports whether an entry has a fact other than ValueEmpty.
func (e *EntryFacts) listed() bool {
	return e.KeyInvalid || e.KeyRefused || e.NameInvalid || e.ValueInvalid || e.UserCredential ||
		e.TokenHeader || e.SecretNamed || e.AlwaysSecret
}

// SkillFacts are the facts of one skill.
type SkillFacts struct {
	// NameDenied: the lowercased name is in allow.skills.denied_names.
	NameDenied bool `json:"nameDenied,omitempty"`
}

// Facts computes the facts of req and hostEnv with the engine's tunables. It never fails: a
// value it cannot read is a fact. Safe for concurrent use.
func (e *Engine) Facts(req *spec.Request, hostEnv []spec.Pair) Facts {
	return computeFacts(req, hostEnv, e.tunables)
}

func computeFacts(req *spec.Request, hostEnv []spec.Pair, t *tunables) Facts {
	f := Facts{Servers: make([]ServerFacts, len(req.Servers)), Skills: make([]SkillFacts, len(req.Skills))}
	if len(hostEnv) > 0 {
		f.HostEnv = make([]string, len(hostEnv))
		for i, p := range hostEnv {
			f.HostEnv[i] = p.Name
		}
	}
	// The servers' entry and URL facts come from one block each, every server's lists carved
	// with the room its request entries could take: appending never reallocates.
	var entries, nHTTP int
	for i := range req.Servers {
		s := &req.Servers[i]
		entries += len(s.Env) + len(s.Headers) + len(s.AllowedTools)
		if s.Transport == "http" {
			nHTTP++
		}
	}
	b := factBlocks{entries: make([]EntryFacts, 0, entries)}
	if nHTTP > 0 {
		b.urls = make([]URLFacts, 0, nHTTP)
		f.HTTP = make([]int, 0, nHTTP)
	}
	for i := range req.Servers {
		s := &req.Servers[i]
		serverFacts(&f.Servers[i], req, s, t, &b)
		if s.Transport == "http" {
			f.HTTP = append(f.HTTP, i)
		}
	}
	for k := range req.Skills {
		f.Skills[k].NameDenied = len(t.deniedSkills) > 0 && t.deniedSkills.has(strings.ToLower(req.Skills[k].Name))
	}
	return f
}

// factBlocks are the blocks computeFacts carves the servers' facts from.
type factBlocks struct {
	entries []EntryFacts
	urls    []URLFacts
}

// list is an empty list with room for n entries.
func (b *factBlocks) list(n int) []EntryFacts {
	if n == 0 {
		return nil
	}
	at := len(b.entries)
	b.entries = b.entries[:at+n]
	return b.entries[at : at : at+n]
}

func serverFacts(sf *ServerFacts, req *spec.Request, s *spec.Server, t *tunables, b *factBlocks) {
	sf.SharedAuthorityOK = strings.TrimSpace(s.SharedAuthority) != "" && !strings.ContainsAny(s.SharedAuthority, "\r\n")
	sf.Token = tokenFor(req, s.ID) != ""
	sf.UserListed = req.Run.HasUser && slices.Contains(s.Users, req.Run.User)
	flag := func(ok bool, name string) {
		if ok {
			sf.Flags = append(sf.Flags, name)
		}
	}
	flag(!validID(s.ID), FlagIDInvalid)
	flag(strings.Contains(s.ID, "__"), FlagIDDoubleUnderscore)
	flag(strings.HasSuffix(s.ID, "_"), FlagIDTrailingUnderscore)
	flag(t.idReserved(s.ID), FlagIDReserved)
	flag(s.Transport != "stdio" && s.Transport != "http", FlagTransportInvalid)
	if s.Transport == "stdio" {
		flag(invalidCommand(s.Command), FlagCommandInvalid)
	}
	flag(s.Credentials != "" && !t.credentialModes.has(s.Credentials), FlagCredentialsUnknown)
	if s.Transport == "http" {
		b.urls = append(b.urls, urlFacts(s.URL))
		u := &b.urls[len(b.urls)-1]
		u.SchemeAnywhere = t.schemesAnywhere.has(u.Scheme)
		u.SchemeLoopback = t.schemesLoopback.has(u.Scheme)
		sf.URL = u
		flag(!u.present, FlagURLMissing)
		flag(u.badBytes, FlagURLBadBytes)
		flag(u.userinfo, FlagURLUserinfo)
		flag(u.present && u.hostsDisagree, FlagURLHostsDisagree)
		flag(u.badPort, FlagURLBadPort)
		flag(u.present && u.hostEmpty, FlagURLEmptyHost)
	}
	sf.Env, sf.Headers, sf.Tools = b.list(len(s.Env)), b.list(len(s.Headers)), b.list(len(s.AllowedTools))
	for _, p := range s.Env {
		upper := strings.ToUpper(p.Name)
		e := EntryFacts{
			Key:            p.Name,
			KeyInvalid:     !validEnvKey(p.Name),
			KeyRefused:     t.envRefused(upper),
			ValueInvalid:   strings.IndexByte(p.Value, 0) >= 0,
			UserCredential: t.userEnv.has(upper),
			SecretNamed:    slices.Contains(s.SecretKeys, p.Name),
			ValueEmpty:     p.Value == "",
		}
		if e.listed() {
			sf.Env = append(sf.Env, e)
		}
	}
	for _, p := range s.Headers {
		lower := strings.ToLower(p.Name)
		e := EntryFacts{
			Key:            p.Name,
			NameInvalid:    !isToken(p.Name),
			ValueInvalid:   strings.ContainsAny(p.Value, "\r\n\x00"),
			UserCredential: t.userHeaders.has(lower),
			TokenHeader:    lower == "authorization",
			// Header names are case-insensitive (RFC 9110): secretKeys "authorization" names
			// the header Authorization. Env keys stay exact.
			SecretNamed:  slices.ContainsFunc(s.SecretKeys, func(k string) bool { return strings.EqualFold(k, p.Name) }),
			AlwaysSecret: t.alwaysSecretHeaders.has(lower),
			ValueEmpty:   p.Value == "",
		}
		if e.listed() {
			sf.Headers = append(sf.Headers, e)
		}
	}
	for _, name := range s.AllowedTools {
		if t.toolInvalid(name) {
			sf.Tools = append(sf.Tools, EntryFacts{Key: name, NameInvalid: true})
		}
	}
	sf.NoValidTool = s.ToolsDeclared && len(sf.Tools) == len(s.AllowedTools)
	// A list with nothing listed is nil, whatever room it had.
	if len(sf.Env) == 0 {
		sf.Env = nil
	}
	if len(sf.Headers) == 0 {
		sf.Headers = nil
	}
	if len(sf.Tools) == 0 {
		sf.Tools = nil
	}
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
