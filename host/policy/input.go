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

// PolicyRequest is what of the request the policy reads: the harness and the run's user.
// Everything else the rules need is a fact; a server is named by its index.
type PolicyRequest struct {
	Harness string    `json:"harness"`
	Run     PolicyRun `json:"run"`
}

// PolicyRun is the run's user.
type PolicyRun struct {
	User    string `json:"user"`
	HasUser bool   `json:"hasUser"`
}

// FactSets are the facts as the policy reads them: each server fact is the set of server
// indices (request order) it holds for, each entry fact the set of [server index, key] pairs
// it holds for (EntryRef), each skill fact the set of skill indices. A grouped fact is an
// object from a server's setting (its credentials, its transport) to such a set, with a key
// for every setting a valid server can have (each credential mode of the tunables, "" for
// none; stdio and http) and for any other a server has. Every field and key is present,
// empty or not, so a rule reads a fact without a default. Rules combine them with set operations: the number of
// expressions evaluated does not grow with the request.
type FactSets struct {
	Flags ServerFlags `json:"flags"`
	URL   URLSets     `json:"url"`
	// HTTP: http servers. Token: servers with a stored token. SharedAuthorityOK: servers
	// whose sharedAuthority is a non-blank single line.
	HTTP              []int `json:"http"`
	Token             []int `json:"token"`
	SharedAuthorityOK []int `json:"sharedAuthorityOK"`
	// Credentials: per credentials value other than "", the servers that have it.
	Credentials map[string][]int `json:"credentials"`
	// HasUsers: servers whose users list is set. UserListed: servers whose users list holds
	// the run's user (ServerFacts.UserListed).
	HasUsers   []int      `json:"hasUsers"`
	UserListed []int      `json:"userListed"`
	Env        EnvSets    `json:"env"`
	Headers    HeaderSets `json:"headers"`
	Tools      ToolSets   `json:"tools"`
	Skills     SkillSets  `json:"skills"`
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
	CredentialsUnknown   []int `json:"credentialsUnknown"`
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

// EnvSets are the env entry facts (EntryFacts), each as a set of entries. UserCredential is
// grouped by the credentials of the entry's server ("" for none).
type EnvSets struct {
	KeyInvalid     []EntryRef            `json:"keyInvalid"`
	KeyRefused     []EntryRef            `json:"keyRefused"`
	ValueInvalid   []EntryRef            `json:"valueInvalid"`
	UserCredential map[string][]EntryRef `json:"userCredential"`
	SecretNamed    []EntryRef            `json:"secretNamed"`
	ValueEmpty     []EntryRef            `json:"valueEmpty"`
}

// HeaderSets are the header entry facts (EntryFacts), each as a set of entries.
// UserCredential is grouped by the credentials of the entry's server ("" for none);
// TokenHeader lists only the servers with a stored token, grouped by their transport.
type HeaderSets struct {
	NameInvalid    []EntryRef            `json:"nameInvalid"`
	ValueInvalid   []EntryRef            `json:"valueInvalid"`
	UserCredential map[string][]EntryRef `json:"userCredential"`
	TokenHeader    map[string][]EntryRef `json:"tokenHeader"`
	SecretNamed    []EntryRef            `json:"secretNamed"`
	AlwaysSecret   []EntryRef            `json:"alwaysSecret"`
	ValueEmpty     []EntryRef            `json:"valueEmpty"`
}

// ToolSets are the allowedTools facts: the entries whose name is invalid, and the servers
// that declare allowedTools with no valid name in it (ServerFacts.NoValidTool).
type ToolSets struct {
	NameInvalid []EntryRef `json:"nameInvalid"`
	NoneValid   []int      `json:"noneValid"`
}

// SkillSets are the skill facts, each as a set of skill indices.
type SkillSets struct {
	NameDenied []int `json:"nameDenied"`
}

// policyInput is the Input of req with its facts f, in the order Go computed them: the
// reference form of what inputValue builds as AST (TestInputMatchesJSON holds them equal).
func policyInput(req *spec.Request, f *Facts, t *tunables) Input {
	in := Input{Request: PolicyRequest{
		Harness: req.Harness,
		Run:     PolicyRun{User: req.Run.User, HasUser: req.Run.HasUser},
	}}
	fs := &in.Facts
	fs.Credentials = map[string][]int{}
	fs.Env.UserCredential = map[string][]EntryRef{"": nil}
	fs.Headers.UserCredential = map[string][]EntryRef{"": nil}
	for _, m := range t.credentialModeList {
		fs.Credentials[m] = nil
		fs.Env.UserCredential[m] = nil
		fs.Headers.UserCredential[m] = nil
	}
	fs.Headers.TokenHeader = map[string][]EntryRef{}
	for _, k := range transportGroups.keys {
		fs.Headers.TokenHeader[k] = nil
	}
	for i := range req.Servers {
		s := &req.Servers[i]
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
		if s.Credentials != "" {
			fs.Credentials[s.Credentials] = append(fs.Credentials[s.Credentials], i)
		}
		addIf(&fs.HasUsers, s.HasUsers, i)
		addIf(&fs.UserListed, sf.UserListed, i)
		for _, e := range sf.Env {
			r := EntryRef{Server: i, Key: e.Key}
			addIf(&fs.Env.KeyInvalid, e.KeyInvalid, r)
			addIf(&fs.Env.KeyRefused, e.KeyRefused, r)
			addIf(&fs.Env.ValueInvalid, e.ValueInvalid, r)
			if e.UserCredential {
				fs.Env.UserCredential[s.Credentials] = append(fs.Env.UserCredential[s.Credentials], r)
			}
			addIf(&fs.Env.SecretNamed, e.SecretNamed, r)
			addIf(&fs.Env.ValueEmpty, e.ValueEmpty, r)
		}
		for _, e := range sf.Headers {
			r := EntryRef{Server: i, Key: e.Key}
			addIf(&fs.Headers.NameInvalid, e.NameInvalid, r)
			addIf(&fs.Headers.ValueInvalid, e.ValueInvalid, r)
			if e.UserCredential {
				fs.Headers.UserCredential[s.Credentials] = append(fs.Headers.UserCredential[s.Credentials], r)
			}
			if e.TokenHeader && sf.Token {
				fs.Headers.TokenHeader[s.Transport] = append(fs.Headers.TokenHeader[s.Transport], r)
			}
			addIf(&fs.Headers.SecretNamed, e.SecretNamed, r)
			addIf(&fs.Headers.AlwaysSecret, e.AlwaysSecret, r)
			addIf(&fs.Headers.ValueEmpty, e.ValueEmpty, r)
		}
		for _, e := range sf.Tools {
			addIf(&fs.Tools.NameInvalid, e.NameInvalid, EntryRef{Server: i, Key: e.Key})
		}
		addIf(&fs.Tools.NoneValid, sf.NoValidTool, i)
	}
	fs.HTTP = f.HTTP
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
	case FlagCredentialsUnknown:
		return &f.CredentialsUnknown
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
// every list of FactSets a set, built straight from the facts (TestInputMatchesJSON holds the
// two equal). Each entry's [server, key] term is built once, whatever the number of sets it
// is in, and each distinct key once.
func inputValue(req *spec.Request, f *Facts, tun *tunables) ast.Value {
	var ts termSets
	ts.credentials = newTermGroups(tun.credentialGroups)
	ts.envUserCredential = newTermGroups(tun.userCredentialGroups)
	ts.headerUserCredential = newTermGroups(tun.userCredentialGroups)
	ts.tokenHeader = newTermGroups(transportGroups)
	// Terms come from one block: the pairs (and their keys), then the sets and objects.
	pairs := 0
	for i := range f.Servers {
		pairs += len(f.Servers[i].Env) + len(f.Servers[i].Headers) + len(f.Servers[i].Tools)
	}
	// Sized for a request's usual sets (measured: 5 servers of benchRequest use 54 terms and
	// 36 list slots); past them terms and lists are allocated one by one.
	a := newTermAlloc(2*pairs+len(f.HostEnv)+32, 2*pairs, 4*len(req.Servers)+3*pairs+8)
	var keys map[string]*ast.Term
	key := func(k string) *ast.Term {
		t, ok := keys[k]
		if !ok {
			if keys == nil {
				keys = make(map[string]*ast.Term, 8)
			}
			t = a.str(k)
			keys[k] = t
		}
		return t
	}
	for i := range req.Servers {
		s := &req.Servers[i]
		sf := &f.Servers[i]
		it := num(i)
		for _, flag := range sf.Flags {
			if k := flagIndex(flag); k >= 0 {
				a.addIf(&ts.flags[k], true, it)
			}
		}
		if u := sf.URL; u != nil {
			a.addIf(&ts.url[0], u.BaseMatch, it)
			a.addIf(&ts.url[1], u.SchemeAnywhere, it)
			a.addIf(&ts.url[2], u.SchemeLoopback, it)
			a.addIf(&ts.url[3], u.Loopback, it)
		}
		a.addIf(&ts.sharedAuthorityOK, sf.SharedAuthorityOK, it)
		a.addIf(&ts.token, sf.Token, it)
		if s.Credentials != "" {
			ts.credentials.add(s.Credentials, it)
		}
		a.addIf(&ts.hasUsers, s.HasUsers, it)
		a.addIf(&ts.userListed, sf.UserListed, it)
		a.addIf(&ts.toolsNoneValid, sf.NoValidTool, it)
		for j := range sf.Env {
			e := &sf.Env[j]
			t := a.pair(it, key(e.Key))
			a.addIf(&ts.env[0], e.KeyInvalid, t)
			a.addIf(&ts.env[1], e.KeyRefused, t)
			a.addIf(&ts.env[2], e.ValueInvalid, t)
			a.addIf(&ts.env[3], e.SecretNamed, t)
			a.addIf(&ts.env[4], e.ValueEmpty, t)
			if e.UserCredential {
				ts.envUserCredential.add(s.Credentials, t)
			}
		}
		for j := range sf.Headers {
			e := &sf.Headers[j]
			t := a.pair(it, key(e.Key))
			a.addIf(&ts.headers[0], e.NameInvalid, t)
			a.addIf(&ts.headers[1], e.ValueInvalid, t)
			a.addIf(&ts.headers[2], e.SecretNamed, t)
			a.addIf(&ts.headers[3], e.AlwaysSecret, t)
			a.addIf(&ts.headers[4], e.ValueEmpty, t)
			if e.UserCredential {
				ts.headerUserCredential.add(s.Credentials, t)
			}
			if e.TokenHeader && sf.Token {
				ts.tokenHeader.add(s.Transport, t)
			}
		}
		for j := range sf.Tools {
			a.addIf(&ts.toolsInvalid, sf.Tools[j].NameInvalid, a.pair(it, key(sf.Tools[j].Key)))
		}
	}
	var skillsDenied []*ast.Term
	for k, sk := range f.Skills {
		addIf(&skillsDenied, sk.NameDenied, num(k))
	}
	var flags [len(flagNames)]*ast.Term
	for k := range flagNames {
		flags[k] = a.set(ts.flags[k])
	}
	hostEnv := ast.InternedEmptyArray
	if len(f.HostEnv) > 0 {
		names := make([]*ast.Term, len(f.HostEnv))
		for i, n := range f.HostEnv {
			names[i] = a.str(n)
		}
		hostEnv = a.term(ast.NewArray(names...))
	}
	return a.object(rootShape,
		a.object(requestShape,
			a.str(req.Harness),
			a.object(runShape, a.str(req.Run.User), boolean(req.Run.HasUser)),
		),
		a.object(factsShape,
			a.object(flagsShape, flags[:]...),
			a.object(urlShape, a.set(ts.url[0]), a.set(ts.url[1]), a.set(ts.url[2]), a.set(ts.url[3])),
			intSet(a, f.HTTP),
			a.set(ts.token),
			a.set(ts.sharedAuthorityOK),
			ts.credentials.term(a),
			a.set(ts.hasUsers),
			a.set(ts.userListed),
			a.object(envShape, a.set(ts.env[0]), a.set(ts.env[1]), a.set(ts.env[2]),
				ts.envUserCredential.term(a), a.set(ts.env[3]), a.set(ts.env[4])),
			a.object(headersShape, a.set(ts.headers[0]), a.set(ts.headers[1]), ts.headerUserCredential.term(a),
				ts.tokenHeader.term(a), a.set(ts.headers[2]), a.set(ts.headers[3]), a.set(ts.headers[4])),
			a.object(toolsShape, a.set(ts.toolsInvalid), a.set(ts.toolsNoneValid)),
			a.object(skillsShape, a.set(skillsDenied)),
			hostEnv,
		),
	).Value
}

// Shapes of the input's objects: their keys, in the order inputValue gives the values, each
// with the object that has every value empty (built once, shared by the inputs it fits).
var (
	rootShape    = newShape("request", "facts")
	requestShape = newShape("harness", "run")
	runShape     = newShape("user", "hasUser")
	factsShape   = newShape("flags", "url", "http", "token", "sharedAuthorityOK", "credentials", "hasUsers",
		"userListed", "env", "headers", "tools", "skills", "hostEnv")
	flagsShape   = newShape(flagNames[:]...)
	urlShape     = newShape("baseMatch", "schemeAnywhere", "schemeLoopback", "loopback")
	envShape     = newShape("keyInvalid", "keyRefused", "valueInvalid", "userCredential", "secretNamed", "valueEmpty")
	headersShape = newShape("nameInvalid", "valueInvalid", "userCredential", "tokenHeader", "secretNamed",
		"alwaysSecret", "valueEmpty")
	toolsShape  = newShape("nameInvalid", "noneValid")
	skillsShape = newShape("nameDenied")
)

// shape is the keys of one of the input's objects, as terms built once, and the object with
// each value the shared empty set.
type shape struct {
	keys  []*ast.Term
	empty *ast.Term
}

func newShape(keys ...string) shape {
	s := shape{keys: make([]*ast.Term, len(keys))}
	items := make([][2]*ast.Term, len(keys))
	for i, k := range keys {
		s.keys[i] = ast.StringTerm(k)
		items[i] = [2]*ast.Term{s.keys[i], ast.InternedEmptySet}
	}
	s.empty = ast.ObjectTerm(items...)
	return s
}

// termAlloc hands out the terms of one input from blocks allocated once: a request's input
// is a few hundred small terms, and allocating each alone was most of its cost. Input terms
// are never modified by evaluation, so terms and element slices may share blocks.
type termAlloc struct {
	terms []ast.Term
	elems []*ast.Term // of the pairs
	items []*ast.Term // of the lists a set is built from (NewSet copies them)
}

func newTermAlloc(terms, elems, items int) *termAlloc {
	return &termAlloc{
		terms: make([]ast.Term, 0, terms),
		elems: make([]*ast.Term, 0, elems),
		items: make([]*ast.Term, 0, items),
	}
}

// addIf appends t to *list when ok, growing the list within a.items while there is room.
func (a *termAlloc) addIf(list *[]*ast.Term, ok bool, t *ast.Term) {
	if !ok {
		return
	}
	if l := *list; len(l) == cap(l) {
		n := max(2*cap(l), 4)
		if len(a.items)+n > cap(a.items) {
			*list = append(l, t)
			return
		}
		at := len(a.items)
		a.items = a.items[:at+n]
		grown := a.items[at : at+len(l) : at+n]
		copy(grown, l)
		*list = grown
	}
	*list = append(*list, t)
}

// term is a new term of v.
func (a *termAlloc) term(v ast.Value) *ast.Term {
	if len(a.terms) == cap(a.terms) {
		return ast.NewTerm(v)
	}
	a.terms = append(a.terms, ast.Term{Value: v})
	return &a.terms[len(a.terms)-1]
}

// str is the term of s: interned when OPA interns it, else new.
func (a *termAlloc) str(s string) *ast.Term {
	if ast.HasInternedValue(s) {
		return ast.InternedTerm(s)
	}
	return a.term(ast.String(s))
}

// pair is the term [server, key].
func (a *termAlloc) pair(server, key *ast.Term) *ast.Term {
	var e []*ast.Term
	if len(a.elems)+2 <= cap(a.elems) {
		n := len(a.elems)
		a.elems = append(a.elems, server, key)
		e = a.elems[n : n+2 : n+2]
	} else {
		e = []*ast.Term{server, key}
	}
	return a.term(ast.NewArray(e...))
}

// set is the set of ts; the empty set is shared.
func (a *termAlloc) set(ts []*ast.Term) *ast.Term {
	if len(ts) == 0 {
		return ast.InternedEmptySet
	}
	return a.term(ast.NewSet(ts...))
}

// object is the object of sh's keys with values vs, or the shared empty one when every value
// is the shared empty set.
func (a *termAlloc) object(sh shape, vs ...*ast.Term) *ast.Term {
	empty := true
	for _, v := range vs {
		empty = empty && v == ast.InternedEmptySet
	}
	if empty {
		return sh.empty
	}
	var buf [16][2]*ast.Term // NewObject copies the items: they stay on the stack
	items := buf[:0]
	for i, v := range vs {
		items = append(items, [2]*ast.Term{sh.keys[i], v})
	}
	return a.term(ast.NewObject(items...))
}

// termSets collects the elements of the input's sets while inputValue reads the facts: flags
// in flagNames order, url (baseMatch, schemeAnywhere, schemeLoopback, loopback), env
// (keyInvalid, keyRefused, valueInvalid, secretNamed, valueEmpty) and headers (nameInvalid,
// valueInvalid, secretNamed, alwaysSecret, valueEmpty); the grouped facts apart.
type termSets struct {
	flags                                          [len(flagNames)][]*ast.Term
	url                                            [4][]*ast.Term
	env                                            [5][]*ast.Term
	headers                                        [5][]*ast.Term
	token, sharedAuthorityOK, hasUsers, userListed []*ast.Term
	toolsInvalid, toolsNoneValid                   []*ast.Term
	credentials, envUserCredential                 termGroups
	headerUserCredential, tokenHeader              termGroups
}

// groupShape is the keys every input's grouped fact has, as terms built once, and the object
// with each the shared empty set.
type groupShape struct {
	keys  []string
	terms []*ast.Term
	empty *ast.Term
}

// newGroupShape is the shape of keys, with "" first when none is set.
func newGroupShape(keys []string, none bool) *groupShape {
	g := &groupShape{}
	if none {
		g.keys = append(g.keys, "")
	}
	g.keys = append(g.keys, keys...)
	items := make([][2]*ast.Term, len(g.keys))
	for k, key := range g.keys {
		g.terms = append(g.terms, ast.StringTerm(key))
		items[k] = [2]*ast.Term{g.terms[k], ast.InternedEmptySet}
	}
	g.empty = ast.ObjectTerm(items...)
	return g
}

// transportGroups are the keys of the groups by transport every input has.
var transportGroups = newGroupShape([]string{transportStdio, transportHTTP}, false)

const (
	transportStdio = "stdio"
	transportHTTP  = "http"
)

// termGroups are the elements of a grouped fact: per key of its shape, then per other key in
// the order first seen (a request has few distinct credentials values and transports: a list
// beats a map).
type termGroups struct {
	shape *groupShape
	elems [4][]*ast.Term // per key of shape, while it has at most four
	more  [][]*ast.Term  // per key of shape past the fourth
	extra []termGroup
}

type termGroup struct {
	key   string
	elems []*ast.Term
}

func newTermGroups(shape *groupShape) termGroups {
	g := termGroups{shape: shape}
	if len(shape.keys) > len(g.elems) {
		g.more = make([][]*ast.Term, len(shape.keys)-len(g.elems))
	}
	return g
}

// at is the elements of the shape's key k.
func (g *termGroups) at(k int) *[]*ast.Term {
	if k < len(g.elems) {
		return &g.elems[k]
	}
	return &g.more[k-len(g.elems)]
}

func (g *termGroups) add(key string, t *ast.Term) {
	for k, sk := range g.shape.keys {
		if sk == key {
			e := g.at(k)
			*e = append(*e, t)
			return
		}
	}
	for k := range g.extra {
		if g.extra[k].key == key {
			g.extra[k].elems = append(g.extra[k].elems, t)
			return
		}
	}
	g.extra = append(g.extra, termGroup{key: key, elems: []*ast.Term{t}})
}

// term is the object of the groups' sets; the shape's empty object when every set is empty.
func (g *termGroups) term(a *termAlloc) *ast.Term {
	empty := len(g.extra) == 0
	for k := range g.shape.keys {
		empty = empty && len(*g.at(k)) == 0
	}
	if empty {
		return g.shape.empty
	}
	items := make([][2]*ast.Term, 0, len(g.shape.keys)+len(g.extra))
	for k, kt := range g.shape.terms {
		items = append(items, [2]*ast.Term{kt, a.set(*g.at(k))})
	}
	for _, grp := range g.extra {
		items = append(items, [2]*ast.Term{a.str(grp.key), a.set(grp.elems)})
	}
	return a.term(ast.NewObject(items...))
}

// flagNames are the server flags, in the order of ServerFlags.
var flagNames = [...]string{
	FlagIDInvalid, FlagIDDoubleUnderscore, FlagIDTrailingUnderscore, FlagIDReserved, FlagTransportInvalid,
	FlagCommandInvalid, FlagCredentialsUnknown, FlagURLMissing, FlagURLBadBytes, FlagURLUserinfo,
	FlagURLHostsDisagree, FlagURLBadPort, FlagURLEmptyHost,
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

func boolean(b bool) *ast.Term { return ast.InternedTerm(b) }

func num(n int) *ast.Term { return ast.InternedTerm(n) }

// intSet is the set of ns; the empty set is shared.
func intSet(a *termAlloc, ns []int) *ast.Term {
	if len(ns) == 0 {
		return ast.InternedEmptySet
	}
	ts := make([]*ast.Term, len(ns))
	for i, n := range ns {
		ts[i] = num(n)
	}
	return a.term(ast.NewSet(ts...))
}
