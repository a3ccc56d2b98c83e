package policy

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/loadout-dev/loadout/host/exposure"
	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/host/redact"
	"github.com/loadout-dev/loadout/host/spec"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// ErrPlaceholder is returned by Vet when a string of the request already contains
// abi.PlaceholderPrefix: every placeholder a plugin sees must have been put there by the host,
// or a request could have a secret substituted where it may not go. The request is refused.
var ErrPlaceholder = errors.New("request contains the reserved placeholder prefix " + abi.PlaceholderPrefix)

// VetOptions tune how Vet builds the plugin request.
type VetOptions struct {
	// ContentByRef replaces every skill's instructions and every resource's content by a
	// {{loadout.blob.N}} placeholder; Blobs maps them back.
	ContentByRef bool
	// Exposure is what the rendering harness can do with exposure (its profile); nil when no
	// harness renders the request (policy eval), and the servers keep their exposure as is.
	// Otherwise each server's exposure becomes the tool lists the harness enforces, and a
	// server whose exposure the harness cannot enforce is refused (host/exposure).
	Exposure *exposure.Harness
	// Builtin is what the rendering harness's profile says of its own tools; nil when no
	// harness renders the request (policy eval), and run.builtinTools stays as the policy left
	// it.
	Builtin *Builtin
}

// Builtin is a harness's own tools, as its profile lists them (tools.builtin): the only ones a
// run may pre-approve on it. A harness without such a list pre-approves none.
type Builtin struct {
	Harness string
	Tools   []string
}

// Warning codes of the run's built-in tools.
const (
	// CodeBuiltinToolsUnsupported: the run asks to pre-approve built-in tools and the harness
	// has no list to grant them in; none is granted.
	CodeBuiltinToolsUnsupported = "builtin_tools_unsupported"
	// CodeBuiltinToolUnknown: the run asks to pre-approve a tool the harness's profile does
	// not list as its own; it is not granted.
	CodeBuiltinToolUnknown = "builtin_tool_unknown"
)

// Vetted is a request the policy approved, in the form a renderer may see. Only this package
// can make one (Vet), so nothing reaches a renderer without passing the policy. A Vetted is
// immutable and safe for concurrent use; accessors return copies.
type Vetted struct {
	req        abi.Request
	secrets    []Secret
	blobs      []Blob
	redactions []string
	redactor   *redact.Redactor
	spawn      map[string][]spec.Pair
	dropped    []spec.Diagnostic
	origins    []int
	decision   *Decision
	warnings   []Warning
}

// Secret is one secret value and its placeholder, with every place it may appear.
type Secret struct {
	Placeholder string      // {{loadout.secret.N}}
	Value       string      // the raw value
	Uses        []SecretUse // where the placeholder was put, in request order
}

// SecretUse is one place a secret may appear: server id, field ("env" or "headers") and key.
type SecretUse struct {
	Server string `json:"server"`
	Field  string `json:"field"`
	Key    string `json:"key"`
}

// Blob is one piece of content sent by reference.
type Blob struct {
	Placeholder string // {{loadout.blob.N}}
	Content     string
}

// Request is the plugin request: a deep copy, with placeholders for secrets (and blobs).
func (v *Vetted) Request() abi.Request { return v.req.Clone() }

// Secrets lists the secrets in placeholder order (N = 1, 2, …).
func (v *Vetted) Secrets() []Secret {
	out := make([]Secret, len(v.secrets))
	for i, s := range v.secrets {
		out[i] = Secret{Placeholder: s.Placeholder, Value: s.Value, Uses: slices.Clone(s.Uses)}
	}
	return out
}

// Blobs lists the content placeholders in order (empty without VetOptions.ContentByRef).
func (v *Vetted) Blobs() []Blob { return slices.Clone(v.blobs) }

// Redactions is the redaction set (conformity/testdata/README.md §4): every secret value in
// each spelling a harness config may hold (plan.SecretSpellings) and, when different, as
// spelled inside a JSON string and inside a TOML basic string; non-empty, de-duplicated, in
// secret order.
func (v *Vetted) Redactions() []string { return slices.Clone(v.redactions) }

// Redactor masks the redaction set with host/redact's model. It is built once, by Vet, and
// shared: every message, result and log line of the request is masked with it.
func (v *Vetted) Redactor() *redact.Redactor { return v.redactor }

