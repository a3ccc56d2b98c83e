package policy

import (
	"encoding/json"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/loadout-dev/loadout/host/spec"
)

// The policy input is built as an ast.Value directly: no JSON round trip per request. Its
// field names are those of Input's JSON encoding, and every set of the facts is an ast.Set
// (a sorted JSON array in Input): TestInputMatchesJSON holds the two together.

// Input is the policy input document, {"request": ..., "facts": ...}. It is what a policy
// author writes test inputs against; in Rego every list of FactSets is a set.
type Input struct {
	Request PolicyRequest `json:"request"`
	Facts   FactSets      `json:"facts"`
}

// PolicyRequest is what of the request the policy reads: the harness, the run's user and, per
// server (aligned by index with the request's servers), the credential settings. Everything
// else the rules need is a fact; a server is named by its index.
type PolicyRequest struct {
	Harness    string         `json:"harness"`
	Run        PolicyRun      `json:"run"`
	MCPServers []PolicyServer `json:"mcpServers"`
}

// PolicyRun is the run's user.
type PolicyRun struct {
	User    string `json:"user"`
	HasUser bool   `json:"hasUser"`
}

// PolicyServer is one request server as the policy reads it.
type PolicyServer struct {
	Credentials string   `json:"credentials"`
	HasUsers    bool     `json:"hasUsers"`
	Users       []string `json:"users"`
}

// FactSets are the facts as the policy reads them: each server fact is the set of server
// indices (request order) it holds for, each entry fact the set of [server index, key] pairs
// it holds for (EntryRef), each skill fact the set of skill indices. Every field is present,
// empty or not, so a rule reads a fact without a default. Rules combine them with set
// operations: the number of rule evaluations does not grow with the request.
type FactSets struct {
	Flags ServerFlags `json:"flags"`
	URL   URLSets     `json:"url"`
	// HTTP: http servers. Credentialed: servers with credentials or users set. Restricted:
	// servers that declare allowedTools. Token: servers with a stored token.
	// SharedAuthorityOK: servers whose sharedAuthority is a non-blank single line.
	HTTP              []int      `json:"http"`
	Credentialed      []int      `json:"credentialed"`
	Restricted        []int      `json:"restricted"`
	Token             []int      `json:"token"`
	SharedAuthorityOK []int      `json:"sharedAuthorityOK"`
	Env               EnvSets    `json:"env"`
	Headers           HeaderSets `json:"headers"`
	Tools             ToolSets   `json:"tools"`
	Skills            SkillSets  `json:"skills"`
	// HostEnv are the names of the host environment variables, in order (never their values).
	HostEnv []string `json:"hostEnv"`
}

// ServerFlags are the server flags (the Flag* constants), each as a set of server indices.
type ServerFlags struct {
	IDInvalid            []int `json:"idInvalid"`
	IDDoubleUnderscore   []int `json:"idDoubleUnderscore"`
	IDTrailingUnderscore []int `json:"idTrailingUnderscore"`
	IDReserved           []int `json:"idReserved"`
	TransportInvalid     []int `json:"transportInvalid"`
	CommandInvalid       []int `json:"commandInvalid"`
	URLMissing           []int `json:"urlMissing"`
	URLBadBytes          []int `json:"urlBadBytes"`
	URLUserinfo          []int `json:"urlUserinfo"`
	URLHostsDisagree     []int `json:"urlHostsDisagree"`
	URLBadPort           []int `json:"urlBadPort"`
	URLEmptyHost         []int `json:"urlEmptyHost"`
}

// URLSets are the URL facts of the http servers (URLFacts), each as a set of server indices.
type URLSets struct {
	BaseMatch      []int `json:"baseMatch"`
	SchemeAnywhere []int `json:"schemeAnywhere"`
	SchemeLoopback []int `json:"schemeLoopback"`
	Loopback       []int `json:"loopback"`
}

