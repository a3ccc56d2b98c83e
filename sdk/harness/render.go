// Package harness is the SDK's profile-driven renderer: it renders a vetted request for the
// harness a profile describes (sdk/profile), so that a plugin for a CLI with a JSON or TOML MCP
// config is its profile.yaml plus the few functions for what the profile cannot state. It
// writes what the host then checks through the same profile:
//
//   - the config file (config.root, config.path): in JSON, config.pinned first, in the
//     profile's order, then the servers object under config.servers; in TOML one table per
//     server; servers in request order, each server's keys in the order serverKeys lists them.
//     A stdio server is launched through the env -i wrapper (format.SpawnServer, with the
//     profile's spawn style) with its cwd as env -C unless a key means cwd; an http server gets
//     the key meaning url and the headers, each string spelled for the passes the profile
//     counts at its position; then description, timeout (in timeoutUnit, clamped to
//     timeoutMin..timeoutMax with a timeout_adjusted warning), the allow list of a restricted
//     server, the deny list, and OAuth through oauthKeys (scopes and metadata URL as
//     oauthScopes and oauthMetadataUrls say) or the flat keys meaning oauthClientId and
//     oauthScopes. A disabled server is written with the key meaning enabled, or left out when
//     there is none; of two servers whose names fold to one (namesFold) the later is left out.
//   - the args the profile requires, in its order, with the values it pins: a servers arg
//     followed by the ids the config holds, a tools arg by the run's built-in tools and the
//     offered servers' rules (tools.rules) when one is restricted or a built-in tool is
//     pre-approved, a denyTools arg by the rules of the tools the servers deny, when any;
//   - the env the profile lists, an isolated entry only in an isolated run, an optional one
//     only when the config refers to it;
//   - the skills under skills.dir; with skills.folds in an ambient-auth run, and with
//     skills.foldsAlways in every run, their resources under the checkout's context directory
//     and their instructions in the prompt; and the prompt naming each enabled server the config
//     holds.
//
// A Renderer is immutable once made and safe for concurrent use; Render is pure and
// deterministic.
package harness

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
	"github.com/loadout-dev/loadout/sdk/profile"
)

// Renderer renders for the harness its profile describes.
type Renderer struct {
	// Manifest is the plugin's manifest; its harness must be the profile's.
	Manifest abi.Manifest
	// Profile is the plugin's own profile.yaml, parsed.
	Profile *profile.Profile
	// Name is the CLI's name in warnings ("Gemini CLI").
	Name string
	// ToolName says why a tool name cannot be written into the allow list ("" when it can);
	// nil: every name can. Such a tool is left out of the list, with a warning.
	ToolName func(tool string) (why string)
	// SpellToolLists: the CLI expands the entries of its deny list like its other strings, so
	// each is spelled as an arg is; otherwise they are written as they are.
	SpellToolLists bool
	// OAuth writes an http server's OAuth settings into its entry and returns the warning for
	// what it leaves out, for a CLI whose rules no profile key states; nil: the object under
	// the key meaning oauth with oauthKeys, or the flat keys, as the profile says.
	OAuth func(entry *format.Object, s abi.Server) *abi.Warning
	// Admit returns the warning that leaves s out, given the ids of the servers rendered before
	// it (a CLI that reads two names as one), or nil to render it; nil: every server.
	Admit func(s abi.Server, rendered []string) *abi.Warning
	// TypeStdio: a stdio server carries the key meaning type too ("stdio"), not only an http one.
	TypeStdio bool
	// Exposure writes a server's exposure and tool exposure for a CLI that has its own
	// (tools.in exposure) and returns its warnings; required with tools.in exposure.
	Exposure func(entry *format.Object, s abi.Server) []abi.Warning
	// SplitAliases: a stdio server's values holding "${" travel cut there into several
	// aliases (spawn env-alias-dollar) rather than spelled by the value syntax.
	SplitAliases bool
	// WarnDisabled: a disabled server that the config cannot hold (no key means enabled) is
	// named by a server_disabled warning; otherwise it is left out without one.
	WarnDisabled bool
	// MaxToolName is the longest tool rule the CLI keeps (0: no limit): a longer rule in an
	// args entry of value tools is still written, with a tool_name_too_long warning.
	MaxToolName int

	// order is the profile's server keys in its order, and keys the first key of each meaning
	// (set by New).
	order []string
	keys  map[string]string
	// spawn is how a stdio server is launched (the profile's spawn style, SplitAliases).
	spawn format.SpawnStyle
}