// SpawnEnv is the complete environment a kept stdio server id is spawned with (raw values):
// the host variables the policy lets through, then the server's kept env, then its stored
// token as MCP_ACCESS_TOKEN. Nil for an unknown id or an http server.
func (v *Vetted) SpawnEnv(id string) []spec.Pair { return slices.Clone(v.spawn[id]) }

// Origins gives, for each server of Request in order, its index in the request's Servers
// (spec.Request.Servers): where its scope, source and credentials are read.
func (v *Vetted) Origins() []int { return slices.Clone(v.origins) }

// Dropped lists what the policy and de-duplication removed, in request order.
func (v *Vetted) Dropped() []spec.Diagnostic { return slices.Clone(v.dropped) }

// Decision is the policy decision the request was vetted with, every secret spelling in its
// messages masked (redact.Mask), as the result carries it.
func (v *Vetted) Decision() *Decision { return v.decision }

// Empty reports whether nothing is left to render: no server and no skill.
func (v *Vetted) Empty() bool { return len(v.req.Servers) == 0 && len(v.req.Skills) == 0 }

// Warnings are the policy's warnings.
func (v *Vetted) Warnings() []Warning { return slices.Clone(v.warnings) }

// vetter accumulates one Vet call.
type vetter struct {
	out *Vetted
	// container: loopback URLs are rewritten to ContainerHost (run.container).
	container bool
	byValue   map[string]int // field NUL secret value -> index in out.secrets, once there are many
	// hostEnv is the spawn environment's host part, shared by every stdio server of out.req
	// (never modified; Vetted.Request hands out copies).
	hostEnv []abi.Pair
	// pairs, tools and uses are blocks the servers' env and headers, allowedTools and the
	// secrets' uses are carved from, each list with the room it can take (Vetted hands out
	// copies, so lists may share a block).
	pairs []abi.Pair
	tools []string
	uses  []SecretUse
}

// carve returns an empty list with room for n from *block, or a new one when it has none.
func carve[T any](block *[]T, n int) []T {
	at := len(*block)
	if at+n > cap(*block) {
		return make([]T, 0, n)
	}
	*block = (*block)[:at+n]
	return (*block)[at : at : at+n]
}

// Vet applies decision d to req: denied servers and skills are removed, drops applied,
// duplicate server ids removed (first allowed wins: a denied entry does not claim its id), the
// run's tokens added (stdio: env MCP_ACCESS_TOKEN last; http: header Authorization: Bearer),
// every stdio server's spawn environment computed from hostEnv, and the plugin request built
// with every secret value replaced by {{loadout.secret.N}}. d must come from Decide for the
// same req. Vet does not modify req or d.
func Vet(req *spec.Request, d *Decision, hostEnv []spec.Pair, opts VetOptions) (*Vetted, error) {
	if d == nil {
		return nil, ErrNoDecision
	}
	if len(d.Servers) != len(req.Servers) || len(d.Skills) != len(req.Skills) {
		return nil, &MalformedError{Path: "decision", Msg: "does not match the request it is applied to"}
	}
	if err := checkNoPlaceholder(req); err != nil {
		return nil, err
	}
	vt := &vetter{
		container: req.Run.Container,
		out: &Vetted{
			req: abi.Request{
				ABIVersion: abi.Version,
				Harness:    req.Harness,
				Run:        abi.Run{AmbientAuth: req.Run.AmbientAuth, User: req.Run.User},
				Servers:    make([]abi.Server, 0, len(req.Servers)),
				Skills:     []abi.Skill{},
			},
			secrets:  make([]Secret, 0, len(d.Secrets)),
			blobs:    []Blob{},
			spawn:    map[string][]spec.Pair{},
			origins:  make([]int, 0, len(req.Servers)),
			dropped:  make([]spec.Diagnostic, 0, dropCount(d)),
			decision: d,
			warnings: slices.Clone(d.Warnings),
		},
	}
	var pairs, tools int
	for i := range req.Servers {
		pairs += len(req.Servers[i].Env) + len(req.Servers[i].Headers) + 2
		tools += len(req.Servers[i].AllowedTools)
	}
	vt.pairs = make([]abi.Pair, 0, pairs)
	vt.tools = make([]string, 0, tools)
	vt.uses = make([]SecretUse, 0, len(d.Secrets))
	secretsOf := newSecretSet(d.Secrets)
	hostAllowed := filterHostEnv(hostEnv, d.SpawnEnv)
	vt.hostEnv = abiPairs(hostAllowed)
	var claimed map[string]bool // ids of the kept servers, once there are many
	for i := range req.Servers {
		s := &req.Servers[i]
		sd := d.Servers[i]
		if !sd.Allow {
			path := serverPath(s)
			for _, r := range sd.Reasons {
				field := path
				if r.Field != "" {
					field += "." + r.Field
				}
				vt.drop("server", s.ID, field, r)
			}
			continue
		}
		eff, refused := vt.exposure(s, sd, opts.Exposure)
		if refused {
			continue
		}
		if vt.claimed(claimed, s.ID) {
			vt.drop("server", s.ID, serverPath(s)+".id", Reason{Code: "duplicate_id", Message: fmt.Sprintf("server id %q is already used by an earlier server (first wins)", s.ID)})
			continue
		}
		if claimed == nil && len(vt.out.req.Servers) >= manyEntries {
			claimed = make(map[string]bool, len(req.Servers))
			for _, kept := range vt.out.req.Servers {
				claimed[kept.ID] = true
			}
		}
		if claimed != nil {
			claimed[s.ID] = true
		}
		vt.server(req, i, s, sd, eff, secretsOf.of(i), hostAllowed)
	}
	for k := range req.Skills {
		sk := &req.Skills[k]
		if sd := d.Skills[k]; !sd.Allow {
			for _, r := range sd.Reasons {
				vt.drop("skill", sk.Name, "skills["+strconv.Itoa(sk.Index)+"]", r)
			}
			continue
		}
		vt.skill(sk, opts)
	}
	vt.builtinTools(req, d, opts.Builtin)
	vt.redactions(req, d)
	vt.maskMessages()
	if denied := vt.out.decision.Denied; len(denied) > 0 {
		return nil, &DeniedError{Reasons: denied}
	}
	return vt.out, nil
}