// EntryRef names one entry of a server's env, headers or allowedTools: the server's index
// and the entry's key. It is the pair [server, key] in the policy input.
type EntryRef struct {
	Server int
	Key    string
}

// MarshalJSON encodes r as [server, key].
func (r EntryRef) MarshalJSON() ([]byte, error) { return json.Marshal([]any{r.Server, r.Key}) }

// EnvSets are the env entry facts (EntryFacts), each as a set of entries.
type EnvSets struct {
	KeyInvalid     []EntryRef `json:"keyInvalid"`
	KeyRefused     []EntryRef `json:"keyRefused"`
	ValueInvalid   []EntryRef `json:"valueInvalid"`
	UserCredential []EntryRef `json:"userCredential"`
	SecretNamed    []EntryRef `json:"secretNamed"`
	ValueEmpty     []EntryRef `json:"valueEmpty"`
}

// HeaderSets are the header entry facts (EntryFacts), each as a set of entries.
type HeaderSets struct {
	NameInvalid    []EntryRef `json:"nameInvalid"`
	ValueInvalid   []EntryRef `json:"valueInvalid"`
	UserCredential []EntryRef `json:"userCredential"`
	TokenHeader    []EntryRef `json:"tokenHeader"`
	SecretNamed    []EntryRef `json:"secretNamed"`
	AlwaysSecret   []EntryRef `json:"alwaysSecret"`
	ValueEmpty     []EntryRef `json:"valueEmpty"`
}

// ToolSets are the allowedTools facts: the entries whose name is invalid, and every entry of
// the restricted servers (so that a rule can tell which servers keep a tool).
type ToolSets struct {
	NameInvalid []EntryRef `json:"nameInvalid"`
	All         []EntryRef `json:"all"`
}

// SkillSets are the skill facts, each as a set of skill indices.
type SkillSets struct {
	NameDenied []int `json:"nameDenied"`
}

// policyInput is the Input of req with its facts f, in the order Go computed them: the
// reference form of what inputValue builds as AST (TestInputMatchesJSON holds them equal).
func policyInput(req *spec.Request, f *Facts) Input {
	in := Input{Request: PolicyRequest{
		Harness:    req.Harness,
		Run:        PolicyRun{User: req.Run.User, HasUser: req.Run.HasUser},
		MCPServers: make([]PolicyServer, len(req.Servers)),
	}}
	fs := &in.Facts
	for i := range req.Servers {
		s := &req.Servers[i]
		in.Request.MCPServers[i] = PolicyServer{Credentials: s.Credentials, HasUsers: s.HasUsers, Users: s.Users}
		sf := &f.Servers[i]
		for _, flag := range sf.Flags {
			if p := fs.Flags.set(flag); p != nil {
				*p = append(*p, i)
			}
		}
		if u := sf.URL; u != nil {
			addIf(&fs.URL.BaseMatch, u.BaseMatch, i)
			addIf(&fs.URL.SchemeAnywhere, u.SchemeAnywhere, i)
			addIf(&fs.URL.SchemeLoopback, u.SchemeLoopback, i)
			addIf(&fs.URL.Loopback, u.Loopback, i)
		}
		addIf(&fs.SharedAuthorityOK, sf.SharedAuthorityOK, i)
		addIf(&fs.Token, sf.Token, i)
		addIf(&fs.Restricted, s.ToolsDeclared, i)
		for _, e := range sf.Env {
			r := EntryRef{Server: i, Key: e.Key}
			addIf(&fs.Env.KeyInvalid, e.KeyInvalid, r)
			addIf(&fs.Env.KeyRefused, e.KeyRefused, r)
			addIf(&fs.Env.ValueInvalid, e.ValueInvalid, r)
			addIf(&fs.Env.UserCredential, e.UserCredential, r)
			addIf(&fs.Env.SecretNamed, e.SecretNamed, r)
			addIf(&fs.Env.ValueEmpty, e.ValueEmpty, r)
		}
		for _, e := range sf.Headers {
			r := EntryRef{Server: i, Key: e.Key}
			addIf(&fs.Headers.NameInvalid, e.NameInvalid, r)
			addIf(&fs.Headers.ValueInvalid, e.ValueInvalid, r)
			addIf(&fs.Headers.UserCredential, e.UserCredential, r)
			addIf(&fs.Headers.TokenHeader, e.TokenHeader, r)
			addIf(&fs.Headers.SecretNamed, e.SecretNamed, r)
			addIf(&fs.Headers.AlwaysSecret, e.AlwaysSecret, r)
			addIf(&fs.Headers.ValueEmpty, e.ValueEmpty, r)
		}
		for _, e := range sf.Tools {
			addIf(&fs.Tools.NameInvalid, e.NameInvalid, EntryRef{Server: i, Key: e.Key})
		}
		if s.ToolsDeclared {
			for _, name := range s.AllowedTools {
				fs.Tools.All = append(fs.Tools.All, EntryRef{Server: i, Key: name})
			}
		}
	}
	fs.HTTP = f.HTTP
	fs.Credentialed = f.Credentialed
	for k, sk := range f.Skills {
		addIf(&fs.Skills.NameDenied, sk.NameDenied, k)
	}
	fs.HostEnv = f.HostEnv
	return in
}

