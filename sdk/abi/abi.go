// Package abi is the wire contract between the loadout host and a renderer plugin (ABI v1).
//
// It is owned by the project and imported by both sides: the host (host/...) and the Go plugin
// SDK (sdk). It uses the standard library only and holds no mutable state, so it is safe to use
// from any goroutine. sdk/ABI.md describes the same contract for authors of plugins written in
// other languages; this file and that document must agree.
//
// Everything that crosses the boundary is UTF-8 JSON. Maps whose order matters (env, headers,
// tool exposure) travel as arrays of Pair so that request order survives every encoder.
package abi

// Version is the ABI version this package describes. A plugin exports it from ExportABIVersion;
// the host refuses a module that reports any other value.
const Version = 1

// Export names every plugin module provides (besides "memory", and "_initialize" for a reactor).
const (
	ExportMemory     = "memory"
	ExportInitialize = "_initialize"
	// ExportABIVersion: () -> i32, returns Version.
	ExportABIVersion = "loadout_abi_version"
	// ExportAlloc: (size i32) -> i32, returns a pointer to size bytes of guest memory that the
	// host fills with the input of the next call. The guest owns that memory.
	ExportAlloc = "loadout_alloc"
	// ExportManifest: () -> i64, returns (ptr<<32 | len) of the manifest JSON.
	ExportManifest = "loadout_manifest"
	// ExportRender: (ptr i32, len i32) -> i64, reads the Request JSON at ptr and returns
	// (ptr<<32 | len) of the Plan JSON, or of an ErrorResponse JSON.
	ExportRender = "loadout_render"
)

// Roots a plan may write under. They are names, never paths: the host resolves them.
const (
	RootConfig   = "config"   // the harness's isolated config home
	RootRun      = "run"      // per-run scratch, outside the checkout
	RootCheckout = "checkout" // the repository; never holds a secret
)

// File formats a plan may declare. The host parses json and toml back before writing, and
// checks markdown front matter.
const (
	FormatJSON     = "json"
	FormatTOML     = "toml"
	FormatMarkdown = "markdown"
	FormatText     = "text"
)

// Transports a server may use.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
)

// Placeholders. A plugin never sees a secret value, an absolute root path or (when the host
// sends content by reference) a skill body: it sees a placeholder string and copies it where the
// value belongs. After checking the plan, the host replaces each placeholder with the value,
// escaped for the file's format (JSON string, TOML basic string, raw for markdown and text).
//
//	{{loadout.secret.N}}   a secret value (N = 1, 2, …); allowed only in files with Secret set
//	{{loadout.root.NAME}}  the absolute directory of root NAME (config, run, checkout)
//	{{loadout.blob.N}}     opaque content (skill instructions, resource contents)
//
// A request whose own strings contain PlaceholderPrefix is refused by the host, so every
// placeholder in a plan was put there by the host.
const PlaceholderPrefix = "{{loadout."

// Pair is one entry of an ordered string map.
type Pair struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	// Secret is true when Value is a secret placeholder: the file it lands in must be Secret.
	Secret bool `json:"secret,omitempty"`
}

// Manifest describes a plugin. It is returned by ExportManifest.
type Manifest struct {
	Name       string `json:"name"`       // plugin id, e.g. "render.claude"
	Version    string `json:"version"`    // the plugin's own version
	ABIVersion int    `json:"abiVersion"` // must equal Version
	Harness    string `json:"harness"`    // harness id, e.g. "claude"
	// Transports the plugin renders; a server with another transport comes back as a warning.
	Transports []string `json:"transports"`
	// NativeSkills is true when the plugin installs skills where the harness discovers them.
	NativeSkills bool `json:"nativeSkills"`
	// Roots the plugin writes under; a plan file under any other root is refused.
	Roots []string `json:"roots"`
}

