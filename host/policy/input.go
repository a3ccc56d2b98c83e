package policy

import (
	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/loadout-dev/loadout/host/spec"
)

// The policy input is built as an ast.Value directly: no JSON round trip per request. Field
// names are spec.Request's and Facts' JSON names, so the policy sees exactly what
// json.Marshal(Input{...}) would produce (TestInputMatchesJSON holds the two together).

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

func item(k string, v *ast.Term) [2]*ast.Term { return [2]*ast.Term{ast.InternedTerm(k), v} }

func str(s string) *ast.Term { return ast.StringTerm(s) }

func boolean(b bool) *ast.Term { return ast.InternedTerm(b) }

func num(n int) *ast.Term { return ast.InternedTerm(n) }

func strs(ss []string) *ast.Term {
	ts := make([]*ast.Term, len(ss))
	for i, s := range ss {
		ts[i] = str(s)
	}
	return ast.ArrayTerm(ts...)
}

func pairs(ps []spec.Pair) *ast.Term {
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

func factsTerm(f *Facts) *ast.Term {
	servers := make([]*ast.Term, len(f.Servers))
	for i := range f.Servers {
		sf := &f.Servers[i]
		env := make([]*ast.Term, len(sf.Env))
		for j, e := range sf.Env {
			env[j] = ast.ObjectTerm(
				item("upper", str(e.Upper)),
				item("keyInvalid", boolean(e.KeyInvalid)),
				item("valueInvalid", boolean(e.ValueInvalid)),
				item("prefixes", strs(e.Prefixes)),
				item("suffixes", strs(e.Suffixes)),
			)
		}
		headers := make([]*ast.Term, len(sf.Headers))
		for j, h := range sf.Headers {
			headers[j] = ast.ObjectTerm(
				item("lower", str(h.Lower)),
				item("nameInvalid", boolean(h.NameInvalid)),
				item("valueInvalid", boolean(h.ValueInvalid)),
			)
		}
		u := &sf.URL
		servers[i] = ast.ObjectTerm(
			item("id", ast.ObjectTerm(
				item("invalid", boolean(sf.ID.Invalid)),
				item("doubleUnderscore", boolean(sf.ID.DoubleUnderscore)),
				item("trailingUnderscore", boolean(sf.ID.TrailingUnderscore)),
			)),
			item("command", ast.ObjectTerm(item("invalid", boolean(sf.Command.Invalid)))),
			item("url", ast.ObjectTerm(
				item("present", boolean(u.Present)),
				item("baseMatch", boolean(u.BaseMatch)),
				item("scheme", str(u.Scheme)),
				item("baseHost", str(u.BaseHost)),
				item("urlHost", str(u.URLHost)),
				item("hostsDisagree", boolean(u.HostsDisagree)),
				item("userinfo", boolean(u.Userinfo)),
				item("badBytes", boolean(u.BadBytes)),
				item("badPort", boolean(u.BadPort)),
				item("hostEmpty", boolean(u.HostEmpty)),
				item("loopback", boolean(u.Loopback)),
			)),
			item("env", ast.ArrayTerm(env...)),
			item("headers", ast.ArrayTerm(headers...)),
			item("sharedAuthorityOK", boolean(sf.SharedAuthorityOK)),
			item("token", boolean(sf.Token)),
		)
	}
	return ast.ObjectTerm(item("servers", ast.ArrayTerm(servers...)), item("hostEnv", strs(f.HostEnv)))
}