// DeniedError is a request a rule refused as a whole: a string element of a deny set
// (conftest's form). Messages are masked. The request is refused (IsRejected, exit 3).
type DeniedError struct{ Reasons []Reason }

func (e *DeniedError) Error() string {
	parts := make([]string, len(e.Reasons))
	for i, r := range e.Reasons {
		parts[i] = r.Message + " [" + r.Rule + "]"
	}
	return "request denied by policy: " + strings.Join(parts, "; ")
}

// builtinTools sets the run's pre-approved built-in tools: run.builtinTools without the ones
// the policy dropped (reported in dropped), and, for a rendering harness, only those its
// profile lists; any other is left out with a warning, never granted and never silent.
func (vt *vetter) builtinTools(req *spec.Request, d *Decision, h *Builtin) {
	var kept []string
	for i, t := range req.Run.BuiltinTools {
		dropped := false
		for _, dr := range d.Run.Drop {
			if dr.Key == t {
				r := dr.Reason
				r.Message = "builtinTools " + strconv.Quote(t) + " removed: " + r.Message
				vt.drop(spec.KindRequest, "", "run.builtinTools["+strconv.Itoa(i)+"]", r)
				dropped = true
			}
		}
		if !dropped {
			kept = append(kept, t)
		}
	}
	if h != nil && len(kept) > 0 {
		rule := "profile " + h.Harness
		if len(h.Tools) == 0 {
			vt.out.warnings = append(vt.out.warnings, Warning{Code: CodeBuiltinToolsUnsupported, Rule: rule,
				Message: fmt.Sprintf("harness %s has no list of pre-approved built-in tools (profile tools.builtin); run.builtinTools %q is not granted", h.Harness, kept)})
			kept = nil
		}
		var known []string
		for _, t := range kept {
			if slices.Contains(h.Tools, t) {
				known = append(known, t)
				continue
			}
			vt.out.warnings = append(vt.out.warnings, Warning{Code: CodeBuiltinToolUnknown, Rule: rule,
				Message: fmt.Sprintf("run.builtinTools %q is not a built-in tool of harness %s (profile tools.builtin); it is not granted", t, h.Harness)})
		}
		kept = known
	}
	vt.out.req.Run.BuiltinTools = kept
}