// New checks that r can render for its profile: a JSON or TOML config (no pinned keys in TOML),
// the manifest's harness, and no args of a kind the renderer does not write (tool rules).
func New(r Renderer) (*Renderer, error) {
	p := r.Profile
	switch {
	case p == nil:
		return nil, errors.New("render: no profile")
	case p.Harness != r.Manifest.Harness:
		return nil, fmt.Errorf("render: profile of %q for a plugin of %q", p.Harness, r.Manifest.Harness)
	case p.Config.Format != abi.FormatJSON && p.Config.Format != abi.FormatTOML:
		return nil, fmt.Errorf("render: config format %q: only json and toml configs are rendered from a profile", p.Config.Format)
	case p.Config.Format == abi.FormatTOML && len(p.Config.Pinned) > 0:
		return nil, errors.New("render: pinned keys in a toml config")
	case r.Name == "":
		return nil, errors.New("render: no CLI name for warnings")
	}
	for _, a := range p.Args {
		if (a.Value == "tools" || a.Value == "denyTools") && p.Tools.Rules == nil {
			return nil, fmt.Errorf("render: args %s of value %s need tools.rules", a.Flag, a.Value)
		}
	}
	r.spawn = p.SpawnStyle()
	r.spawn.Split = r.SplitAliases
	r.order = p.Config.ServerKeysOrder
	if len(r.order) == 0 {
		r.order = slices.Sorted(maps.Keys(p.Config.ServerKeys))
	}
	r.keys = map[string]string{}
	for _, k := range r.order {
		if m := p.Config.ServerKeys[k]; r.keys[m] == "" {
			r.keys[m] = k
		}
	}
	if p.Tools.In == "exposure" && r.Exposure == nil {
		return nil, errors.New("render: a profile with tools.in exposure needs an Exposure function")
	}
	// Every part of a server the renderer may write needs its key: none is ever written under "".
	need := map[string][]string{abi.TransportStdio: {"command", "args", "env"}, abi.TransportHTTP: {"url", "headers"}}
	for _, tr := range r.Manifest.Transports {
		for _, m := range need[tr] {
			if r.keyOf(m) == "" {
				return nil, fmt.Errorf("render: a %s server needs a key meaning %s in config.serverKeys", tr, m)
			}
		}
	}
	return &r, nil
}

// MustNew is New for a plugin's own profile; it panics on an error.
func MustNew(r Renderer) *Renderer {
	out, err := New(r)
	if err != nil {
		panic(err)
	}
	return out
}

// keyOf is the server key that means m (the first in the profile's order when several do), or
// "".
func (r *Renderer) keyOf(m string) string { return r.keys[m] }

