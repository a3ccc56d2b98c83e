package policy

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/loadout-dev/loadout/host/spec"
)

// Decision is what every contributing rule said about one request, checked and aligned with
// it (docs/POLICIES.md §2). A Decision is immutable once Decide returns it.
type Decision struct {
	// Servers is aligned by index with the request's servers (input.servers).
	Servers []ServerDecision `json:"servers"`
	// Skills is aligned by index with the request's skills (input.skills).
	Skills []SkillDecision `json:"skills"`
	// Run is the verdict on the run's own entries (input.run).
	Run RunDecision `json:"run"`
	// Secrets names every env and header entry a rule declares a secret, of every server, in
	// request order. A stored token is a secret whatever the rules say; it is not listed.
	Secrets  []SecretRef `json:"secrets"`
	SpawnEnv SpawnEnv    `json:"spawnEnv"`
	// Warnings are the rules' warnings, except those about a refused server.
	Warnings []Warning `json:"warnings"`
	// Denied holds the request-level denies: the strings of a deny set (conftest's form,
	// `deny contains msg`). Any refuses the whole request (Vet returns a *DeniedError).
	Denied []Reason `json:"denied,omitempty"`
	// Document is every element the rules produced, by rule, each with where it was decided:
	// what `loadout policy eval` prints (masked). A rule may copy any value into an element,
	// so it is not part of the decision's JSON form.
	Document []RuleOutput `json:"-"`
}

// Reason is one rule's verdict: its code, message, the field of the entry it is about (a
// server field such as "url", or ""), and where the rule lives (file:row).
type Reason struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
	Rule    string `json:"rule"`
}

// ServerDecision is the verdict on one server.
type ServerDecision struct {
	Allow   bool     `json:"allow"`
	Reasons []Reason `json:"reasons"` // every deny, sorted by code; empty when Allow
	Drop    []Drop   `json:"drop"`    // entries removed from the server, in request order
}

// Drop removes one entry of a server: Field is "env", "headers" or "allowedTools", Key the
// env or header key or the tool entry. An entry several rules drop has one Drop per code.
// Secret: the rule says the removed value is a credential (one the run's token replaces,
// say), so it stays in the redaction set although it is not rendered.
type Drop struct {
	Field  string `json:"field"`
	Key    string `json:"key"`
	Reason Reason `json:"reason"`
	Secret bool   `json:"secret,omitempty"`
}

// RunDecision is the verdict on the run: Drop removes entries of run.builtinTools (Field
// "builtinTools", Key the tool), in request order, one per code.
type RunDecision struct {
	Drop []Drop `json:"drop"`
}

// SkillDecision is the verdict on one skill.
type SkillDecision struct {
	Allow   bool     `json:"allow"`
	Reasons []Reason `json:"reasons"`
}

// SecretRef names a secret: the value of env[Key] or headers[Key] of server Server (an
// index in the request's servers).
type SecretRef struct {
	Server int    `json:"server"`
	Field  string `json:"field"`
	Key    string `json:"key"`
}

// MaskedRefs names every entry whose value is shown masked: the entries a rule declares a
// secret, then those a rule drops and marks secret (a removed credential is still one).
func (d *Decision) MaskedRefs() []SecretRef {
	out := append([]SecretRef{}, d.Secrets...)
	for i, sd := range d.Servers {
		for _, dr := range sd.Drop {
			if dr.Secret {
				out = append(out, SecretRef{Server: i, Field: dr.Field, Key: dr.Key})
			}
		}
	}
	return out
}

// SpawnEnv names the host environment variables that reach a stdio server: exact Keys and
// every variable starting with one of Prefixes (both case-sensitive). It is the union of
// every package's spawn_env.
type SpawnEnv struct {
	Keys     []string `json:"keys"`
	Prefixes []string `json:"prefixes"`
}

// Warning is something a rule reports without refusing it: about a server, a skill, or the
// run (neither).
type Warning struct {
	Code    string `json:"code"`
	Server  string `json:"server,omitempty"`
	Skill   string `json:"skill,omitempty"`
	Message string `json:"message"`
	Rule    string `json:"rule"`
}

// RuleOutput is what one rule produced, as JSON values.
type RuleOutput struct {
	Rule     string `json:"rule"` // package.rule, e.g. data.loadout.url.deny
	Elements []any  `json:"elements"`
}