// maskMessages masks every secret spelling in the messages of the drops, the warnings and the
// decision: a rule may copy a value into its message, and messages are printed and logged.
func (vt *vetter) maskMessages() {
	if len(vt.out.redactions) == 0 {
		return
	}
	// One redactor for every message: its cost grows with the messages' length, not with
	// messages × secrets, so a request of N servers is masked in time linear in N.
	mask := vt.out.redactor.String
	for i := range vt.out.dropped {
		vt.out.dropped[i].Message = mask(vt.out.dropped[i].Message)
	}
	for i := range vt.out.warnings {
		vt.out.warnings[i].Message = mask(vt.out.warnings[i].Message)
	}
	// The decision goes into the result too: it gets its own copy, messages masked (d itself
	// is the caller's and stays as it is).
	d := *vt.out.decision
	d.Servers = make([]ServerDecision, len(d.Servers))
	for i, sd := range vt.out.decision.Servers {
		sd.Reasons = slices.Clone(sd.Reasons)
		for k := range sd.Reasons {
			sd.Reasons[k].Message = mask(sd.Reasons[k].Message)
		}
		sd.Drop = slices.Clone(sd.Drop)
		for k := range sd.Drop {
			sd.Drop[k].Reason.Message = mask(sd.Drop[k].Reason.Message)
		}
		d.Servers[i] = sd
	}
	d.Skills = make([]SkillDecision, len(d.Skills))
	for i, sd := range vt.out.decision.Skills {
		sd.Reasons = slices.Clone(sd.Reasons)
		for k := range sd.Reasons {
			sd.Reasons[k].Message = mask(sd.Reasons[k].Message)
		}
		d.Skills[i] = sd
	}
	d.Run.Drop = slices.Clone(d.Run.Drop)
	for k := range d.Run.Drop {
		d.Run.Drop[k].Reason.Message = mask(d.Run.Drop[k].Reason.Message)
	}
	d.Warnings = slices.Clone(d.Warnings)
	for i := range d.Warnings {
		d.Warnings[i].Message = mask(d.Warnings[i].Message)
	}
	d.Denied = slices.Clone(d.Denied)
	for i := range d.Denied {
		d.Denied[i].Message = mask(d.Denied[i].Message)
	}
	vt.out.decision = &d
}

// manyEntries is where a lookup by scan gives way to a map.
const manyEntries = 16

// CodeContainerURL: a loopback server URL was rewritten to ContainerHost for a run in a
// container (run.container); reported in dropped with the URL before and after.
const CodeContainerURL = "url_container_host"

// claimed reports whether a kept server has id: by a scan of the kept servers, or by
// claimed once there are many.
func (vt *vetter) claimed(claimed map[string]bool, id string) bool {
	if claimed != nil {
		return claimed[id]
	}
	return slices.ContainsFunc(vt.out.req.Servers, func(s abi.Server) bool { return s.ID == id })
}

// secretSet answers which entries of a server are secrets (Decision.Secrets). Decide lists
// them in request order, so a server's are one run of the list, found as the servers are
// visited in order; a list in any other order is put in a map.
type secretSet struct {
	refs []SecretRef
	next int
	m    map[SecretRef]bool
}

func newSecretSet(refs []SecretRef) *secretSet {
	ss := &secretSet{refs: refs}
	if !slices.IsSortedFunc(refs, func(a, b SecretRef) int { return a.Server - b.Server }) {
		ss.m = make(map[SecretRef]bool, len(refs))
		for _, r := range refs {
			ss.m[r] = true
		}
	}
	return ss
}

// of is the secrets of server i; servers are asked for in increasing order.
func (ss *secretSet) of(i int) serverSecrets {
	if ss.m != nil {
		return serverSecrets{server: i, m: ss.m}
	}
	for ss.next < len(ss.refs) && ss.refs[ss.next].Server < i {
		ss.next++
	}
	end := ss.next
	for end < len(ss.refs) && ss.refs[end].Server == i {
		end++
	}
	return serverSecrets{server: i, refs: ss.refs[ss.next:end]}
}

// serverSecrets are the secrets of one server.
type serverSecrets struct {
	server int
	refs   []SecretRef
	m      map[SecretRef]bool
}

func (s serverSecrets) has(field, key string) bool {
	if s.m != nil {
		return s.m[SecretRef{Server: s.server, Field: field, Key: key}]
	}
	for _, r := range s.refs {
		if r.Field == field && r.Key == key {
			return true
		}
	}
	return false
}

// serverPath is the JSON path of request server s: mcpServers[i] or userServers[i].
func serverPath(s *spec.Server) string { return s.Path() }