// Request is the vetted request a plugin renders. Everything in it passed the host's parser and
// the policy; secrets, roots and (optionally) large content are placeholders.
type Request struct {
	ABIVersion int      `json:"abiVersion"`
	Harness    string   `json:"harness"`
	Run        Run      `json:"run"`
	Servers    []Server `json:"servers"`
	Skills     []Skill  `json:"skills"`
}

// Run describes the run the configuration is for.
type Run struct {
	// AmbientAuth is true when the harness runs with the user's own (non-isolated) config home.
	AmbientAuth bool   `json:"ambientAuth"`
	User        string `json:"user,omitempty"`
	// BuiltinTools are the harness's own tools the run pre-approves, distinct, in request
	// order: the request's run.builtinTools as the policy left them, only those the harness's
	// profile lists (tools.builtin). Empty: none is pre-approved. A renderer grants exactly
	// these, whatever the servers' tool restrictions; the plan check holds it to them.
	BuiltinTools []string `json:"builtinTools,omitempty"`
}

// Server is one vetted MCP server.
type Server struct {
	ID        string `json:"id"`
	Transport string `json:"transport"` // TransportStdio or TransportHTTP

	// stdio
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Env is the server's own environment, in request order, the run's token last.
	Env []Pair `json:"env,omitempty"`
	// HostEnv is the part of the host environment the policy lets reach this server
	// (its spawn environment is HostEnv, then Env). A renderer whose harness passes its own
	// environment through to servers uses it to pin the server's environment exactly.
	HostEnv []Pair `json:"hostEnv,omitempty"`
	Cwd     string `json:"cwd,omitempty"`

	// http
	URL     string `json:"url,omitempty"`
	Headers []Pair `json:"headers,omitempty"`

	// ToolsRestricted is true when the request declared allowedTools; AllowedTools then lists
	// the permitted tools (possibly none). When false the server's every tool is permitted.
	ToolsRestricted bool     `json:"toolsRestricted"`
	AllowedTools    []string `json:"allowedTools,omitempty"`
	// DeniedTools are tools the harness must not offer at all, by exact name in request order:
	// the ones the request's exposure hides, listed by the host for a harness that has no
	// exposure of its own (docs/PROFILES.md). A renderer writes each to the harness's deny list.
	DeniedTools []string `json:"deniedTools,omitempty"`

	Description  string  `json:"description,omitempty"`
	Enabled      bool    `json:"enabled"`
	Timeout      float64 `json:"timeout,omitempty"`  // seconds; 0 = harness default
	Exposure     string  `json:"exposure,omitempty"` // direct|deferred|codemode|hidden
	ToolExposure []Pair  `json:"toolExposure,omitempty"`

	// OAuth is how the harness signs in to an http server; nil when the request sets none.
	// The host checks that a rendered OAuth setting carries exactly these values.
	OAuth *OAuth `json:"oauth,omitempty"`
	// Lifecycle is when the harness starts and stops the server: "" (its default), "lazy",
	// "eager", "keep-alive" or "lazy-keep-alive"; IdleTimeout is in minutes, 0 = unset.
	Lifecycle   string  `json:"lifecycle,omitempty"`
	IdleTimeout float64 `json:"idleTimeout,omitempty"`
}

// OAuth is a vetted server's OAuth sign-in setting. Each member is optional (zero = unset).
// Its strings are printable ASCII without '$' or '!', so no harness expands them.
type OAuth struct {
	ClientID     string `json:"clientId,omitempty"`
	CallbackPort int    `json:"callbackPort,omitempty"` // 1-65535
	// Scopes are the scopes to request, in order; a harness that takes one string joins them
	// with single spaces.
	Scopes []string `json:"scopes,omitempty"`
	// AuthServerMetadataURL passed the policy's URL rules, like the server's URL.
	AuthServerMetadataURL string `json:"authServerMetadataUrl,omitempty"`
}

// Skill is one vetted skill.
type Skill struct {
	Name         string     `json:"name"`
	Description  string     `json:"description"`
	Instructions string     `json:"instructions"` // literal text or a blob placeholder
	Resources    []Resource `json:"resources,omitempty"`
}