// Render renders req.
func (r *Renderer) Render(req abi.Request) (abi.Plan, error) {
	p := r.Profile
	skills, skillWarns, err := format.PrepareSkills(req.Skills)
	if err != nil {
		return abi.Plan{}, err
	}
	plan := abi.Plan{Files: []abi.File{}, Args: []string{}, Env: []abi.Pair{}, GitExclude: []string{}, Warnings: []abi.Warning{}}
	servers := format.NewObject()
	var doc format.TOMLDocument
	toml := p.Config.Format == abi.FormatTOML
	secret := false
	var offered []abi.Server
	var ids []string
	folded := map[string]string{} // the name the CLI reads a rendered server as -> its id
	for _, s := range req.Servers {
		if !slices.Contains(r.Manifest.Transports, s.Transport) {
			plan.Warnings = append(plan.Warnings, abi.Warning{Code: abi.WarnTransportUnsupported, Server: s.ID,
				Message: fmt.Sprintf("transport %q is not supported by %s; the server is not rendered", s.Transport, r.Name)})
			continue
		}
		if !toml && format.IsJSPrototypeName(s.ID) {
			plan.Warnings = append(plan.Warnings, abi.Warning{Code: abi.WarnServerNameReserved, Server: s.ID,
				Message: fmt.Sprintf("server name %q is a JavaScript built-in name; the server is not rendered", s.ID)})
			continue
		}
		if !s.Enabled && r.keyOf("enabled") == "" {
			// The CLI has no per-server switch: a disabled server is left out.
			if r.WarnDisabled {
				plan.Warnings = append(plan.Warnings, abi.Warning{Code: abi.WarnServerDisabled, Server: s.ID,
					Message: fmt.Sprintf("%s has no way to configure a disabled server; the server is not rendered", r.Name)})
			}
			continue
		}
		if w := r.nameConflict(s.ID, folded); w != nil {
			plan.Warnings = append(plan.Warnings, *w)
			continue
		}
		if r.Admit != nil {
			if w := r.Admit(s, ids); w != nil {
				plan.Warnings = append(plan.Warnings, *w)
				continue
			}
		}
		entry, isSecret, tools, warns, ok := r.server(s)
		plan.Warnings = append(plan.Warnings, warns...)
		if !ok {
			continue
		}
		if toml {
			doc.AppendTable(entry, p.Config.Servers, s.ID)
		} else {
			servers.Set(s.ID, entry)
		}
		ids = append(ids, s.ID)
		if f := p.Config.FoldName(s.ID); folded[f] == "" {
			folded[f] = s.ID
		}
		secret = secret || isSecret
		if s.Enabled {
			s.AllowedTools = tools
			offered = append(offered, s)
		}
	}
	var content []byte
	if toml {
		content, err = doc.Marshal()
	} else {
		top := format.NewObject()
		for _, pin := range p.PinnedInOrder() {
			top.Set(pin.Key, pin.Value)
		}
		content, err = format.MarshalJSON(top.Set(p.Config.Servers, servers))
	}
	if err != nil {
		return abi.Plan{}, fmt.Errorf("encode %s: %w", p.Config.Path, err)
	}
	plan.Files = append(plan.Files, format.ConfigFile(p.Config.Root, p.Config.Path, p.Config.Format, content, secret))
	for _, a := range p.Args {
		values, set := []string{}, a.Required
		switch a.Value {
		case "pinned":
			values = []string{a.Pinned}
		case "servers":
			values, set = ids, true
		case "tools":
			var warns []abi.Warning
			values, warns = r.allowRules(req.Run.BuiltinTools, offered)
			plan.Warnings = append(plan.Warnings, warns...)
			set = set || values != nil
		case "denyTools":
			values = r.denyRules(offered)
			set = set || len(values) > 0
		}
		if set {
			plan.Args = append(append(plan.Args, a.Flag), values...)
		}
	}
	for _, e := range p.Env {
		switch {
		case e.When == "isolated" && req.Run.AmbientAuth:
			continue
		case e.When == "optional" && !strings.Contains(string(content), "${"+e.Name):
			continue // set only where the config refers to it
		}
		plan.Env = append(plan.Env, abi.Pair{Name: e.Name, Value: e.Value})
	}
	var prompt strings.Builder
	prompt.WriteString(format.ServersPrompt(offered, p.PromptName()))
	plan.Warnings = append(plan.Warnings, skillWarns...)
	if p.Skills != nil {
		// A profile that folds skills folds them into the prompt and the checkout's context
		// directory: in every run (foldsAlways), or in an ambient-auth run (folds), where the
		// user's own config home is not written.
		fold := p.Skills.FoldsAlways || p.Skills.Folds && req.Run.AmbientAuth
		if err := format.PlaceSkills(&plan, &prompt, skills, fold, p.Skills.Dir); err != nil {
			return abi.Plan{}, err
		}
	}
	plan.Prompt = prompt.String()
	return plan, nil
}

// nameConflict is the warning that leaves out a server named id when the CLI reads the name as
// one of the servers rendered before it (config.namesFold), given the names those are read as.
func (r *Renderer) nameConflict(id string, folded map[string]string) *abi.Warning {
	cf := &r.Profile.Config
	other, ok := folded[cf.FoldName(id)]
	if cf.NamesFold == "" || !ok {
		return nil
	}
	chars := make([]string, 0, len(cf.NamesFold))
	for _, c := range cf.NamesFold {
		chars = append(chars, strconv.Quote(string(c)))
	}
	return &abi.Warning{Code: abi.WarnServerNameConflict, Server: id,
		Message: fmt.Sprintf("%s treats server names that differ only in %s as one: %q conflicts with %q; the server is not rendered",
			r.Name, strings.Join(chars, " and "), id, other)}
}

// allowRules are the values of an args entry of value tools: the run's built-in tools, then,
// when a server is restricted, the rule of every offered server (the server's own, or one per
// allowed tool), each once. nil when there is neither a restricted server nor a built-in
// tool: the flag is then left out. Restricting a server never pre-approves a built-in tool.
func (r *Renderer) allowRules(builtin []string, offered []abi.Server) ([]string, []abi.Warning) {
	if !slices.ContainsFunc(offered, func(s abi.Server) bool { return s.ToolsRestricted }) {
		if len(builtin) == 0 {
			return nil, nil
		}
		return slices.Clone(builtin), nil
	}
	rules := append([]string{}, builtin...)
	seen := map[string]bool{}
	for _, b := range builtin {
		seen[b] = true
	}
	var warns []abi.Warning
	for _, s := range offered {
		if !s.ToolsRestricted {
			rule := r.Profile.ServerRule(s.ID)
			seen[rule] = true
			rules = append(rules, rule)
			continue
		}
		for _, tool := range s.AllowedTools {
			rule := r.Profile.ToolRule(s.ID, tool)
			if seen[rule] {
				continue // another allowed tool the CLI names the same
			}
			seen[rule] = true
			if r.MaxToolName > 0 && len(rule) > r.MaxToolName {
				warns = append(warns, abi.Warning{Code: abi.WarnToolNameTooLong, Server: s.ID,
					Message: fmt.Sprintf("tool name %q has %d characters; %s drops tools whose name exceeds %d", rule, len(rule), r.Name, r.MaxToolName)})
			}
			rules = append(rules, rule)
		}
	}
	return rules, warns
}