func (vt *vetter) drop(kind, name, field string, r Reason) {
	vt.out.dropped = append(vt.out.dropped, spec.Diagnostic{Kind: kind, Name: name, Field: field, Code: r.Code, Message: r.Message, Rule: r.Rule})
}

// server adds allowed, first-of-its-id server s (request index i) to the plugin request.
func (vt *vetter) server(req *spec.Request, i int, s *spec.Server, sd ServerDecision, eff exposure.Effect, secretsOf serverSecrets, hostAllowed []spec.Pair) {
	// A server has few drops: they are looked up by a scan of sd.Drop.
	gone := func(field, key string) bool {
		return slices.ContainsFunc(sd.Drop, func(d Drop) bool { return d.Field == field && d.Key == key })
	}
	path := ""
	if len(sd.Drop) > 0 {
		path = serverPath(s)
	}
	for _, dr := range sd.Drop {
		field := path + "." + dr.Field
		if dr.Field != "allowedTools" {
			field += "." + dr.Key
		}
		r := dr.Reason
		r.Message = dr.Field + " " + strconv.Quote(dr.Key) + " removed: " + r.Message
		vt.drop("server", s.ID, field, r)
	}
	url := s.URL
	if vt.container {
		if u, ok := containerURL(url); ok {
			url = u
			vt.drop("server", s.ID, serverPath(s)+".url", Reason{Code: CodeContainerURL,
				Message: "url " + strconv.Quote(s.URL) + " rewritten to " + strconv.Quote(u) + ": the harness runs in a container (run.container), where the host's loopback is " + ContainerHost})
		}
	}
	oauth := abiOAuth(s.OAuth)
	if oauth != nil && oauth.AuthServerMetadataURL != "" && vt.container {
		if u, ok := containerURL(oauth.AuthServerMetadataURL); ok {
			vt.drop("server", s.ID, serverPath(s)+".oauth.authServerMetadataUrl", Reason{Code: CodeContainerURL,
				Message: "oauth.authServerMetadataUrl " + strconv.Quote(oauth.AuthServerMetadataURL) + " rewritten to " + strconv.Quote(u) + ": the harness runs in a container (run.container), where the host's loopback is " + ContainerHost})
			oauth.AuthServerMetadataURL = u
		}
	}
	out := abi.Server{
		ID:              s.ID,
		Transport:       s.Transport,
		Command:         s.Command,
		Args:            slices.Clone(s.Args),
		Cwd:             s.Cwd,
		URL:             url,
		ToolsRestricted: eff.Restricted,
		Description:     s.Description,
		Enabled:         s.Enabled,
		Timeout:         s.Timeout,
		Exposure:        s.Exposure,
		ToolExposure:    abiPairs(s.ToolExposure),
		OAuth:           oauth,
		Lifecycle:       s.Lifecycle,
		IdleTimeout:     s.IdleTimeout,
	}
	// Lists are sized once; one left empty stays nil, as the request's would be.
	out.AllowedTools = carve(&vt.tools, len(s.AllowedTools))
	out.Env = carve(&vt.pairs, len(s.Env)+1)
	out.Headers = carve(&vt.pairs, len(s.Headers)+1)
	out.AllowedTools = append(out.AllowedTools, eff.Allowed...)
	if len(eff.Denied) > 0 {
		out.DeniedTools = carve(&vt.tools, len(eff.Denied))
		out.DeniedTools = append(out.DeniedTools, eff.Denied...)
	}
	var spawn []spec.Pair
	if s.Transport == abi.TransportStdio {
		spawn = append(make([]spec.Pair, 0, len(hostAllowed)+len(s.Env)+1), hostAllowed...)
		out.HostEnv = vt.hostEnv
	}
	for _, p := range s.Env {
		if gone("env", p.Name) {
			continue
		}
		out.Env = append(out.Env, vt.pair(s.ID, "env", p, secretsOf.has("env", p.Name)))
		if s.Transport == abi.TransportStdio {
			spawn = setPair(spawn, p)
		}
	}
	for _, p := range s.Headers {
		if gone("headers", p.Name) {
			continue
		}
		out.Headers = append(out.Headers, vt.pair(s.ID, "headers", p, secretsOf.has("headers", p.Name)))
	}
	if token := tokenFor(req, s.ID); token != "" {
		switch s.Transport {
		case abi.TransportStdio:
			p := spec.Pair{Name: "MCP_ACCESS_TOKEN", Value: token}
			out.Env = append(out.Env, vt.pair(s.ID, "env", p, true))
			spawn = setPair(spawn, p)
		case abi.TransportHTTP:
			ph := vt.secret(token, SecretUse{Server: s.ID, Field: "headers", Key: "Authorization"})
			out.Headers = append(out.Headers, abi.Pair{Name: "Authorization", Value: "Bearer " + ph, Secret: true})
		}
	}
	if s.Transport == abi.TransportStdio {
		if spawn == nil {
			spawn = []spec.Pair{}
		}
		vt.out.spawn[s.ID] = spawn
	}
	if len(out.AllowedTools) == 0 {
		out.AllowedTools = nil
	}
	if len(out.Env) == 0 {
		out.Env = nil
	}
	if len(out.Headers) == 0 {
		out.Headers = nil
	}
	vt.out.req.Servers = append(vt.out.req.Servers, out)
	vt.out.origins = append(vt.out.origins, i)
}