// ruleIndex says where a rule lives: for each package, rule name and constant code in the
// rule's head, the first rule's file:row; for a package and rule name alone, its first rule.
type ruleIndex map[string]string

func ruleKey(pkg, name, code string) string { return pkg + "\x00" + name + "\x00" + code }

// collect finds the rules of modules that contribute to the decision (ruleNames, in every
// package under Namespace), sorted by package and then in ruleNames order, and indexes where
// each code is decided.
func collect(modules map[string]*ast.Module) ([]source, ruleIndex) {
	rules := ruleIndex{}
	seen := map[source]bool{}
	for _, file := range slices.Sorted(maps.Keys(modules)) {
		m := modules[file]
		pkg := m.Package.Path.String()
		if pkg != Namespace && !m.Package.Path.HasPrefix(ast.MustParseRef(Namespace)) {
			continue
		}
		for _, r := range m.Rules {
			ref := r.Head.Ref()
			if len(ref) != 1 {
				continue
			}
			name := ref[0].Value.String()
			if !slices.Contains(ruleNames, name) {
				continue
			}
			seen[source{pkg, name}] = true
			loc := ""
			if r.Location != nil {
				loc = r.Location.File + ":" + strconv.Itoa(r.Location.Row)
			}
			if _, ok := rules[ruleKey(pkg, name, "")]; !ok {
				rules[ruleKey(pkg, name, "")] = loc
			}
			if code := headCode(r.Head); code != "" {
				if _, ok := rules[ruleKey(pkg, name, code)]; !ok {
					rules[ruleKey(pkg, name, code)] = loc
				}
			}
		}
	}
	sources := slices.SortedFunc(maps.Keys(seen), func(a, b source) int {
		return cmp.Or(cmp.Compare(a.pkg, b.pkg), cmp.Compare(slices.Index(ruleNames, a.name), slices.Index(ruleNames, b.name)))
	})
	return sources, rules
}

// headCode is the constant "code" of a partial set rule's element, or "".
func headCode(h *ast.Head) string {
	if h.Key == nil {
		return ""
	}
	obj, ok := h.Key.Value.(ast.Object)
	if !ok {
		return ""
	}
	t := obj.Get(ast.StringTerm("code"))
	if t == nil {
		return ""
	}
	s, ok := t.Value.(ast.String)
	if !ok {
		return ""
	}
	return string(s)
}

// where is the file:row of the rule of src that decides code.
func (e *Engine) where(src source, code string) string {
	if loc, ok := e.rules[ruleKey(src.pkg, src.name, code)]; ok {
		return loc
	}
	return e.rules[ruleKey(src.pkg, src.name, "")]
}

// decoder accumulates one decision.
type decoder struct {
	e   *Engine
	req *spec.Request
	d   *Decision
	// drops and secrets by entry; warnings with the index of their server (-1: none).
	drops       map[entry][]Reason
	runDrops    map[string][]Reason // by run.builtinTools entry
	secretDrops map[entry]bool
	secrets     map[entry]bool
	warnings    []indexedWarning
}

type entry struct {
	server     int
	field, key string
}

type indexedWarning struct {
	server, skill int
	w             Warning
}

