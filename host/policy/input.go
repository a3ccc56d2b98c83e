package policy

import (
	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/loadout-dev/loadout/host/spec"
)

// The policy input is built as an ast.Value directly: no JSON round trip per request. Field
// names are spec.Request's and Facts' JSON names, so the policy sees what json.Marshal(Input{...})
// produces, except that a nil list is sent as [] (TestInputMatchesJSON holds the two together).

// Input is the policy input document, {"request": ..., "facts": ...}. It is what
// `loadout policy eval` prints and what a policy author writes test inputs against.
type Input struct {
	Request *spec.Request `json:"request"`
	Facts   Facts         `json:"facts"`
}

func inputValue(req *spec.Request, f *Facts) ast.Value {
	return ast.NewObject(
		item("request", requestTerm(req)),
		item("facts", factsTerm(f)),
	)
}

// keyTerms holds one term per object key of the input, built once: keys cost no allocation
// per request. Input terms are never modified by evaluation, so sharing them is safe.
var keyTerms = func() map[string]*ast.Term {
	m := map[string]*ast.Term{}
	for _, k := range []string{
		"request", "facts", "harness", "run", "ambientAuth", "user", "hasUser", "skills", "mcpServers",
		"tokens", "index", "name", "description", "instructions", "resources", "relPath", "content",
		"value", "id", "transport", "command", "args", "env", "cwd", "url", "headers",
		"toolsDeclared", "allowedTools", "secretKeys", "enabled", "timeout", "exposure",
		"toolExposure", "credentials", "sharedAuthority", "users", "hasUsers", "servers", "http",
		"credentialed", "hostEnv", "flags", "baseMatch", "scheme", "baseHost", "urlHost",
		"loopback", "schemeAnywhere", "schemeLoopback", "key", "keyInvalid", "keyRefused",
		"nameInvalid", "valueInvalid", "userCredential", "tokenHeader", "secretNamed",
		"alwaysSecret", "valueEmpty", "tools", "nameDenied", "sharedAuthorityOK", "token",
	} {
		m[k] = ast.StringTerm(k)
	}
	return m
}()

func item(k string, v *ast.Term) [2]*ast.Term {
	t, ok := keyTerms[k]
	if !ok {
		t = ast.StringTerm(k)
	}
	return [2]*ast.Term{t, v}
}

func str(s string) *ast.Term { return ast.InternedTerm(s) }

func boolean(b bool) *ast.Term { return ast.InternedTerm(b) }

func num(n int) *ast.Term { return ast.InternedTerm(n) }

func strs(ss []string) *ast.Term {
	if len(ss) == 0 {
		return ast.InternedEmptyArray
	}
	ts := make([]*ast.Term, len(ss))
	for i, s := range ss {
		ts[i] = str(s)
	}
	return ast.ArrayTerm(ts...)
}

func pairs(ps []spec.Pair) *ast.Term {
	if len(ps) == 0 {
		return ast.InternedEmptyArray
	}
	ts := make([]*ast.Term, len(ps))
	for i, p := range ps {
		ts[i] = ast.ObjectTerm(item("name", str(p.Name)), item("value", str(p.Value)))
	}
	return ast.ArrayTerm(ts...)
}

func requestTerm(req *spec.Request) *ast.Term {
	skills := make([]*ast.Term, len(req.Skills))
	for i := range req.Skills {
		sk := &req.Skills[i]
		res := make([]*ast.Term, len(sk.Resources))
		for j, r := range sk.Resources {
			res[j] = ast.ObjectTerm(item("relPath", str(r.RelPath)), item("content", str(r.Content)))
		}
		skills[i] = ast.ObjectTerm(
			item("index", num(sk.Index)),
			item("name", str(sk.Name)),
			item("description", str(sk.Description)),
			item("instructions", str(sk.Instructions)),
			item("resources", ast.ArrayTerm(res...)),
		)
	}
	servers := make([]*ast.Term, len(req.Servers))
	for i := range req.Servers {
		servers[i] = serverTerm(&req.Servers[i])
	}
	return ast.ObjectTerm(
		item("harness", str(req.Harness)),
		item("run", ast.ObjectTerm(
			item("ambientAuth", boolean(req.Run.AmbientAuth)),
			item("user", str(req.Run.User)),
			item("hasUser", boolean(req.Run.HasUser)),
		)),
		item("skills", ast.ArrayTerm(skills...)),
		item("mcpServers", ast.ArrayTerm(servers...)),
		item("tokens", pairs(req.Tokens)),
	)
}