// exposure turns allowed server s's exposure into the tool restriction harness h enforces
// (host/exposure), after the policy's allowedTools drops: a refusal is reported in dropped and
// the server goes no further (it claims no id, as a denied one), an exposure the harness lacks
// is a warning. With h nil the restriction is the request's.
func (vt *vetter) exposure(s *spec.Server, sd ServerDecision, h *exposure.Harness) (exposure.Effect, bool) {
	allowed := s.AllowedTools // read only: the server's list is copied into its own block
	if slices.ContainsFunc(sd.Drop, func(d Drop) bool { return d.Field == "allowedTools" }) {
		allowed = make([]string, 0, len(s.AllowedTools))
		for _, t := range s.AllowedTools {
			if !slices.ContainsFunc(sd.Drop, func(d Drop) bool { return d.Field == "allowedTools" && d.Key == t }) {
				allowed = append(allowed, t)
			}
		}
	}
	if h == nil {
		return exposure.Effect{Restricted: s.ToolsDeclared, Allowed: allowed}, false
	}
	eff, ref := exposure.Apply(*h, exposure.Server{Exposure: s.Exposure, ToolExposure: abiPairs(s.ToolExposure), Restricted: s.ToolsDeclared, Allowed: allowed})
	rule := "profile " + h.Name
	if ref != nil {
		vt.drop("server", s.ID, serverPath(s)+"."+ref.Field, Reason{Code: ref.Code, Message: ref.Message, Rule: rule})
		return eff, true
	}
	for _, v := range eff.Unsupported {
		vt.out.warnings = append(vt.out.warnings, Warning{Code: exposure.CodeUnsupported, Server: s.ID, Message: exposure.UnsupportedMessage(v, h.Name), Rule: rule})
	}
	return eff, false
}

// placeholder is {{loadout.<kind>N}}; the first ones are spelled once.
func placeholder(kind string, n int) string {
	switch {
	case kind == "secret." && n < len(secretPlaceholders):
		return secretPlaceholders[n]
	case kind == "blob." && n < len(blobPlaceholders):
		return blobPlaceholders[n]
	}
	return abi.PlaceholderPrefix + kind + strconv.Itoa(n) + "}}"
}

var secretPlaceholders, blobPlaceholders = placeholders("secret."), placeholders("blob.")

// placeholders are the first placeholders of kind, indexed by N (0 is unused).
func placeholders(kind string) [64]string {
	var ps [64]string
	for n := 1; n < len(ps); n++ {
		ps[n] = abi.PlaceholderPrefix + kind + strconv.Itoa(n) + "}}"
	}
	return ps
}

// dropCount is how many entries Vet's dropped list can take from d: each refusal reason and
// each drop (duplicate ids come on top).
func dropCount(d *Decision) int {
	n := 0
	for _, sd := range d.Servers {
		n += len(sd.Reasons) + len(sd.Drop)
	}
	for _, sd := range d.Skills {
		n += len(sd.Reasons)
	}
	return n
}

// pair converts p, replacing a non-empty secret value by its placeholder.
func (vt *vetter) pair(id, field string, p spec.Pair, secret bool) abi.Pair {
	if !secret || p.Value == "" {
		return abi.Pair{Name: p.Name, Value: p.Value}
	}
	return abi.Pair{Name: p.Name, Value: vt.secret(p.Value, SecretUse{Server: id, Field: field, Key: p.Name}), Secret: true}
}

