// Package spec decodes a capability request strictly and applies every Go-side sanitization
// rule (docs/SECURITY.md: base skill and resource rules, R7, R8, R9, R11, R12, R13, and the structure
// of ids, transports and commands). Policy rules (URLs, env keys, secrets, tools, users) are not
// decided here; they are decided by host/policy over the value this package returns.
//
// Values returned by Parse are owned by the caller and never mutated by this package.
package spec

import (
	"strconv"
	"time"
)

// Request is a decoded, structurally sanitized capability request. Order is preserved
// everywhere: servers, skills, resources, env and header keys keep request order.
type Request struct {
	Harness string  `json:"harness"`
	Run     Run     `json:"run"`
	Skills  []Skill `json:"skills"`
	// Servers are the servers that passed the structural checks: mcpServers in request order,
	// then userServers in request order (Server.Source tells them apart). Duplicate ids are
	// kept here: de-duplication (first wins) happens after the policy, so a server the policy
	// drops does not claim its id.
	Servers []Server `json:"mcpServers"`
	// Tokens maps a server id to the run's stored token for it (always a secret).
	Tokens []Pair `json:"tokens"`
	// DroppedSecrets are the values the servers the parser dropped declare secret (for each key
	// of their own secretKeys, env[key] and the header named key in any case; non-empty), in
	// request order. They are never rendered and the policy never sees them, but someone marked
	// them secret, so they stay masked in logs (policy.Vetted.Redactions). Not policy input.
	DroppedSecrets []string `json:"-"`
}

// Run describes the run.
type Run struct {
	AmbientAuth bool `json:"ambientAuth"`
	// Container: the harness runs in a container, where the host's loopback is reached as
	// host.docker.internal; loopback server URLs are rewritten to it (run.container).
	Container bool   `json:"container"`
	User      string `json:"user"`
	HasUser   bool   `json:"hasUser"` // run.user was a non-empty string
	// Groups are run.groups: the groups the run's user belongs to, as the platform says, in
	// request order, each listed once; empty when absent. Only the policy reads them.
	Groups []string `json:"groups"`
	// Enabled is the run user's choice per opt-in server id (run.enabled); a server absent
	// from it is not enabled.
	Enabled map[string]bool `json:"enabled"`
	// ID is run.id as given ("" when absent or not a string): the run a minted token is bound
	// to. The parser does not judge it; the minter does (host/tokens.ValidRunID), and only when
	// a server asks for a token.
	ID string `json:"id"`
	// BuiltinTools are the harness's own tools (Bash, Read, …) the run pre-approves
	// (run.builtinTools), distinct, in request order; empty when none. The policy may trim them,
	// and a harness pre-approves only those its profile lists (tools.builtin).
	BuiltinTools []string `json:"builtinTools"`
}

// Pair is one entry of an ordered string map.
type Pair struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Skill is a sanitized skill.
type Skill struct {
	Index        int        `json:"index"` // position in the request's skills array
	Name         string     `json:"name"`
	Description  string     `json:"description"`
	Instructions string     `json:"instructions"`
	Resources    []Resource `json:"resources"`
}

// Resource is a sanitized skill resource.
type Resource struct {
	RelPath string `json:"relPath"`
	Content string `json:"content"`
}