// decode checks every element of the evaluated query result v (one value per source) and
// turns them into a Decision aligned with req.
func (e *Engine) decode(v ast.Value, req *spec.Request) (*Decision, error) {
	results, ok := v.(*ast.Array)
	if !ok || results.Len() != len(e.sources) {
		return nil, &MalformedError{Path: "decision", Msg: "the query result does not list every rule"}
	}
	d := &Decision{
		Servers:  make([]ServerDecision, len(req.Servers)),
		Skills:   make([]SkillDecision, len(req.Skills)),
		Secrets:  []SecretRef{},
		SpawnEnv: SpawnEnv{Keys: []string{}, Prefixes: []string{}},
		Warnings: []Warning{},
		Document: make([]RuleOutput, 0, len(e.sources)),
	}
	dec := &decoder{e: e, req: req, d: d, drops: map[entry][]Reason{}, runDrops: map[string][]Reason{}, secretDrops: map[entry]bool{}, secrets: map[entry]bool{}}
	for n, src := range e.sources {
		path := src.pkg + "." + src.name
		t := results.Elem(n)
		out := RuleOutput{Rule: path, Elements: []any{}}
		if src.name == "spawn_env" {
			defined, ok := t.Value.(*ast.Array)
			if !ok || defined.Len() == 0 {
				return nil, &UndefinedError{Rule: path, At: e.where(src, "")}
			}
			t = defined.Elem(0)
			if err := dec.spawnEnv(t, path); err != nil {
				return nil, err
			}
			j, _ := ast.JSON(t.Value)
			out.Elements = append(out.Elements, j)
			d.Document = append(d.Document, out)
			continue
		}
		elems, ok := elements(t.Value)
		if !ok {
			return nil, &MalformedError{Path: path, Msg: fmt.Sprintf("is %s, want a set of objects", kind(t.Value))}
		}
		for k, el := range elems {
			at := indexPath(path, k)
			if msg, ok := el.Value.(ast.String); ok && (src.name == "deny" || src.name == "warn") {
				dec.request(src, string(msg))
				out.Elements = append(out.Elements, map[string]any{"msg": string(msg), "rule": e.where(src, "")})
				continue
			}
			obj, ok := el.Value.(ast.Object)
			if !ok {
				return nil, &MalformedError{Path: at, Msg: fmt.Sprintf("is %s, want an object", kind(el.Value))}
			}
			var err error
			switch src.name {
			case "deny":
				err = dec.deny(obj, src, at)
			case "drop":
				err = dec.drop(obj, src, at)
			case "secret":
				err = dec.secret(obj, at)
			case "warn":
				err = dec.warn(obj, src, at)
			}
			if err != nil {
				return nil, err
			}
			j, _ := ast.JSON(obj)
			if m, ok := j.(map[string]any); ok && src.name != "secret" {
				m["rule"] = e.where(src, stringField(obj, "code"))
			}
			out.Elements = append(out.Elements, j)
		}
		d.Document = append(d.Document, out)
	}
	dec.finish()
	return d, nil
}

// Codes of the request-level decisions a string element of deny or warn makes.
const (
	CodeRequestDenied  = "policy_denied"
	CodeRequestWarning = "policy_warning"
)

// request takes a string element of deny or warn (conftest's form): a deny refuses the
// request with msg, a warn is a run warning.
func (dec *decoder) request(src source, msg string) {
	if msg == "" {
		msg = "denied by policy"
	}
	if src.name == "deny" {
		dec.d.Denied = append(dec.d.Denied, Reason{Code: CodeRequestDenied, Message: msg, Rule: dec.e.where(src, "")})
		return
	}
	dec.warnings = append(dec.warnings, indexedWarning{server: -1, skill: -1, w: Warning{Code: CodeRequestWarning, Message: msg, Rule: dec.e.where(src, "")}})
}

// fields lists the keys an element of each rule may have, and which are required.
var fields = map[string]map[string]bool{
	"deny":   {"server": false, "skill": false, "code": true, "msg": false, "field": false},
	"drop":   {"server": false, "field": true, "key": true, "code": true, "msg": false, "secret": false},
	"secret": {"server": true, "field": true, "key": true},
	"warn":   {"server": false, "skill": false, "code": true, "msg": false},
}

// checkKeys refuses an element with a key its rule does not define or without a required one.
func checkKeys(obj ast.Object, name, at string) error {
	allowed := fields[name]
	var bad error
	obj.Foreach(func(k, _ *ast.Term) {
		s, ok := k.Value.(ast.String)
		if bad == nil && (!ok || !slices.Contains(slices.Collect(maps.Keys(allowed)), string(s))) {
			bad = &MalformedError{Path: at, Msg: fmt.Sprintf("key %s is not one of %s's (%s)", k, name, keyList(allowed))}
		}
	})
	if bad != nil {
		return bad
	}
	for _, k := range slices.Sorted(maps.Keys(allowed)) {
		if allowed[k] && obj.Get(ast.StringTerm(k)) == nil {
			return &MalformedError{Path: at, Msg: fmt.Sprintf("has no %q", k)}
		}
	}
	return nil
}

func keyList(m map[string]bool) string {
	keys := slices.Sorted(maps.Keys(m))
	out := ""
	for i, k := range keys {
		if i > 0 {
			out += ", "
		}
		out += k
	}
	return out
}

