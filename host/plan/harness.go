package plan

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
	"github.com/loadout-dev/loadout/sdk/profile/readback"
	"github.com/loadout-dev/loadout/sdk/valuesyntax"
)

// pathRule allows one path (pattern without "**"), everything under a directory ("dir/**") or
// everything ("**") under a root.
type pathRule struct {
	root, pattern string
}

func (r pathRule) match(root, p string) bool {
	if r.root != root {
		return false
	}
	switch {
	case r.pattern == "**":
		return true
	case strings.HasSuffix(r.pattern, "/**"):
		return strings.HasPrefix(p, strings.TrimSuffix(r.pattern, "**"))
	}
	return p == r.pattern
}

// configFile is where a built-in harness's MCP configuration lives.
type configFile struct {
	root, path, format string
}

// harness holds what Check knows about one harness, compiled from its Profile: the paths it
// may write, its config file, what each server key means, and its argument rules. The config is
// read back through the profile itself (sdk/profile/readback).
type harness struct {
	// prompt spells tools in the prompt; nil: by their names.
	prompt *ProfilePrompt
	// hiddenDirs are the hidden first segments a plan may write under the config root.
	hiddenDirs map[string]bool
	paths      []pathRule
	config     configFile
	serverKeys map[string]string // key -> meaning (ServerKeyMeanings)
	serversKey string
	typed      bool // the config has a type key per server
	// httpNeedsType: an http server must carry its type key.
	httpNeedsType bool
	// timeoutUnit is the unit of the keys meaning timeout ("s" or "ms"); "" when the profile
	// does not say, and a rendered timeout is then only checked to be positive.
	timeoutUnit string
	// timeoutMin and timeoutMax bound the timeouts the harness honours, in timeoutUnit (0: no
	// bound): the only values a vetted timeout may be adjusted to.
	timeoutMin, timeoutMax float64
	// toolsInArgs: tool restrictions travel as tool rules in the args, not in the config;
	// exposureTools: as exposure hidden plus the exposed tools; requireAllowList: a restricted
	// server must carry its allowTools key.
	toolsInArgs, exposureTools, requireAllowList bool
	// args and env are exactly what a plugin may return on the harness's command line and in
	// its environment (argsenv.go); builtinTools are the harness's own tools, which an
	// --allowedTools list may name besides the vetted servers' rules.
	args         []argRule
	env          []envRule
	builtinTools []string
	// syntax is how the harness expands its config's strings (valueSyntax); a literal one
	// expands nothing.
	syntax *valuesyntax.Syntax
	// argPasses and envPasses count its passes over a stdio server's command, args and cwd,
	// and over an env value.
	argPasses, envPasses int
	// literal spells a stdio server's command, args and cwd so that the harness passes them on
	// unchanged (Claude expands ${NAME} in them).
	literal func(string) string
	// value returns what the harness makes of an env value of its config (Claude expands
	// ${NAME}, Pi $NAME and a leading "!"), and false when it would not give a literal.
	value func(string) (string, bool)
	// header is value for a header value, url for an http server's url (each position is
	// expanded as many times as the profile's passes say).
	header, url func(string) (string, bool)
	// readLiteral reverses literal: what the harness makes of a string literal wrote (a
	// description), and false when it is not a spelling literal produces.
	readLiteral func(string) (string, bool)
	// spellEnvSecret and spellHeaderSecret spell a secret value of an env or header value for
	// the config file so that the harness reads it back unchanged (materialize applies them
	// when it substitutes the secret); nil: no spelling.
	spellEnvSecret, spellHeaderSecret func(string) string
	// skills is where the harness installs skills (skills.go); nil: it has none.
	skills *skillsLayout
	// spawn is how the harness's renderer wraps a stdio server in env -i (docs/SPAWN-ENV.md).
	spawn *spawnStyle
}