// denyRules are the values of an args entry of value denyTools: the rule of every tool an
// offered server denies, each once, in server order.
func (r *Renderer) denyRules(offered []abi.Server) []string {
	var rules []string
	seen := map[string]bool{}
	for _, s := range offered {
		for _, t := range s.DeniedTools {
			if rule := r.Profile.ToolRule(s.ID, t); !seen[rule] {
				seen[rule] = true
				rules = append(rules, rule)
			}
		}
	}
	return rules
}

// server returns the entry of s, whether it holds a secret, the tools it allows, its warnings,
// and false when it cannot be rendered.
func (r *Renderer) server(s abi.Server) (*format.Object, bool, []string, []abi.Warning, bool) {
	p := r.Profile
	var warns []abi.Warning
	warn := func(code, msg string) { warns = append(warns, abi.Warning{Code: code, Server: s.ID, Message: msg}) }
	spell := p.Spell
	entry := format.NewObject()
	secret := false
	if s.Transport == abi.TransportStdio {
		cwd := s.Cwd
		if r.keyOf("cwd") != "" {
			cwd = ""
		}
		sp, spawnWarns, ok := format.SpawnServer(r.spawn, s, cwd)
		if !ok {
			return nil, false, nil, spawnWarns, false
		}
		if k := r.keyOf("type"); k != "" && r.TypeStdio {
			entry.Set(k, "stdio")
		}
		warns = append(warns, spawnWarns...)
		entry.Set(r.keyOf("command"), sp.Command).Set(r.keyOf("args"), sp.Args)
		env, secretEnv := sp.EnvObject()
		secret = secret || secretEnv
		if env.Len() > 0 {
			entry.Set(r.keyOf("env"), env)
		}
		if k := r.keyOf("cwd"); k != "" && s.Cwd != "" {
			entry.Set(k, spell(profile.PosArgs, s.Cwd))
		}
	} else {
		if k := r.keyOf("type"); k != "" {
			entry.Set(k, "http")
		}
		entry.Set(r.keyOf("url"), spell(profile.PosURL, s.URL))
		headers, secretHeader := format.HeaderObject(s.Headers, func(v string) string { return spell(profile.PosHeaders, v) })
		secret = secret || secretHeader
		if headers.Len() > 0 {
			entry.Set(r.keyOf("headers"), headers)
		}
	}
	if k := r.keyOf("enabled"); k != "" && !s.Enabled {
		entry.Set(k, false)
	}
	if k := r.keyOf("description"); k != "" && s.Description != "" {
		entry.Set(k, spell(profile.PosArgs, s.Description))
	}
	if k := r.keyOf("timeout"); k != "" {
		r.timeout(entry, k, s, warn)
	}
	var tools []string
	if k := r.keyOf("allowTools"); k != "" && s.ToolsRestricted {
		include := []string{}
		for _, t := range s.AllowedTools {
			if r.ToolName != nil {
				if why := r.ToolName(t); why != "" {
					warn(abi.WarnToolNameUnsupported, fmt.Sprintf("tool name %q %s; the tool is not offered", t, why))
					continue
				}
			}
			include = append(include, t)
		}
		entry.Set(k, include)
		tools = include
	} else if s.ToolsRestricted {
		tools = s.AllowedTools
	}
	if r.Exposure != nil {
		warns = append(warns, r.Exposure(entry, s)...)
	}
	if k := r.keyOf("denyTools"); k != "" && len(s.DeniedTools) > 0 {
		exclude := make([]string, len(s.DeniedTools))
		for i, t := range s.DeniedTools {
			exclude[i] = t
			if r.SpellToolLists {
				exclude[i] = spell(profile.PosArgs, t)
			}
		}
		entry.Set(k, exclude)
	}
	if s.Transport == abi.TransportHTTP && s.OAuth != nil {
		if w := r.oauth(entry, s); w != nil {
			warns = append(warns, *w)
		}
	}
	if w := format.LifecycleWarning(s, r.Name); w != nil {
		warns = append(warns, *w)
	}
	return r.inProfileOrder(entry), secret, tools, warns, true
}