// Resource is one file of a skill, relative to the skill's directory.
type Resource struct {
	Path    string `json:"path"`
	Content string `json:"content"` // literal text or a blob placeholder
}

// Plan is what a plugin returns from ExportRender.
type Plan struct {
	Files []File `json:"files"`
	// Args are the harness's command-line arguments; each tool or value is its own entry.
	Args []string `json:"args"`
	// Env is the environment the harness process needs (e.g. CODEX_HOME), in order.
	Env    []Pair `json:"env"`
	Prompt string `json:"prompt"` // appended to the agent's prompt
	// GitExclude lists checkout-relative paths to add to .git/info/exclude.
	GitExclude []string  `json:"gitExclude"`
	Warnings   []Warning `json:"warnings"`
}

// File is one file to write.
type File struct {
	Root    string `json:"root"`    // RootConfig, RootRun or RootCheckout
	Path    string `json:"path"`    // slash-separated, relative to Root
	Mode    string `json:"mode"`    // octal, e.g. "0600", "0644"
	Format  string `json:"format"`  // FormatJSON, FormatTOML, FormatMarkdown, FormatText
	Content string `json:"content"` // with placeholders
	Secret  bool   `json:"secret"`  // holds secret placeholders: mode 0600, never under RootCheckout
}

// Warning is something the plugin could not render faithfully (never a silent loss).
type Warning struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Server  string `json:"server,omitempty"`
	Skill   string `json:"skill,omitempty"`
}

// ErrorResponse is what a plugin returns from ExportRender instead of a Plan when it fails.
type ErrorResponse struct {
	Error Error `json:"error"`
}

// Error is an error that crossed the boundary as data.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Error codes a plugin may return.
const (
	CodeInvalidInput = "invalid_input" // the request could not be decoded
	CodeUnsupported  = "unsupported"   // the request asks for something the plugin cannot do
	CodeInternal     = "internal"      // a bug or a panic in the plugin
)

// Warning codes the host reads: a vetted setting a plugin leaves out must be named by a
// warning with its code for the server, or the plan is refused.
const (
	// WarnOAuthUnsupported: members of the server's OAuth setting are not rendered (the
	// harness has no key for them, or would refuse the value).
	WarnOAuthUnsupported = "oauth_unsupported"
	// WarnLifecycleUnsupported: the server's lifecycle or idleTimeout is not rendered.
	WarnLifecycleUnsupported = "lifecycle_unsupported"
	// WarnTimeoutAdjusted: the server's timeout is rendered at the nearest bound of the range
	// the harness's profile states (timeoutMin, timeoutMax), because the vetted one lies outside.
	WarnTimeoutAdjusted = "timeout_adjusted"
)

// Warning codes for a server a renderer leaves out, or a part of one, because the harness
// cannot carry it.
const (
	// WarnTransportUnsupported: the harness has no way to connect the server's transport.
	WarnTransportUnsupported = "transport_unsupported"
	// WarnServerNameReserved: the harness would read the server's name as something else (a
	// JavaScript built-in name of a Node CLI's config object).
	WarnServerNameReserved = "server_name_reserved"
	// WarnToolNameUnsupported: a tool name cannot be written into the harness's allow list; the
	// tool is not offered.
	WarnToolNameUnsupported = "tool_name_unsupported"
	// WarnServerDisabled: the harness has no per-server switch, so a disabled server is left
	// out.
	WarnServerDisabled = "server_disabled"
	// WarnServerNameConflict: the harness reads the server's name as the name of a server
	// rendered before it (profile config.namesFold); the server is left out.
	WarnServerNameConflict = "server_name_conflict"
	// WarnToolNameTooLong: a tool's rule is longer than the harness keeps; the harness drops the
	// tool.
	WarnToolNameTooLong = "tool_name_too_long"
)