func setOf(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// checkConfig reads the harness's config file back through the profile (sdk/profile/readback)
// and compares it with the vetted request.
func (c *checker) checkConfig(p *abi.Plan) {
	h := c.h
	cf := h.config
	name := cf.root + ":" + cf.path
	var file *abi.File
	for i := range p.Files {
		if p.Files[i].Root == cf.root && p.Files[i].Path == cf.path {
			file = &p.Files[i]
			break
		}
	}
	var config readback.Config
	if file != nil {
		if file.Format != cf.format {
			c.add(name, "format", RuleConfigMissing, "format %q, want %s", truncate(file.Format, 16), cf.format)
			return
		}
		if len(file.Content) > c.lim.MaxFileBytes {
			return
		}
		rd := readback.Reader{Passthrough: func(s *rendered, names []string) []readback.Violation {
			return c.checkEnvVars(s.Loc, s.ID, names)
		}}
		var vs []readback.Violation
		var ok bool
		config, vs, ok = rd.Read(c.in.Profile.Profile, file.Content)
		c.addRead(name, vs)
		if !ok {
			return // a parse error is reported by checkContent
		}
	}
	for _, l := range config.Stray {
		for _, o := range Scan(l.S) {
			if o.Kind == KindSecret {
				c.add(name, l.Field, RuleSecretPlacement, "secret placeholder %s outside any server", o.Text)
			}
		}
	}
	c.compareServers(name, p.Warnings, config.Servers)
}

// rendered is one server entry read back from a harness config.
type rendered = readback.Server

// addRead adds the violations of the profile's layout the reader found in file name.
func (c *checker) addRead(name string, vs []readback.Violation) {
	for _, v := range vs {
		c.vs = append(c.vs, &Violation{File: name, Field: v.Loc, Rule: v.Rule, Msg: v.Msg})
	}
}

// checkEnvVars allows pass-through variable names (a key meaning envPassthrough) only for the
// server's vetted host env.
func (c *checker) checkEnvVars(loc, id string, list []string) []readback.Violation {
	v, ok := c.vetted(id)
	if !ok {
		return nil
	}
	var out []readback.Violation
	for _, n := range list {
		if !slices.ContainsFunc(v.HostEnv, func(p abi.Pair) bool { return p.Name == n }) {
			out = append(out, readback.Violation{Loc: loc, Rule: RuleServerMismatch,
				Msg: fmt.Sprintf("passes through %q, which is not in the server's vetted host env", truncate(n, 64))})
		}
	}
	return out
}

func (c *checker) vetted(id string) (abi.Server, bool) {
	for _, s := range c.in.Request.Servers {
		if s.ID == id {
			return s, true
		}
	}
	return abi.Server{}, false
}

// compareServers checks the set, order and content of the rendered servers against the vetted
// request, and that every secret placeholder sits exactly where the vetted request put it.
func (c *checker) compareServers(name string, warnings []abi.Warning, rs []rendered) {
	index := map[string]int{}
	for i, s := range c.in.Request.Servers {
		if _, dup := index[s.ID]; !dup {
			index[s.ID] = i
		}
	}
	warned := map[string]bool{}
	c.warnCodes = map[string]map[string]bool{}
	for _, w := range warnings {
		if w.Server != "" {
			warned[w.Server] = true
			if c.warnCodes[w.Server] == nil {
				c.warnCodes[w.Server] = map[string]bool{}
			}
			c.warnCodes[w.Server][w.Code] = true
		}
	}
	c.warned = warned
	present := map[string]bool{}
	last := -1
	c.renderedIDs = []string{}
	folded := map[string]string{}
	for _, r := range rs {
		c.renderedIDs = append(c.renderedIDs, r.ID)
		if cf := &c.in.Profile.Config; cf.NamesFold != "" {
			if other, dup := folded[cf.FoldName(r.ID)]; dup {
				c.add(name, r.Loc, RuleServerSet, "harness %q reads server %q as %q, rendered before it (config.namesFold %q)",
					c.in.Manifest.Harness, truncate(r.ID, 64), truncate(other, 64), cf.NamesFold)
			} else {
				folded[cf.FoldName(r.ID)] = r.ID
			}
		}
		i, ok := index[r.ID]
		if !ok {
			c.add(name, r.Loc, RuleServerSet, "server %q is not in the vetted request", truncate(r.ID, 64))
			c.secretPlacement(name, r, nil)
			continue
		}
		present[r.ID] = true
		c.offered[r.ID] = true
		if i < last {
			c.add(name, r.Loc, RuleServerSet, "server %q is out of request order", r.ID)
		}
		last = max(last, i)
		v := c.in.Request.Servers[i]
		c.compareServer(name, &r, v)
		if c.h.toolsInArgs && v.ToolsRestricted && !c.allowedToolsFlag {
			c.add("", "args", RuleToolRestrictions, "server %q restricts its tools but there is no %s", v.ID, c.in.Profile.ToolsFlag())
		}
		c.secretPlacement(name, r, &v)
	}
	for _, v := range c.in.Request.Servers {
		if !present[v.ID] && v.Enabled && !warned[v.ID] {
			c.add(name, c.h.serversKey, RuleServerSet, "vetted server %q is missing and no warning names it", v.ID)
		}
	}
}

func pairValue(ps []abi.Pair, name string) (string, bool) {
	for i := len(ps) - 1; i >= 0; i-- {
		if ps[i].Name == name {
			return ps[i].Value, true
		}
	}
	return "", false
}

// compareServer compares one rendered server with its vetted definition. A stdio server of a
// harness with a spawn style must be rendered through the env wrapper (checkSpawn, which
// relocates r.Strings); one of a harness without may only be rendered verbatim.
func (c *checker) compareServer(name string, r *rendered, v abi.Server) {
	mismatch := func(field, format string, args ...any) {
		c.add(name, r.Loc+"."+c.h.keyOf(field), RuleServerMismatch, format, args...)
	}
	if r.Enabled != nil && *r.Enabled != v.Enabled {
		mismatch("enabled", "enabled is %t, the vetted server's is %t", *r.Enabled, v.Enabled)
	}
	if !v.Enabled && r.Enabled == nil {
		mismatch("enabled", "the vetted server is disabled but is rendered without %s set to false", c.h.keyOf("enabled"))
	}
	switch v.Transport {
	case abi.TransportStdio:
		if c.h.typed && r.Type != nil && *r.Type != "stdio" {
			mismatch("type", "type %q, want stdio", truncate(*r.Type, 32))
		}
		if r.URL != nil || r.HasHeaders {
			mismatch("url", "a stdio server may not have a url or headers")
		}
		command, args := c.h.literal(v.Command), make([]string, len(v.Args))
		for i, a := range v.Args {
			args[i] = c.h.literal(a)
		}
		if c.h.spawn != nil {
			// The harness hands its own environment (API keys included) to a server it starts
			// directly: the env wrapper is the only accepted launch (docs/SPAWN-ENV.md).
			if r.Command == nil || *r.Command != spawnCommand {
				c.add(name, r.Loc+".command", RuleSpawnWrapper, "a stdio server of harness %q must be launched through %s -i (the harness passes its environment to the servers it starts)", c.in.Manifest.Harness, spawnCommand)
				break
			}
			c.checkSpawn(name, r, v)
			if r.Cwd != nil && (v.Cwd == "" || *r.Cwd != v.Cwd) {
				mismatch("cwd", "cwd differs from the vetted one")
			}
			break
		}
		if r.Command == nil || *r.Command != command {
			mismatch("command", "command differs from the vetted one")
		}
		if !slices.Equal(r.Args, args) {
			mismatch("args", "args differ from the vetted ones")
		}
		for _, p := range r.Env {
			want, ok := pairValue(v.Env, p.Name)
			if !ok {
				want, ok = pairValue(v.HostEnv, p.Name)
			}
			got, literal := c.h.value(p.Value)
			switch {
			case !ok:
				mismatch("env", "env %q is not in the vetted server", truncate(p.Name, 64))
			case !literal:
				mismatch("env", "env %q holds what harness %q would expand or run", p.Name, c.in.Manifest.Harness)
			case got != want:
				mismatch("env", "env %q differs from the vetted value", p.Name)
			}
		}
		for _, p := range v.Env {
			if _, ok := pairValue(r.Env, p.Name); !ok {
				mismatch("env", "vetted env %q is missing", p.Name)
			}
		}
		if r.Cwd != nil && (v.Cwd == "" || *r.Cwd != v.Cwd) {
			mismatch("cwd", "cwd differs from the vetted one")
		}
	case abi.TransportHTTP:
		if c.h.typed && r.Type == nil && c.h.httpNeedsType {
			mismatch("type", "an http server needs type \"http\"")
		}
		if r.Type != nil && *r.Type != "http" && *r.Type != "streamable-http" {
			mismatch("type", "type %q, want http", truncate(*r.Type, 32))
		}
		if r.Command != nil || r.HasArgs || r.HasEnv || r.Cwd != nil {
			mismatch("command", "an http server may not have a command, args, env or cwd")
		}
		if r.URL == nil {
			mismatch("url", "url is missing")
		} else if u, ok := c.h.url(*r.URL); !ok || u != v.URL {
			mismatch("url", "url differs from the vetted one")
		}
		for _, p := range r.Headers {
			want, ok := pairValue(v.Headers, p.Name)
			got, literal := c.h.header(p.Value)
			switch {
			case !ok:
				mismatch("headers", "header %q is not in the vetted server", truncate(p.Name, 64))
			case !literal:
				mismatch("headers", "header %q holds what harness %q would expand or run", p.Name, c.in.Manifest.Harness)
			case got != want:
				mismatch("headers", "header %q differs from the vetted value", p.Name)
			}
		}
		for _, p := range v.Headers {
			if _, ok := pairValue(r.Headers, p.Name); !ok {
				mismatch("headers", "vetted header %q is missing", p.Name)
			}
		}
	default:
		mismatch("transport", "transport %q cannot be rendered", v.Transport)
	}
	c.compareOAuth(name, r, v)
	// The description reaches the model: it may be left out, never changed.
	if r.Description != nil {
		if got, ok := c.h.readLiteral(*r.Description); !ok || got != v.Description {
			mismatch("description", "description differs from the vetted one")
		}
	}
	c.compareTimeout(name, *r, v)
	c.compareTools(name, *r, v)
}

// compareTimeout checks a rendered timeout against the vetted one, in the profile's unit
// (milliseconds rounded to the nearest one, at least 1). The one difference allowed is the
// vetted timeout brought to the nearest bound of the profile's range (timeoutMin, timeoutMax)
// when it lies outside, and only with a timeout_adjusted warning naming the server: no other
// warning excuses a difference, and no warning excuses a timeout left out or invented.
func (c *checker) compareTimeout(name string, r rendered, v abi.Server) {
	if c.h.timeoutUnit == "" {
		return
	}
	if v.Timeout <= 0 {
		if len(r.Timeouts) > 0 {
			c.add(name, r.Loc, RuleServerMismatch, "a timeout is rendered; the vetted server sets none")
		}
		return
	}
	want := v.Timeout
	if c.h.timeoutUnit == "ms" {
		want = max(math.Round(want*1000), 1)
	}
	adjusted := want
	if c.h.timeoutMin > 0 {
		adjusted = max(adjusted, c.h.timeoutMin)
	}
	if c.h.timeoutMax > 0 {
		adjusted = min(adjusted, c.h.timeoutMax)
	}
	switch {
	case len(r.Timeouts) != 1:
		c.add(name, r.Loc, RuleServerMismatch, "the timeout is rendered %d times, want once: %v %s", len(r.Timeouts), want, c.h.timeoutUnit)
	case r.Timeouts[0] == want:
	case r.Timeouts[0] != adjusted && adjusted == want:
		c.add(name, r.Loc, RuleServerMismatch, "the timeout is %v, the vetted one is %v %s", r.Timeouts[0], want, c.h.timeoutUnit)
	case r.Timeouts[0] != adjusted:
		c.add(name, r.Loc, RuleServerMismatch, "the timeout is %v, the vetted one is %v %s, which the profile's range allows to be adjusted to %v only", r.Timeouts[0], want, c.h.timeoutUnit, adjusted)
	case !c.warnCodes[v.ID][abi.WarnTimeoutAdjusted]:
		c.add(name, r.Loc, RuleServerMismatch, "the timeout is %v, the vetted one is %v %s, and no %s warning names the server", r.Timeouts[0], want, c.h.timeoutUnit, abi.WarnTimeoutAdjusted)
	}
}

// compareTools checks the tool restriction a config expresses (an allow list, or exposure
// hidden with the exposed tools; a harness whose tool rules travel in its args has neither):
// a restricted server may expose only its vetted allowedTools.
func (c *checker) compareTools(name string, r rendered, v abi.Server) {
	if r.HasAllowTools {
		for _, t := range r.AllowTools {
			if v.ToolsRestricted && !slices.Contains(c.spellAll(v.AllowedTools), t) {
				c.add(name, r.Loc+"."+c.h.keyOf("allowTools"), RuleToolRestrictions, "tool %q is not in the vetted allowedTools", truncate(t, 64))
			}
		}
	}
	if v.ToolsRestricted && !r.HasAllowTools && c.h.hasMeaning("allowTools") {
		switch {
		case c.h.requireAllowList:
			c.add(name, r.Loc, RuleToolRestrictions, "the vetted server restricts its tools but its tool allow list is missing")
		case !c.warned[v.ID]:
			// The profile lets a renderer leave the restriction to the prompt, but never
			// silently: the loss must reach the user as a warning naming the server.
			c.add(name, r.Loc, RuleToolRestrictions, "the vetted server restricts its tools but its tool allow list is missing and no warning names the server")
		}
	}
	c.compareDenied(name, r, v)
	if c.h.hasMeaning("toolExposure") {
		for _, p := range r.ToolExposure {
			if !validExposure(p.Value) {
				c.add(name, r.Loc+"."+c.h.keyOf("toolExposure"), RuleServerMismatch, "exposure %q of %q is not valid", truncate(p.Value, 32), truncate(p.Name, 64))
			}
		}
		if r.Exposure != nil && !validExposure(*r.Exposure) {
			c.add(name, r.Loc+"."+c.h.keyOf("exposure"), RuleServerMismatch, "exposure %q is not valid", truncate(*r.Exposure, 32))
		}
		if !v.ToolsRestricted && c.h.exposureTools {
			c.compareExposure(name, r, v)
		}
		if v.ToolsRestricted && c.h.exposureTools {
			if r.Exposure == nil || *r.Exposure != "hidden" {
				c.add(name, r.Loc+"."+c.h.keyOf("exposure"), RuleToolRestrictions, "the vetted server restricts its tools: exposure must be hidden")
			}
			for _, p := range r.ToolExposure {
				switch {
				case p.Value == "hidden":
				case !slices.Contains(v.AllowedTools, p.Name):
					c.add(name, r.Loc+"."+c.h.keyOf("toolExposure"), RuleToolRestrictions, "tool %q is exposed but not in the vetted allowedTools", truncate(p.Name, 64))
				case vettedExposure(v, p.Name) == "hidden":
					c.add(name, r.Loc+"."+c.h.keyOf("toolExposure"), RuleToolRestrictions, "tool %q is exposed but the vetted toolExposure hides it", truncate(p.Name, 64))
				}
			}
		}
	}
}

// compareDenied checks that the server denies exactly the tools the vetted server does (the
// ones its exposure hides on a harness without exposure, host/exposure), in the harness's deny
// list: a config key meaning denyTools, whose entries must read back as the vetted names, or
// the rules of the deny flag. A harness without either cannot hide a tool.
func (c *checker) compareDenied(name string, r rendered, v abi.Server) {
	switch {
	case c.h.hasMeaning("denyTools"):
		got := make([]string, 0, len(r.DenyTools))
		for _, t := range r.DenyTools {
			lit, ok := c.in.Profile.ReadLiteral(t)
			if !ok {
				c.add(name, r.Loc+"."+c.h.keyOf("denyTools"), RuleToolRestrictions, "deny entry %q is not a spelling harness %q reads back as a tool name", truncate(t, 64), c.in.Manifest.Harness)
				continue
			}
			got = append(got, lit)
		}
		if want := c.spellAll(v.DeniedTools); !slices.Equal(got, want) && (len(got) > 0 || len(want) > 0) {
			c.add(name, r.Loc+"."+c.h.keyOf("denyTools"), RuleToolRestrictions, "the tool deny list is %q; the vetted server denies exactly %q", truncateAll(got), want)
		}
	case c.in.Profile.DenyFlag() != "":
		flag := c.in.Profile.DenyFlag()
		for _, t := range v.DeniedTools {
			if !c.denyRules[c.in.Profile.ToolRule(v.ID, t)] {
				c.add("", "args", RuleToolRestrictions, "server %q denies tool %q but %s does not name it", v.ID, truncate(t, 64), flag)
			}
		}
	case len(v.DeniedTools) > 0:
		c.add(name, r.Loc, RuleToolRestrictions, "the vetted server denies tools %q but harness %q has no deny list", v.DeniedTools, c.in.Manifest.Harness)
	}
}

// compareExposure checks the exposure of a server the request does not restrict, on a harness
// that renders exposure itself: the same server exposure (none rendered means the harness's
// default, allowed only when the request gives none) and exactly the same tool entries.
func (c *checker) compareExposure(name string, r rendered, v abi.Server) {
	got := ""
	if r.Exposure != nil {
		got = canonicalExposure(*r.Exposure)
	}
	if got != canonicalExposure(v.Exposure) {
		c.add(name, r.Loc+"."+c.h.keyOf("exposure"), RuleToolRestrictions, "exposure %q differs from the vetted %q", truncate(got, 32), v.Exposure)
	}
	want := make(map[string]string, len(v.ToolExposure))
	for _, p := range v.ToolExposure {
		want[p.Name] = canonicalExposure(p.Value)
	}
	same := len(r.ToolExposure) == len(want)
	for i := 0; same && i < len(r.ToolExposure); i++ {
		w, ok := want[r.ToolExposure[i].Name]
		same = ok && canonicalExposure(r.ToolExposure[i].Value) == w
	}
	if !same {
		c.add(name, r.Loc+"."+c.h.keyOf("toolExposure"), RuleToolRestrictions, "toolExposure differs from the vetted server's")
	}
}

// vettedExposure is the exposure the vetted server gives tool: its exact toolExposure entry,
// else the first matching pattern, else the server's exposure.
func vettedExposure(v abi.Server, tool string) string {
	if e, ok := format.ToolExposure(v.ToolExposure, tool); ok {
		return e
	}
	return v.Exposure
}

// canonicalExposure maps the alias codemode-deferred to codemode.
func canonicalExposure(s string) string {
	if s == "codemode-deferred" {
		return "codemode"
	}
	return s
}

func truncateAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = truncate(s, 64)
	}
	return out
}