// Server is a structurally valid MCP server.
type Server struct {
	Index int `json:"index"` // position in the request's mcpServers or userServers array
	// Source is SourceCatalog for an entry of mcpServers, SourceUser for one of userServers.
	Source string `json:"source"`
	// ID is the server's id; for a user server, UserIDPrefix and the id the request gives.
	ID        string `json:"id"`
	Transport string `json:"transport"` // "stdio" or "http"

	Command string   `json:"command"`
	Args    []string `json:"args"`
	Env     []Pair   `json:"env"`
	Cwd     string   `json:"cwd"`

	URL     string `json:"url"`
	Headers []Pair `json:"headers"`

	// ToolsDeclared is true when allowedTools was present and not null (R10): the server is
	// restricted even if no entry survives. AllowedTools holds its string entries.
	ToolsDeclared bool     `json:"toolsDeclared"`
	AllowedTools  []string `json:"allowedTools"`
	SecretKeys    []string `json:"secretKeys"`

	Description     string   `json:"description"`
	Enabled         bool     `json:"enabled"` // default true
	Timeout         float64  `json:"timeout"` // seconds; 0 = unset
	Exposure        string   `json:"exposure"`
	ToolExposure    []Pair   `json:"toolExposure"`
	Credentials     string   `json:"credentials"` // "", "user" or "shared"
	SharedAuthority string   `json:"sharedAuthority"`
	Users           []string `json:"users"`
	HasUsers        bool     `json:"hasUsers"` // users was present and not null
	// Disabled: the request turned the server off (disabled: true or enabled: false).
	Disabled bool `json:"disabled"`
	// Availability is "all" (the default) or "opt-in": rendered only when run.enabled says so.
	Availability string `json:"availability"`
	// Scope is what an instance of the server is shared across: "session" (the default),
	// "space" or "app".
	Scope string `json:"scope"`
	// Harnesses, when HasHarnesses, lists the only harnesses the server is rendered for.
	Harnesses    []string `json:"harnesses"`
	HasHarnesses bool     `json:"hasHarnesses"`

	// Token is the server's token member: whether loadout serve mints a run token for it.
	// The zero value asks for none.
	Token TokenRequest `json:"token"`

	// OAuth is the server's oauth member (http servers only); nil when absent, null or empty.
	OAuth *OAuth `json:"oauth"`
	// Lifecycle is when the harness starts and stops the server: "" (the harness's default) or
	// one of LifecycleLazy, LifecycleEager, LifecycleKeepAlive, LifecycleLazyKeepAlive.
	Lifecycle string `json:"lifecycle"`
	// IdleTimeout is how many minutes an idle server may stay up before the harness stops it;
	// 0 = unset.
	IdleTimeout float64 `json:"idleTimeout"`
}

// OAuth is a server's oauth member: how the harness signs in to an http server with OAuth.
// Every string is printable ASCII without '$' or '!', which no harness expands.
type OAuth struct {
	// ClientID is the registered client id; "" lets the harness register or identify itself.
	ClientID string `json:"clientId"`
	// CallbackPort is the loopback port the harness listens on for the redirect; 0 = any.
	CallbackPort int `json:"callbackPort"`
	// Scopes are the scopes to request, in request order, each listed once (RFC 6749 §3.3
	// scope tokens).
	Scopes []string `json:"scopes"`
	// AuthServerMetadataURL is where the authorization server's metadata is read from instead
	// of being discovered; it obeys the policy's URL rules like the server url.
	AuthServerMetadataURL string `json:"authServerMetadataUrl"`
}

// Path is the JSON path of the server in the request: "mcpServers[i]" or "userServers[i]".
func (s *Server) Path() string {
	list := "mcpServers"
	if s.Source == SourceUser {
		list = "userServers"
	}
	return list + "[" + strconv.Itoa(s.Index) + "]"
}

// Where a server comes from, and the prefix of a user server's id.
const (
	// SourceCatalog: the platform's catalog (mcpServers).
	SourceCatalog = "catalog"
	// SourceUser: the run's user supplied it (userServers); whether it is kept is policy.
	SourceUser = "user"
	// UserIDPrefix starts the id of every user server; the policy reserves it for them.
	UserIDPrefix = "u_"
)

// TokenRequest is a server's token member, {"mint": true, "ttl": "2h"}. A minted token is
// rendered where the server's credential goes, exactly like a stored token of the request's
// tokens map (stdio: env MCP_ACCESS_TOKEN; http: header Authorization: Bearer).
type TokenRequest struct {
	Mint bool `json:"mint"`
	// TTL is the token's lifetime, positive; 0 when ttl was absent (the minter's default).
	TTL time.Duration `json:"ttl"`
}

// Diagnostic reports one dropped or changed entry. Kind is "skill", "resource", "server" or
// "request"; Name is the entry's (sanitized) name or id where it has one; Field is the JSON
// path of the offending field, e.g. "mcpServers[2].url"; Code is a stable snake_case code;
// Rule names the policy rule for a policy decision.
type Diagnostic struct {
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Field   string `json:"field"`
	Code    string `json:"code"`
	Message string `json:"message"`
	// Rule is where the policy rule that decided it lives (file:row), for a policy drop.
	Rule string `json:"rule,omitempty"`
}