// target reads the "server" or "skill" index of a deny or warn element: exactly one of them
// for deny, at most one for warn. It returns -1 for an absent one.
func (dec *decoder) target(obj ast.Object, at string, needOne bool) (server, skill int, err error) {
	server, skill = -1, -1
	if t := obj.Get(ast.StringTerm("server")); t != nil {
		if server, err = dec.index(t, len(dec.req.Servers), at+".server"); err != nil {
			return
		}
	}
	if t := obj.Get(ast.StringTerm("skill")); t != nil {
		if skill, err = dec.index(t, len(dec.req.Skills), at+".skill"); err != nil {
			return
		}
	}
	switch {
	case server >= 0 && skill >= 0:
		err = &MalformedError{Path: at, Msg: `names both a "server" and a "skill"`}
	case needOne && server < 0 && skill < 0:
		err = &MalformedError{Path: at, Msg: `names neither a "server" nor a "skill"`}
	}
	return
}

// index reads an index into a list of n.
func (dec *decoder) index(t *ast.Term, n int, at string) (int, error) {
	num, ok := t.Value.(ast.Number)
	if ok {
		if i, ok := num.Int(); ok && i >= 0 && i < n {
			return i, nil
		}
	}
	return 0, &MalformedError{Path: at, Msg: fmt.Sprintf("is %s, want an index below %d", show(t), n)}
}

// code reads the required non-empty "code" and the optional "msg" of an element.
func code(obj ast.Object, at string) (string, string, error) {
	c, ok := obj.Get(ast.StringTerm("code")).Value.(ast.String)
	if !ok || c == "" {
		return "", "", &MalformedError{Path: at + ".code", Msg: fmt.Sprintf("is %s, want a non-empty string", show(obj.Get(ast.StringTerm("code"))))}
	}
	msg := "denied by policy (" + string(c) + ")"
	if t := obj.Get(ast.StringTerm("msg")); t != nil {
		m, ok := t.Value.(ast.String)
		if !ok {
			return "", "", &MalformedError{Path: at + ".msg", Msg: fmt.Sprintf("is %s, want a string", show(t))}
		}
		if m != "" {
			msg = string(m)
		}
	}
	return string(c), msg, nil
}

func stringField(obj ast.Object, key string) string {
	if t := obj.Get(ast.StringTerm(key)); t != nil {
		if s, ok := t.Value.(ast.String); ok {
			return string(s)
		}
	}
	return ""
}

func (dec *decoder) deny(obj ast.Object, src source, at string) error {
	if err := checkKeys(obj, "deny", at); err != nil {
		return err
	}
	server, skill, err := dec.target(obj, at, true)
	if err != nil {
		return err
	}
	c, msg, err := code(obj, at)
	if err != nil {
		return err
	}
	r := Reason{Code: c, Message: msg, Field: stringField(obj, "field"), Rule: dec.e.where(src, c)}
	if server >= 0 {
		dec.d.Servers[server].Reasons = append(dec.d.Servers[server].Reasons, r)
	} else {
		dec.d.Skills[skill].Reasons = append(dec.d.Skills[skill].Reasons, r)
	}
	return nil
}

// entryOf reads the "server", "field" and "key" of a drop or secret element, each naming
// something the request has.
func (dec *decoder) entryOf(obj ast.Object, at string, fieldsAllowed ...string) (entry, error) {
	i, err := dec.index(obj.Get(ast.StringTerm("server")), len(dec.req.Servers), at+".server")
	if err != nil {
		return entry{}, err
	}
	field := stringField(obj, "field")
	if !slices.Contains(fieldsAllowed, field) {
		return entry{}, &MalformedError{Path: at + ".field", Msg: fmt.Sprintf("is %s, want one of %q", show(obj.Get(ast.StringTerm("field"))), fieldsAllowed)}
	}
	kt := obj.Get(ast.StringTerm("key"))
	key, ok := kt.Value.(ast.String)
	s := &dec.req.Servers[i]
	if ok {
		switch field {
		case "env":
			ok = hasPair(s.Env, string(key))
		case "headers":
			ok = hasPair(s.Headers, string(key))
		case "allowedTools":
			ok = slices.Contains(s.AllowedTools, string(key))
		}
	}
	if !ok {
		return entry{}, &MalformedError{Path: at + ".key", Msg: fmt.Sprintf("is %s, which server %q has no %s entry for", show(kt), s.ID, field)}
	}
	return entry{server: i, field: field, key: string(key)}, nil
}