func addIf[T any](s *[]T, ok bool, v T) {
	if ok {
		*s = append(*s, v)
	}
}

// set is the field of flag name, or nil for a name that is no server flag.
func (f *ServerFlags) set(name string) *[]int {
	switch name {
	case FlagIDInvalid:
		return &f.IDInvalid
	case FlagIDDoubleUnderscore:
		return &f.IDDoubleUnderscore
	case FlagIDTrailingUnderscore:
		return &f.IDTrailingUnderscore
	case FlagIDReserved:
		return &f.IDReserved
	case FlagTransportInvalid:
		return &f.TransportInvalid
	case FlagCommandInvalid:
		return &f.CommandInvalid
	case FlagURLMissing:
		return &f.URLMissing
	case FlagURLBadBytes:
		return &f.URLBadBytes
	case FlagURLUserinfo:
		return &f.URLUserinfo
	case FlagURLHostsDisagree:
		return &f.URLHostsDisagree
	case FlagURLBadPort:
		return &f.URLBadPort
	case FlagURLEmptyHost:
		return &f.URLEmptyHost
	}
	return nil
}

// inputValue is the policy input of req with its facts f: policyInput(req, f) as AST, with
// every list of FactSets a set, built straight from the facts (TestInputMatchesJSON holds the two equal). Each entry's
// [server, key] term is built once, whatever the number of sets it is in.
func inputValue(req *spec.Request, f *Facts) ast.Value {
	var ts termSets
	// Entry keys repeat across servers (the same env key, header or tool): one term each.
	keys := make(map[string]*ast.Term, 16)
	key := func(k string) *ast.Term {
		t, ok := keys[k]
		if !ok {
			t = str(k)
			keys[k] = t
		}
		return t
	}
	servers := make([]*ast.Term, len(req.Servers))
	for i := range req.Servers {
		s := &req.Servers[i]
		sf := &f.Servers[i]
		it := num(i)
		servers[i] = plainServer
		if s.Credentials != "" || s.HasUsers || len(s.Users) > 0 {
			servers[i] = ast.ObjectTerm(
				item("credentials", str(s.Credentials)),
				item("hasUsers", boolean(s.HasUsers)),
				item("users", strs(s.Users)),
			)
		}
		for _, flag := range sf.Flags {
			if k := flagIndex(flag); k >= 0 {
				ts.flags[k] = append(ts.flags[k], it)
			}
		}
		if u := sf.URL; u != nil {
			addIf(&ts.url[0], u.BaseMatch, it)
			addIf(&ts.url[1], u.SchemeAnywhere, it)
			addIf(&ts.url[2], u.SchemeLoopback, it)
			addIf(&ts.url[3], u.Loopback, it)
		}
		addIf(&ts.sharedAuthorityOK, sf.SharedAuthorityOK, it)
		addIf(&ts.token, sf.Token, it)
		addIf(&ts.restricted, s.ToolsDeclared, it)
		for j := range sf.Env {
			e := &sf.Env[j]
			t := ast.ArrayTerm(it, key(e.Key))
			addIf(&ts.env[0], e.KeyInvalid, t)
			addIf(&ts.env[1], e.KeyRefused, t)
			addIf(&ts.env[2], e.ValueInvalid, t)
			addIf(&ts.env[3], e.UserCredential, t)
			addIf(&ts.env[4], e.SecretNamed, t)
			addIf(&ts.env[5], e.ValueEmpty, t)
		}
		for j := range sf.Headers {
			e := &sf.Headers[j]
			t := ast.ArrayTerm(it, key(e.Key))
			addIf(&ts.headers[0], e.NameInvalid, t)
			addIf(&ts.headers[1], e.ValueInvalid, t)
			addIf(&ts.headers[2], e.UserCredential, t)
			addIf(&ts.headers[3], e.TokenHeader, t)
			addIf(&ts.headers[4], e.SecretNamed, t)
			addIf(&ts.headers[5], e.AlwaysSecret, t)
			addIf(&ts.headers[6], e.ValueEmpty, t)
		}
		// sf.Tools lists, in request order, the allowedTools entries with a fact: walk both
		// lists once so that an entry in tools.all and tools.nameInvalid is one term.
		next := 0
		for _, name := range s.AllowedTools {
			var t *ast.Term
			if next < len(sf.Tools) && sf.Tools[next].Key == name {
				t = ast.ArrayTerm(it, key(name))
				addIf(&ts.toolsInvalid, sf.Tools[next].NameInvalid, t)
				next++
			}
			if s.ToolsDeclared {
				if t == nil {
					t = ast.ArrayTerm(it, key(name))
				}
				ts.toolsAll = append(ts.toolsAll, t)
			}
		}
	}
	var skillsDenied []*ast.Term
	for k, sk := range f.Skills {
		addIf(&skillsDenied, sk.NameDenied, num(k))
	}
	flags := make([][2]*ast.Term, len(flagNames))
	for k, name := range flagNames {
		flags[k] = item(name, termSet(ts.flags[k]))
	}
	return ast.NewObject(
		item("request", ast.ObjectTerm(
			item("harness", str(req.Harness)),
			item("run", ast.ObjectTerm(
				item("user", str(req.Run.User)),
				item("hasUser", boolean(req.Run.HasUser)),
			)),
			item("mcpServers", ast.ArrayTerm(servers...)),
		)),
		item("facts", ast.ObjectTerm(
			item("flags", ast.ObjectTerm(flags...)),
			item("url", ast.ObjectTerm(
				item("baseMatch", termSet(ts.url[0])),
				item("schemeAnywhere", termSet(ts.url[1])),
				item("schemeLoopback", termSet(ts.url[2])),
				item("loopback", termSet(ts.url[3])),
			)),
			item("http", intSet(f.HTTP)),
			item("credentialed", intSet(f.Credentialed)),
			item("restricted", termSet(ts.restricted)),
			item("token", termSet(ts.token)),
			item("sharedAuthorityOK", termSet(ts.sharedAuthorityOK)),
			item("env", ast.ObjectTerm(
				item("keyInvalid", termSet(ts.env[0])),
				item("keyRefused", termSet(ts.env[1])),
				item("valueInvalid", termSet(ts.env[2])),
				item("userCredential", termSet(ts.env[3])),
				item("secretNamed", termSet(ts.env[4])),
				item("valueEmpty", termSet(ts.env[5])),
			)),
			item("headers", ast.ObjectTerm(
				item("nameInvalid", termSet(ts.headers[0])),
				item("valueInvalid", termSet(ts.headers[1])),
				item("userCredential", termSet(ts.headers[2])),
				item("tokenHeader", termSet(ts.headers[3])),
				item("secretNamed", termSet(ts.headers[4])),
				item("alwaysSecret", termSet(ts.headers[5])),
				item("valueEmpty", termSet(ts.headers[6])),
			)),
			item("tools", ast.ObjectTerm(
				item("nameInvalid", termSet(ts.toolsInvalid)),
				item("all", termSet(ts.toolsAll)),
			)),
			item("skills", ast.ObjectTerm(item("nameDenied", termSet(skillsDenied)))),
			item("hostEnv", strs(f.HostEnv)),
		)),
	)
}

