package policy

import (
	"path"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/loadout-dev/loadout/host/redact"
	"github.com/loadout-dev/loadout/host/spec"
)

// The input document (docs/POLICIES.md §1) is the parsed request, one object per server and
// skill, plus what Go reads out of a value by parsing it (a server's facts). It is built once
// per request with OPA's value constructors, so no JSON round trip is paid per decision.

// Harness names the harness the decision is for (the request's own, or the one the caller
// renders for); "" when none is chosen yet.
type inputOptions struct {
	harness string
	// mask replaces the values that are secrets (secretKeys entries, stored tokens, and the
	// entries of extra) by redact.Mask: for printing only, never for a decision.
	mask  bool
	extra map[secretKey]bool
}

type secretKey struct {
	server      int
	field, name string
}

// inputValue is the input document of req for a decision.
func inputValue(req *spec.Request, hostEnv []spec.Pair, harness string) ast.Value {
	return buildInput(req, hostEnv, inputOptions{harness: harness})
}

func buildInput(req *spec.Request, hostEnv []spec.Pair, opt inputOptions) ast.Value {
	harness := req.Harness
	if opt.harness != "" {
		harness = opt.harness
	}
	env := make([]*ast.Term, len(hostEnv))
	for i, p := range hostEnv {
		env[i] = ast.StringTerm(p.Name)
	}
	servers := make([]*ast.Term, len(req.Servers))
	for i := range req.Servers {
		servers[i] = ast.NewTerm(serverValue(req, i, opt))
	}
	skills := make([]*ast.Term, len(req.Skills))
	for k := range req.Skills {
		skills[k] = ast.NewTerm(skillValue(&req.Skills[k]))
	}
	return ast.NewObject(
		item("harness", ast.String(harness)),
		item("run", ast.NewObject(
			item("user", ast.String(req.Run.User)),
			item("hasUser", ast.Boolean(req.Run.HasUser)),
			item("groups", strings_(req.Run.Groups)),
			item("ambientAuth", ast.Boolean(req.Run.AmbientAuth)),
			item("container", ast.Boolean(req.Run.Container)),
			item("enabled", enabledValue(req.Run.Enabled)),
			item("builtinTools", strings_(req.Run.BuiltinTools)),
		)),
		item("hostEnv", ast.NewArray(env...)),
		item("servers", ast.NewArray(servers...)),
		item("skills", ast.NewArray(skills...)),
	)
}

func item(key string, v ast.Value) [2]*ast.Term {
	return ast.Item(ast.StringTerm(key), ast.NewTerm(v))
}

func serverValue(req *spec.Request, i int, opt inputOptions) ast.Value {
	s := &req.Servers[i]
	token := tokenFor(req, s.ID)
	secret := func(field, name string) bool {
		if !opt.mask || field == "" {
			return false
		}
		if opt.extra[secretKey{i, field, name}] {
			return true
		}
		for _, k := range s.SecretKeys {
			if k == name || (field == "headers" && strings.EqualFold(k, name)) {
				return true
			}
		}
		return false
	}
	pairs := func(field string, ps []spec.Pair) ast.Value {
		items := make([][2]*ast.Term, len(ps))
		for n, p := range ps {
			v := p.Value
			if v != "" && secret(field, p.Name) {
				v = redact.Mask
			}
			items[n] = item(p.Name, ast.String(v))
		}
		return ast.NewObject(items...)
	}
	shownToken := token
	if opt.mask && token != "" {
		shownToken = redact.Mask
	}
	var facts ast.Value = ast.NewObject()
	switch s.Transport {
	case "http":
		facts = ast.NewObject(item("url", parseURL(s.URL).value()))
		if s.OAuth != nil && s.OAuth.AuthServerMetadataURL != "" {
			facts = ast.NewObject(
				item("url", parseURL(s.URL).value()),
				item("oauthMetadataUrl", parseURL(s.OAuth.AuthServerMetadataURL).value()),
			)
		}
	case "stdio":
		facts = ast.NewObject(item("commandBase", ast.String(commandBase(s.Command))))
	}
	return ast.NewObject(
		item("index", ast.IntNumberTerm(s.Index).Value),
		item("source", ast.String(s.Source)),
		item("id", ast.String(s.ID)),
		item("transport", ast.String(s.Transport)),
		item("description", ast.String(s.Description)),
		item("enabled", ast.Boolean(s.Enabled)),
		item("timeout", ast.FloatNumberTerm(s.Timeout).Value),
		item("command", ast.String(s.Command)),
		item("args", strings_(s.Args)),
		item("env", pairs("env", s.Env)),
		item("cwd", ast.String(s.Cwd)),
		item("url", ast.String(s.URL)),
		item("headers", pairs("headers", s.Headers)),
		item("toolsDeclared", ast.Boolean(s.ToolsDeclared)),
		item("allowedTools", strings_(s.AllowedTools)),
		item("secretKeys", strings_(s.SecretKeys)),
		item("exposure", ast.String(s.Exposure)),
		item("toolExposure", pairs("", s.ToolExposure)),
		item("credentials", ast.String(s.Credentials)),
		item("sharedAuthority", ast.String(s.SharedAuthority)),
		item("hasUsers", ast.Boolean(s.HasUsers)),
		item("users", strings_(s.Users)),
		item("disabled", ast.Boolean(s.Disabled)),
		item("availability", ast.String(s.Availability)),
		item("scope", ast.String(s.Scope)),
		item("hasHarnesses", ast.Boolean(s.HasHarnesses)),
		item("harnesses", strings_(s.Harnesses)),
		item("hasToken", ast.Boolean(token != "")),
		item("token", ast.String(shownToken)),
		item("oauth", oauthValue(s.OAuth)),
		item("lifecycle", ast.String(s.Lifecycle)),
		item("idleTimeout", ast.FloatNumberTerm(s.IdleTimeout).Value),
		item("facts", facts),
	)
}