// secret returns the placeholder of value, minting one the first time a value is seen.
func (vt *vetter) secret(value string, use SecretUse) string {
	// One placeholder per value and field: a harness may expand an env value and a header a
	// different number of times, so the host spells a secret per field when it substitutes it.
	key := use.Field + "\x00" + value
	var i int
	var ok bool
	if vt.byValue != nil {
		i, ok = vt.byValue[key]
	} else {
		i = slices.IndexFunc(vt.out.secrets, func(s Secret) bool { return s.Value == value && s.Uses[0].Field == use.Field })
		ok = i >= 0
	}
	if !ok {
		i = len(vt.out.secrets)
		if vt.byValue == nil && i >= manyEntries {
			vt.byValue = make(map[string]int, 2*manyEntries)
			for k, s := range vt.out.secrets {
				vt.byValue[s.Uses[0].Field+"\x00"+s.Value] = k
			}
		}
		if vt.byValue != nil {
			vt.byValue[key] = i
		}
		vt.out.secrets = append(vt.out.secrets, Secret{
			Placeholder: placeholder("secret.", i+1),
			Value:       value,
			Uses:        carve(&vt.uses, 1),
		})
	}
	vt.out.secrets[i].Uses = append(vt.out.secrets[i].Uses, use)
	return vt.out.secrets[i].Placeholder
}

func (vt *vetter) blob(content string, opts VetOptions) string {
	if !opts.ContentByRef {
		return content
	}
	ph := placeholder("blob.", len(vt.out.blobs)+1)
	vt.out.blobs = append(vt.out.blobs, Blob{Placeholder: ph, Content: content})
	return ph
}

func (vt *vetter) skill(sk *spec.Skill, opts VetOptions) {
	out := abi.Skill{
		Name:         sk.Name,
		Description:  sk.Description,
		Instructions: vt.blob(sk.Instructions, opts),
	}
	for _, r := range sk.Resources {
		out.Resources = append(out.Resources, abi.Resource{Path: r.RelPath, Content: vt.blob(r.Content, opts)})
	}
	vt.out.req.Skills = append(vt.out.req.Skills, out)
}

// redactions spells every secret value the run may log: the rendered ones, then every value a
// rule marks secret whatever became of it (KnownRedactions). A value someone marked secret
// stays masked in logs whether or not it was rendered.
func (vt *vetter) redactions(req *spec.Request, d *Decision) {
	var set redact.Set
	for _, s := range vt.out.secrets {
		spell(&set, s.Value)
	}
	known(&set, req, d)
	vt.out.redactions = set.List()
	vt.out.redactor = redact.New(vt.out.redactions)
}

// KnownRedactions is the redaction set of req as far as it is known, for reporting an error
// of a request that was not vetted. With the policy's decision d: every value a rule marks
// secret, whatever became of it (a refused server's, an entry the policy removed, a declared
// credential the run's token replaced), the declared secrets of the servers the parser
// dropped, and every stored token, kept server or not; Vetted.Redactions is this set with the
// rendered secrets first. Without one (d nil: the policy did not decide), the secrets the
// request declares itself: the env and header values its secretKeys name, the declared
// secrets of the servers the parser dropped, and every stored token. Safe for concurrent use.
func KnownRedactions(req *spec.Request, d *Decision) []string {
	var set redact.Set
	known(&set, req, d)
	return set.List()
}

// spell adds every spelling of the secret value v to set: each harness spelling loadout may
// write (Claude's ${…:-$}, Pi's $$ and $!), each also as the config file's format escapes it.
func spell(set *redact.Set, v string) { set.Add(plan.SecretSpellings(v)...) }