func validExposure(s string) bool {
	switch s {
	case "direct", "deferred", "codemode", "codemode-deferred", "hidden":
		return true
	}
	return false
}

// secretPlacement reports every secret placeholder in a rendered server that is not at the
// server, field and key the vetted request gave it (v nil: the server was never vetted).
func (c *checker) secretPlacement(name string, r rendered, v *abi.Server) {
	for _, l := range r.Strings {
		for _, o := range Scan(l.S) {
			if o.Kind != KindSecret {
				continue
			}
			uses, known := c.secrets[o.Text]
			if !known {
				continue // reported as an unknown placeholder
			}
			// A value two servers share has one placeholder and one use per place.
			s := uses[0]
			placed := false
			for _, u := range uses {
				if v != nil && u.Server == r.ID && u.Field == l.Field && u.Key == l.Key && l.S != l.Key {
					placed = true
				}
				if u.Server == r.ID {
					s = u
				}
			}
			if !placed {
				where := l.Field
				if l.Key != "" {
					where += " " + strconv.Quote(l.Key)
				}
				c.add(name, r.Loc, RuleSecretPlacement, "secret placeholder %s is at server %q %s; the vetted request put it at server %q %s %q",
					o.Text, truncate(r.ID, 64), where, s.Server, s.Field, s.Key)
			}
		}
	}
}