// plainServer is the request server of every server without credentials or users: one
// term, shared (terms are never modified by evaluation).
var plainServer = ast.ObjectTerm(
	item("credentials", str("")),
	item("hasUsers", boolean(false)),
	item("users", ast.InternedEmptyArray),
)

// termSets collects the elements of the input's sets while inputValue reads the facts: flags
// in flagNames order, url (baseMatch, schemeAnywhere, schemeLoopback, loopback), env and
// headers in the order of EnvSets and HeaderSets.
type termSets struct {
	flags                                [len(flagNames)][]*ast.Term
	url                                  [4][]*ast.Term
	env                                  [6][]*ast.Term
	headers                              [7][]*ast.Term
	restricted, token, sharedAuthorityOK []*ast.Term
	toolsInvalid, toolsAll               []*ast.Term
}

// flagNames are the server flags, in the order of ServerFlags.
var flagNames = [...]string{
	FlagIDInvalid, FlagIDDoubleUnderscore, FlagIDTrailingUnderscore, FlagIDReserved, FlagTransportInvalid,
	FlagCommandInvalid, FlagURLMissing, FlagURLBadBytes, FlagURLUserinfo, FlagURLHostsDisagree, FlagURLBadPort,
	FlagURLEmptyHost,
}

// flagIndex is the index of flag name in flagNames, or -1.
func flagIndex(name string) int {
	for k, n := range flagNames {
		if n == name {
			return k
		}
	}
	return -1
}