func known(set *redact.Set, req *spec.Request, d *Decision) {
	if d == nil {
		for i := range req.Servers {
			s := &req.Servers[i]
			for _, p := range s.Env {
				if slices.Contains(s.SecretKeys, p.Name) {
					spell(set, p.Value)
				}
			}
			for _, p := range s.Headers {
				if slices.ContainsFunc(s.SecretKeys, func(k string) bool { return strings.EqualFold(k, p.Name) }) {
					spell(set, p.Value)
				}
			}
		}
	} else {
		for _, ref := range d.Secrets {
			s := &req.Servers[ref.Server]
			ps := s.Env
			if ref.Field == "headers" {
				ps = s.Headers
			}
			for _, p := range ps {
				if p.Name == ref.Key {
					spell(set, p.Value)
				}
			}
		}
	}
	// The declared secrets of the servers the parser dropped, which no rule saw.
	for _, v := range req.DroppedSecrets {
		spell(set, v)
	}
	// A credential a rule removes and marks secret (one the run's token replaces, say) is not
	// rendered but may still show up in a log.
	for i := range req.Servers {
		if d == nil {
			break
		}
		s, sd := &req.Servers[i], d.Servers[i]
		for _, dr := range sd.Drop {
			switch {
			case !dr.Secret:
			case dr.Field == "env":
				spell(set, lastValue(s.Env, dr.Key))
			case dr.Field == "headers":
				spell(set, lastValue(s.Headers, dr.Key))
			}
		}
	}
	for _, t := range req.Tokens {
		spell(set, t.Value)
	}
}

// lastValue is the value of the last pair named key ("" when there is none).
func lastValue(ps []spec.Pair, key string) string {
	for i := len(ps) - 1; i >= 0; i-- {
		if ps[i].Name == key {
			return ps[i].Value
		}
	}
	return ""
}

// filterHostEnv keeps the host variables named by se (exact keys, or a prefix), in host order.
func filterHostEnv(hostEnv []spec.Pair, se SpawnEnv) []spec.Pair {
	var out []spec.Pair
	for _, p := range hostEnv {
		ok := slices.Contains(se.Keys, p.Name)
		for _, pfx := range se.Prefixes {
			ok = ok || strings.HasPrefix(p.Name, pfx)
		}
		if ok {
			out = setPair(out, p)
		}
	}
	return out
}

// setPair sets p in env: it replaces the value of an existing key in place, else appends.
func setPair(env []spec.Pair, p spec.Pair) []spec.Pair {
	for i := range env {
		if env[i].Name == p.Name {
			env[i].Value = p.Value
			return env
		}
	}
	return append(env, p)
}

// abiOAuth is a copy of o for the plugin request (nil for none).
func abiOAuth(o *spec.OAuth) *abi.OAuth {
	if o == nil {
		return nil
	}
	return &abi.OAuth{ClientID: o.ClientID, CallbackPort: o.CallbackPort, Scopes: slices.Clone(o.Scopes), AuthServerMetadataURL: o.AuthServerMetadataURL}
}

func abiPairs(ps []spec.Pair) []abi.Pair {
	if ps == nil {
		return nil
	}
	out := make([]abi.Pair, len(ps))
	for i, p := range ps {
		out[i] = abi.Pair{Name: p.Name, Value: p.Value}
	}
	return out
}

// checkNoPlaceholder refuses a request any of whose strings holds abi.PlaceholderPrefix.
func checkNoPlaceholder(req *spec.Request) error {
	has := func(ss ...string) bool {
		for _, s := range ss {
			if strings.Contains(s, abi.PlaceholderPrefix) {
				return true
			}
		}
		return false
	}
	hasPairs := func(ps []spec.Pair) bool {
		for _, p := range ps {
			if has(p.Name, p.Value) {
				return true
			}
		}
		return false
	}
	if has(req.Harness, req.Run.User) || hasPairs(req.Tokens) {
		return ErrPlaceholder
	}
	for i := range req.Servers {
		s := &req.Servers[i]
		if has(s.ID, s.Transport, s.Command, s.Cwd, s.URL, s.Description, s.Exposure, s.Credentials, s.SharedAuthority) ||
			has(s.Args...) || has(s.AllowedTools...) || has(s.SecretKeys...) || has(s.Users...) ||
			hasPairs(s.Env) || hasPairs(s.Headers) || hasPairs(s.ToolExposure) || (s.OAuth != nil &&
			(has(s.OAuth.ClientID, s.OAuth.AuthServerMetadataURL) || has(s.OAuth.Scopes...))) {
			return fmt.Errorf("%s: %w", s.Path(), ErrPlaceholder)
		}
	}
	for i := range req.Skills {
		sk := &req.Skills[i]
		if has(sk.Name, sk.Description, sk.Instructions) {
			return fmt.Errorf("skills[%d]: %w", sk.Index, ErrPlaceholder)
		}
		for _, r := range sk.Resources {
			if has(r.RelPath, r.Content) {
				return fmt.Errorf("skills[%d]: %w", sk.Index, ErrPlaceholder)
			}
		}
	}
	return nil
}