func hasPair(ps []spec.Pair, name string) bool {
	return slices.ContainsFunc(ps, func(p spec.Pair) bool { return p.Name == name })
}

func (dec *decoder) drop(obj ast.Object, src source, at string) error {
	if err := checkKeys(obj, "drop", at); err != nil {
		return err
	}
	if stringField(obj, "field") == "builtinTools" {
		return dec.runDrop(obj, src, at)
	}
	if obj.Get(ast.StringTerm("server")) == nil {
		return &MalformedError{Path: at, Msg: `has no "server" (only a builtinTools drop is about the run)`}
	}
	en, err := dec.entryOf(obj, at, "env", "headers", "allowedTools")
	if err != nil {
		return err
	}
	c, msg, err := code(obj, at)
	if err != nil {
		return err
	}
	dec.drops[en] = append(dec.drops[en], Reason{Code: c, Message: msg, Rule: dec.e.where(src, c)})
	if t := obj.Get(ast.StringTerm("secret")); t != nil {
		b, ok := t.Value.(ast.Boolean)
		if !ok {
			return &MalformedError{Path: at + ".secret", Msg: fmt.Sprintf("is %s, want a boolean", show(t))}
		}
		if b {
			dec.secretDrops[en] = true
		}
	}
	return nil
}

// runDrop reads a drop of a run.builtinTools entry: no server, the key one of the request's
// built-in tools, no secret.
func (dec *decoder) runDrop(obj ast.Object, src source, at string) error {
	for _, k := range []string{"server", "secret"} {
		if obj.Get(ast.StringTerm(k)) != nil {
			return &MalformedError{Path: at + "." + k, Msg: "a builtinTools drop is about the run: it takes no " + k}
		}
	}
	kt := obj.Get(ast.StringTerm("key"))
	key, ok := kt.Value.(ast.String)
	if !ok || !slices.Contains(dec.req.Run.BuiltinTools, string(key)) {
		return &MalformedError{Path: at + ".key", Msg: fmt.Sprintf("is %s, which run.builtinTools does not list", show(kt))}
	}
	c, msg, err := code(obj, at)
	if err != nil {
		return err
	}
	dec.runDrops[string(key)] = append(dec.runDrops[string(key)], Reason{Code: c, Message: msg, Rule: dec.e.where(src, c)})
	return nil
}

func (dec *decoder) secret(obj ast.Object, at string) error {
	if err := checkKeys(obj, "secret", at); err != nil {
		return err
	}
	en, err := dec.entryOf(obj, at, "env", "headers")
	if err != nil {
		return err
	}
	dec.secrets[en] = true
	return nil
}

func (dec *decoder) warn(obj ast.Object, src source, at string) error {
	if err := checkKeys(obj, "warn", at); err != nil {
		return err
	}
	server, skill, err := dec.target(obj, at, false)
	if err != nil {
		return err
	}
	c, msg, err := code(obj, at)
	if err != nil {
		return err
	}
	w := Warning{Code: c, Message: msg, Rule: dec.e.where(src, c)}
	if server >= 0 {
		w.Server = dec.req.Servers[server].ID
	}
	if skill >= 0 {
		w.Skill = dec.req.Skills[skill].Name
	}
	dec.warnings = append(dec.warnings, indexedWarning{server: server, skill: skill, w: w})
	return nil
}

func (dec *decoder) spawnEnv(t *ast.Term, path string) error {
	obj, ok := t.Value.(ast.Object)
	if !ok {
		return &MalformedError{Path: path, Msg: fmt.Sprintf("is %s, want an object with keys and prefixes", kind(t.Value))}
	}
	var bad error
	obj.Foreach(func(k, v *ast.Term) {
		if bad != nil {
			return
		}
		name, _ := k.Value.(ast.String)
		var list *[]string
		switch name {
		case "keys":
			list = &dec.d.SpawnEnv.Keys
		case "prefixes":
			list = &dec.d.SpawnEnv.Prefixes
		default:
			bad = &MalformedError{Path: path, Msg: fmt.Sprintf("key %s is neither keys nor prefixes", k)}
			return
		}
		elems, ok := elements(v.Value)
		if !ok {
			bad = &MalformedError{Path: path + "." + string(name), Msg: fmt.Sprintf("is %s, want a list of strings", kind(v.Value))}
			return
		}
		for n, el := range elems {
			s, ok := el.Value.(ast.String)
			if !ok || s == "" {
				bad = &MalformedError{Path: indexPath(path+"."+string(name), n), Msg: fmt.Sprintf("is %s, want a non-empty string", show(el))}
				return
			}
			if !slices.Contains(*list, string(s)) {
				*list = append(*list, string(s))
			}
		}
	})
	return bad
}