// oauthValue is a server's oauth member: null when the request sets none, else every member,
// an unset one as "", 0 or [].
func oauthValue(o *spec.OAuth) ast.Value {
	if o == nil {
		return ast.Null{}
	}
	return ast.NewObject(
		item("clientId", ast.String(o.ClientID)),
		item("callbackPort", ast.IntNumberTerm(o.CallbackPort).Value),
		item("scopes", strings_(o.Scopes)),
		item("authServerMetadataUrl", ast.String(o.AuthServerMetadataURL)),
	)
}

func skillValue(sk *spec.Skill) ast.Value {
	files := make([]*ast.Term, 0, len(sk.Resources)+1)
	files = append(files, ast.StringTerm("SKILL.md"))
	resources := make([]*ast.Term, len(sk.Resources))
	for n, r := range sk.Resources {
		files = append(files, ast.StringTerm(r.RelPath))
		resources[n] = ast.NewTerm(ast.NewObject(item("path", ast.String(r.RelPath)), item("content", ast.String(r.Content))))
	}
	return ast.NewObject(
		item("index", ast.IntNumberTerm(sk.Index).Value),
		item("name", ast.String(sk.Name)),
		item("description", ast.String(sk.Description)),
		item("instructions", ast.String(sk.Instructions)),
		item("files", ast.NewArray(files...)),
		item("resources", ast.NewArray(resources...)),
	)
}

// enabledValue is run.enabled as an object, server id → bool.
func enabledValue(m map[string]bool) ast.Value {
	items := make([][2]*ast.Term, 0, len(m))
	for id, on := range m {
		items = append(items, item(id, ast.Boolean(on)))
	}
	return ast.NewObject(items...)
}

// strings_ is ss as an array of strings (empty, never null, for a nil list).
func strings_(ss []string) ast.Value {
	ts := make([]*ast.Term, len(ss))
	for i, s := range ss {
		ts[i] = ast.StringTerm(s)
	}
	return ast.NewArray(ts...)
}

// commandBase is the last element of a command path ("/usr/bin/curl" is "curl"); "" for an
// empty command.
func commandBase(cmd string) string {
	if cmd == "" {
		return ""
	}
	return path.Base(cmd)
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

// InputDocument is the input document of req as JSON values, as `loadout policy input`
// prints it: every value a server's secretKeys name, every stored token and every entry the
// policy itself declares a secret is redact.Mask, as everywhere loadout shows a secret.
// harness overrides the request's own when not empty. The policy receives the values; this
// form is only for reading. Safe for concurrent use.
func (e *Engine) InputDocument(req *spec.Request, hostEnv []spec.Pair, harness string, declared []SecretRef) (any, error) {
	extra := make(map[secretKey]bool, len(declared))
	for _, r := range declared {
		extra[secretKey{r.Server, r.Field, r.Key}] = true
	}
	v := buildInput(req, hostEnv, inputOptions{harness: harness, mask: true, extra: extra})
	return ast.JSON(v)
}