func serverTerm(s *spec.Server) *ast.Term {
	return ast.ObjectTerm(
		item("index", num(s.Index)),
		item("id", str(s.ID)),
		item("transport", str(s.Transport)),
		item("command", str(s.Command)),
		item("args", strs(s.Args)),
		item("env", pairs(s.Env)),
		item("cwd", str(s.Cwd)),
		item("url", str(s.URL)),
		item("headers", pairs(s.Headers)),
		item("toolsDeclared", boolean(s.ToolsDeclared)),
		item("allowedTools", strs(s.AllowedTools)),
		item("secretKeys", strs(s.SecretKeys)),
		item("description", str(s.Description)),
		item("enabled", boolean(s.Enabled)),
		item("timeout", ast.FloatNumberTerm(s.Timeout)),
		item("exposure", str(s.Exposure)),
		item("toolExposure", pairs(s.ToolExposure)),
		item("credentials", str(s.Credentials)),
		item("sharedAuthority", str(s.SharedAuthority)),
		item("users", strs(s.Users)),
		item("hasUsers", boolean(s.HasUsers)),
	)
}

func ints(ns []int) *ast.Term {
	if len(ns) == 0 {
		return ast.InternedEmptyArray
	}
	ts := make([]*ast.Term, len(ns))
	for i, n := range ns {
		ts[i] = num(n)
	}
	return ast.ArrayTerm(ts...)
}

// factsTerm builds the sparse facts object: false booleans, empty strings and lists are left
// out, as their JSON tags say.
func factsTerm(f *Facts) *ast.Term {
	servers := make([]*ast.Term, len(f.Servers))
	for i := range f.Servers {
		sf := &f.Servers[i]
		items := make([][2]*ast.Term, 0, 7)
		if len(sf.Flags) > 0 {
			items = append(items, item("flags", strs(sf.Flags)))
		}
		if u := sf.URL; u != nil {
			ui := make([][2]*ast.Term, 0, 7)
			if u.BaseMatch {
				ui = append(ui, item("baseMatch", boolean(true)))
			}
			if u.Scheme != "" {
				ui = append(ui, item("scheme", str(u.Scheme)))
			}
			if u.BaseHost != "" {
				ui = append(ui, item("baseHost", str(u.BaseHost)))
			}
			if u.URLHost != "" {
				ui = append(ui, item("urlHost", str(u.URLHost)))
			}
			if u.Loopback {
				ui = append(ui, item("loopback", boolean(true)))
			}
			if u.SchemeAnywhere {
				ui = append(ui, item("schemeAnywhere", boolean(true)))
			}
			if u.SchemeLoopback {
				ui = append(ui, item("schemeLoopback", boolean(true)))
			}
			items = append(items, item("url", ast.ObjectTerm(ui...)))
		}
		if len(sf.Env) > 0 {
			items = append(items, item("env", entriesTerm(sf.Env)))
		}
		if len(sf.Headers) > 0 {
			items = append(items, item("headers", entriesTerm(sf.Headers)))
		}
		if len(sf.Tools) > 0 {
			items = append(items, item("tools", entriesTerm(sf.Tools)))
		}
		if sf.SharedAuthorityOK {
			items = append(items, item("sharedAuthorityOK", boolean(true)))
		}
		if sf.Token {
			items = append(items, item("token", boolean(true)))
		}
		if len(items) == 0 {
			servers[i] = emptyObject
			continue
		}
		servers[i] = ast.ObjectTerm(items...)
	}
	skills := make([]*ast.Term, len(f.Skills))
	for k, sk := range f.Skills {
		skills[k] = emptyObject
		if sk.NameDenied {
			skills[k] = ast.ObjectTerm(item("nameDenied", boolean(true)))
		}
	}
	items := make([][2]*ast.Term, 0, 5)
	items = append(items, item("servers", ast.ArrayTerm(servers...)), item("skills", ast.ArrayTerm(skills...)))
	if len(f.HTTP) > 0 {
		items = append(items, item("http", ints(f.HTTP)))
	}
	if len(f.Credentialed) > 0 {
		items = append(items, item("credentialed", ints(f.Credentialed)))
	}
	if len(f.HostEnv) > 0 {
		items = append(items, item("hostEnv", strs(f.HostEnv)))
	}
	return ast.ObjectTerm(items...)
}

// emptyObject is the facts of a server or skill without any: shared, never modified.
var emptyObject = ast.ObjectTerm()

// entriesTerm builds the listed entry facts of one field.
func entriesTerm(es []EntryFacts) *ast.Term {
	ts := make([]*ast.Term, len(es))
	for j := range es {
		e := &es[j]
		ei := make([][2]*ast.Term, 1, 4)
		ei[0] = item("key", str(e.Key))
		for _, fact := range [...]struct {
			on   bool
			name string
		}{
			{e.KeyInvalid, "keyInvalid"}, {e.KeyRefused, "keyRefused"}, {e.NameInvalid, "nameInvalid"},
			{e.ValueInvalid, "valueInvalid"}, {e.UserCredential, "userCredential"}, {e.TokenHeader, "tokenHeader"},
			{e.SecretNamed, "secretNamed"}, {e.AlwaysSecret, "alwaysSecret"}, {e.ValueEmpty, "valueEmpty"},
		} {
			if fact.on {
				ei = append(ei, item(fact.name, boolean(true)))
			}
		}
		ts[j] = ast.ObjectTerm(ei...)
	}
	return ast.ArrayTerm(ts...)
}