// inProfileOrder is entry with its keys in the order the profile lists them (serverKeys).
func (r *Renderer) inProfileOrder(entry *format.Object) *format.Object {
	out := format.NewObject()
	for _, k := range r.order {
		if v, ok := entry.Get(k); ok {
			out.Set(k, v)
		}
	}
	return out
}

// timeout writes s's timeout under key in the profile's unit, at the nearest bound of its
// range (with a timeout_adjusted warning) when outside it.
func (r *Renderer) timeout(entry *format.Object, key string, s abi.Server, warn func(code, msg string)) {
	cf := r.Profile.Config
	if s.Timeout < 0 {
		warn(abi.WarnTimeoutAdjusted, fmt.Sprintf("timeout %gs is negative; the harness default is used", s.Timeout))
		return
	}
	if s.Timeout == 0 {
		return
	}
	scale, unit := 1.0, cf.TimeoutUnit
	if unit == "ms" {
		scale = 1000
	}
	v := s.Timeout * scale
	if unit == "ms" {
		v = max(math.Round(v), 1)
	}
	switch {
	case cf.TimeoutMax > 0 && v > cf.TimeoutMax:
		v = cf.TimeoutMax
		warn(abi.WarnTimeoutAdjusted, fmt.Sprintf("timeout %gs exceeds the largest timeout %s honours; rendered as %s%s", s.Timeout, r.Name, number(v), unit))
	case cf.TimeoutMin > 0 && v < cf.TimeoutMin:
		v = cf.TimeoutMin
		warn(abi.WarnTimeoutAdjusted, fmt.Sprintf("timeout %gs is below the smallest timeout %s honours; rendered as %s%s", s.Timeout, r.Name, number(v), unit))
	}
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		entry.Set(key, int64(v))
	} else {
		entry.Set(key, v)
	}
}

// metadataURLKinds names the metadata URLs a harness takes, by config.oauthMetadataUrls.
var metadataURLKinds = map[string]string{
	profile.OAuthMetadataHTTPS:         "only an https:// one",
	profile.OAuthMetadataHTTPSLoopback: "https, or http on localhost, 127.0.0.1 or [::1]",
}

func number(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// oauth writes s's OAuth settings: through r.OAuth, or the object under the key meaning oauth with the keys
// oauthKeys lists (the scopes as oauthScopes says, a metadata URL only of the kind
// oauthMetadataUrls takes), or the flat keys; whatever is not written is named by one warning.
func (r *Renderer) oauth(entry *format.Object, s abi.Server) *abi.Warning {
	if r.OAuth != nil {
		return r.OAuth(entry, s)
	}
	cf := &r.Profile.Config
	o := s.OAuth
	key := r.keyOf("oauth")
	keyOf := func(m string) string {
		for k, meaning := range r.Profile.Config.OAuthKeys {
			if meaning == m {
				return k
			}
		}
		return ""
	}
	obj := format.NewObject()
	var left []string
	// flat is the server key of its own a member may have instead (oauthClientId, oauthScopes).
	put := func(m, flat string, set bool, v any) {
		switch k := keyOf(m); {
		case !set:
		case key != "" && k != "":
			obj.Set(k, v)
		case flat != "" && r.keyOf(flat) != "":
			entry.Set(r.keyOf(flat), v)
		default:
			left = append(left, m)
		}
	}
	put("clientId", "oauthClientId", o.ClientID != "", o.ClientID)
	put("callbackPort", "", o.CallbackPort != 0, int64(o.CallbackPort))
	var scopes any = append([]string{}, o.Scopes...)
	if cf.OAuthScopes == profile.OAuthScopesString {
		scopes = strings.Join(o.Scopes, " ")
	}
	put("scopes", "oauthScopes", len(o.Scopes) > 0, scopes)
	if taken := cf.MetadataURLTaken(o.AuthServerMetadataURL); taken || o.AuthServerMetadataURL == "" {
		put("authServerMetadataUrl", "", o.AuthServerMetadataURL != "", o.AuthServerMetadataURL)
	} else {
		left = append(left, "authServerMetadataUrl ("+r.Name+" reads "+metadataURLKinds[cf.OAuthMetadataURLs]+")")
	}
	if obj.Len() > 0 {
		entry.Set(key, obj)
	}
	return format.OAuthWarning(s, r.Name, left)
}