// termSet is the set of ts; the empty set is shared.
func termSet(ts []*ast.Term) *ast.Term {
	if len(ts) == 0 {
		return ast.InternedEmptySet
	}
	return ast.SetTerm(ts...)
}

// keyTerms holds one term per object key of the input, built once: keys cost no allocation
// per request. Input terms are never modified by evaluation, so sharing them is safe.
var keyTerms = func() map[string]*ast.Term {
	m := map[string]*ast.Term{}
	for _, k := range []string{
		"request", "facts", "harness", "run", "user", "hasUser", "mcpServers", "id", "credentials",
		"hasUsers", "users", "flags", "url", "http", "credentialed", "restricted", "token",
		"sharedAuthorityOK", "env", "headers", "tools", "skills", "hostEnv",
		FlagIDInvalid, FlagIDDoubleUnderscore, FlagIDTrailingUnderscore, FlagIDReserved, FlagTransportInvalid,
		FlagCommandInvalid, FlagURLMissing, FlagURLBadBytes, FlagURLUserinfo, FlagURLHostsDisagree,
		FlagURLBadPort, FlagURLEmptyHost, "baseMatch", "schemeAnywhere", "schemeLoopback", "loopback",
		"keyInvalid", "keyRefused", "valueInvalid", "userCredential", "secretNamed", "valueEmpty",
		"nameInvalid", "tokenHeader", "alwaysSecret", "all", "nameDenied",
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

// intSet is the set of ns; the empty set is shared.
func intSet(ns []int) *ast.Term {
	if len(ns) == 0 {
		return ast.InternedEmptySet
	}
	ts := make([]*ast.Term, len(ns))
	for i, n := range ns {
		ts[i] = num(n)
	}
	return ast.SetTerm(ts...)
}