// finish sorts what the rules said into request order.
func (dec *decoder) finish() {
	d := dec.d
	for i := range d.Servers {
		sd := &d.Servers[i]
		sd.Reasons = sortedReasons(sd.Reasons)
		sd.Allow = len(sd.Reasons) == 0
		s := &dec.req.Servers[i]
		sd.Drop = []Drop{}
		add := func(field, key string) {
			en := entry{i, field, key}
			for _, r := range sortedReasons(dec.drops[en]) {
				sd.Drop = append(sd.Drop, Drop{Field: field, Key: key, Reason: r, Secret: dec.secretDrops[en]})
			}
		}
		for _, p := range s.Env {
			add("env", p.Name)
		}
		for _, p := range s.Headers {
			add("headers", p.Name)
		}
		for _, t := range uniq(s.AllowedTools) {
			add("allowedTools", t)
		}
		for _, p := range s.Env {
			if dec.secrets[entry{i, "env", p.Name}] {
				d.Secrets = append(d.Secrets, SecretRef{Server: i, Field: "env", Key: p.Name})
			}
		}
		for _, p := range s.Headers {
			if dec.secrets[entry{i, "headers", p.Name}] {
				d.Secrets = append(d.Secrets, SecretRef{Server: i, Field: "headers", Key: p.Name})
			}
		}
	}
	d.Run.Drop = []Drop{}
	for _, t := range dec.req.Run.BuiltinTools {
		for _, r := range sortedReasons(dec.runDrops[t]) {
			d.Run.Drop = append(d.Run.Drop, Drop{Field: "builtinTools", Key: t, Reason: r})
		}
	}
	for k := range d.Skills {
		d.Skills[k].Reasons = sortedReasons(d.Skills[k].Reasons)
		d.Skills[k].Allow = len(d.Skills[k].Reasons) == 0
	}
	slices.SortStableFunc(dec.warnings, func(a, b indexedWarning) int {
		return cmp.Or(cmp.Compare(a.server, b.server), cmp.Compare(a.skill, b.skill),
			cmp.Compare(a.w.Code, b.w.Code), cmp.Compare(a.w.Message, b.w.Message))
	})
	for _, w := range dec.warnings {
		// A warning about a refused server is left out: that server does not run.
		if w.server >= 0 && !d.Servers[w.server].Allow {
			continue
		}
		d.Warnings = append(d.Warnings, w.w)
	}
}

// sortedReasons is rs sorted by code, one per code (the first rule's), or an empty list.
func sortedReasons(rs []Reason) []Reason {
	slices.SortStableFunc(rs, func(a, b Reason) int { return cmp.Compare(a.Code, b.Code) })
	rs = slices.CompactFunc(rs, func(a, b Reason) bool { return a.Code == b.Code })
	if rs == nil {
		return []Reason{}
	}
	return rs
}

// uniq is ss without repeats, in order.
func uniq(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// elements are the terms of a set or an array.
func elements(v ast.Value) ([]*ast.Term, bool) {
	switch v := v.(type) {
	case ast.Set:
		return v.Slice(), true
	case *ast.Array:
		out := make([]*ast.Term, v.Len())
		for i := range out {
			out[i] = v.Elem(i)
		}
		return out, true
	}
	return nil, false
}

func indexPath(prefix string, i int) string { return prefix + "[" + strconv.Itoa(i) + "]" }

func kind(v ast.Value) string {
	switch v.(type) {
	case ast.Null:
		return "null"
	case ast.Boolean:
		return "a boolean"
	case ast.Number:
		return "a number"
	case ast.String:
		return "a string"
	case *ast.Array:
		return "an array"
	case ast.Set:
		return "a set"
	case ast.Object:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// show is t as Rego spells it, cut short.
func show(t *ast.Term) string {
	if t == nil {
		return "missing"
	}
	s := t.String()
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}
