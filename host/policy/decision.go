package policy

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/loadout-dev/loadout/host/spec"
)

// Decision is the policy's decision document (data.loadout.decision), decoded and checked.
// host/policy/doc.go documents every field. A Decision is immutable once Decide returns it.
type Decision struct {
	// Servers is aligned by index with request.mcpServers.
	Servers []ServerDecision `json:"servers"`
	// Skills is aligned by index with request.skills.
	Skills []SkillDecision `json:"skills"`
	// Secrets names the entries whose values are secrets, in request order.
	Secrets  []SecretRef `json:"secrets"`
	SpawnEnv SpawnEnv    `json:"spawnEnv"`
	Warnings []Warning   `json:"warnings"`

	raw func() any // the document as the policy produced it, converted once on first use
}

// Raw is the decision document exactly as the policy produced it (for `loadout policy eval`),
// as JSON values (map[string]any, []any, string, bool, json.Number). It is converted on the
// first call; the caller must not modify it. Safe for concurrent use.
func (d *Decision) Raw() any {
	if d.raw == nil {
		return nil
	}
	return d.raw()
}

// ServerDecision is the verdict on one server.
type ServerDecision struct {
	Allow   bool     `json:"allow"`
	Reasons []string `json:"reasons"` // deny codes, sorted; empty when Allow
	Drop    []Drop   `json:"drop"`    // entries removed from an allowed server, in request order
}

// Drop removes one entry of a server: Field is "env", "headers" or "allowedTools", Key the env
// or header key or the tool entry, Reason a stable code.
type Drop struct {
	Field  string `json:"field"`
	Key    string `json:"key"`
	Reason string `json:"reason"`
}

// SkillDecision is the verdict on one skill.
type SkillDecision struct {
	Allow   bool     `json:"allow"`
	Reasons []string `json:"reasons"`
}

// SecretRef names a secret: the value of env[Key] or headers[Key] of request server Server
// (an index), or (Field "token") the run's stored token for it.
type SecretRef struct {
	Server int    `json:"server"`
	Field  string `json:"field"`
	Key    string `json:"key"`
}

// SpawnEnv names the host environment variables that reach a stdio server: exact Keys and
// every variable starting with one of Prefixes (both case-sensitive).
type SpawnEnv struct {
	Keys     []string `json:"keys"`
	Prefixes []string `json:"prefixes"`
}

// Warning is something the policy reports without refusing it.
type Warning struct {
	Code    string `json:"code"`
	Server  string `json:"server,omitempty"`
	Skill   string `json:"skill,omitempty"`
	Message string `json:"message"`
}

// decodeDecision checks and decodes the evaluated document v of req. It reads the AST the
// evaluation produced directly (no conversion to Go maps), merges each field's parts in
// order, turns their sets into the per-server verdicts of Decision (aligned with req, drops
// and secrets in request order) and refuses any index or shape the request does not have.
func decodeDecision(v ast.Value, req *spec.Request) (*Decision, error) {
	doc, ok := v.(ast.Object)
	if !ok {
		return nil, &MalformedError{Path: "decision", Msg: fmt.Sprintf("is %s, want an object", kind(v))}
	}
	d := &Decision{raw: sync.OnceValue(func() any {
		j, err := ast.JSON(v)
		if err != nil {
			return nil
		}
		return j
	})}
	nServers, nSkills := len(req.Servers), len(req.Skills)
	d.Servers = make([]ServerDecision, nServers)
	d.Skills = make([]SkillDecision, nSkills)
	if err := eachPart(doc, "servers", func(part ast.Object, p string) error {
		return eachCode(part, p, nServers, func(code string, i int) {
			d.Servers[i].Reasons = append(d.Servers[i].Reasons, code)
		})
	}); err != nil {
		return nil, err
	}
	if err := eachPart(doc, "skills", func(part ast.Object, p string) error {
		return eachCode(part, p, nSkills, func(code string, k int) {
			d.Skills[k].Reasons = append(d.Skills[k].Reasons, code)
		})
	}); err != nil {
		return nil, err
	}
	var drops [3]map[EntryRef]string
	if err := eachPart(doc, "drop", func(part ast.Object, p string) error {
		for f, field := range dropFields {
			var err error
			if drops[f], err = dropReasons(drops[f], part, p, field, nServers); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	var envSecrets, headerSecrets map[EntryRef]bool
	var tokens map[int]bool
	if err := eachPart(doc, "secrets", func(part ast.Object, p string) error {
		var err error
		if envSecrets, err = entrySet(envSecrets, part, "env", p, nServers); err != nil {
			return err
		}
		if headerSecrets, err = entrySet(headerSecrets, part, "headers", p, nServers); err != nil {
			return err
		}
		tokens, err = indexSet(tokens, part, "token", p, nServers)
		return err
	}); err != nil {
		return nil, err
	}
	d.SpawnEnv = SpawnEnv{Keys: []string{}, Prefixes: []string{}}
	if err := eachPart(doc, "spawnEnv", func(part ast.Object, p string) error {
		keys, err := stringList(part, "keys", p)
		if err != nil {
			return err
		}
		prefixes, err := stringList(part, "prefixes", p)
		if err != nil {
			return err
		}
		for i, pfx := range prefixes {
			if pfx == "" {
				return &MalformedError{Path: indexPath(p+".prefixes", i), Msg: "is empty: it would pass the whole host environment"}
			}
		}
		d.SpawnEnv.Keys = appendNew(d.SpawnEnv.Keys, keys)
		d.SpawnEnv.Prefixes = appendNew(d.SpawnEnv.Prefixes, prefixes)
		return nil
	}); err != nil {
		return nil, err
	}
	warnings, err := array(doc, "warnings", "warnings")
	if err != nil {
		return nil, err
	}
	var warned []int // server index of each warning, or -1
	for n := range warnings.Len() {
		if d.Warnings, warned, err = decodeWarnings(warnings.Elem(n).Value, d.Warnings, warned, req); err != nil {
			return nil, under(err, indexPath("warnings", n))
		}
	}
	for i := range d.Servers {
		d.Servers[i].Reasons = verdict(d.Servers[i].Reasons)
		d.Servers[i].Allow = len(d.Servers[i].Reasons) == 0
	}
	// A warning about a refused server is left out: that server does not run.
	if d.Warnings == nil {
		d.Warnings = []Warning{}
	}
	kept := d.Warnings[:0]
	for i, w := range d.Warnings {
		if warned[i] < 0 || d.Servers[warned[i]].Allow {
			kept = append(kept, w)
		}
	}
	d.Warnings = kept
	for k := range d.Skills {
		d.Skills[k].Reasons = verdict(d.Skills[k].Reasons)
		d.Skills[k].Allow = len(d.Skills[k].Reasons) == 0
	}

	d.Secrets = []SecretRef{}
	for i := range req.Servers {
		s := &req.Servers[i]
		sd := &d.Servers[i]
		sd.Drop = []Drop{}
		sd.Drop = appendDrops(sd.Drop, drops[0], i, "env", pairNames(s.Env))
		sd.Drop = appendDrops(sd.Drop, drops[1], i, "headers", pairNames(s.Headers))
		sd.Drop = appendDrops(sd.Drop, drops[2], i, "allowedTools", slices.Values(s.AllowedTools))
		if !sd.Allow {
			continue
		}
		for _, p := range s.Env {
			r := EntryRef{Server: i, Key: p.Name}
			if envSecrets[r] && drops[0][r] == "" {
				d.Secrets = append(d.Secrets, SecretRef{Server: i, Field: "env", Key: p.Name})
			}
		}
		for _, p := range s.Headers {
			r := EntryRef{Server: i, Key: p.Name}
			if headerSecrets[r] && drops[1][r] == "" {
				d.Secrets = append(d.Secrets, SecretRef{Server: i, Field: "headers", Key: p.Name})
			}
		}
		if tokens[i] {
			key := "MCP_ACCESS_TOKEN"
			if s.Transport == "http" {
				key = "Authorization"
			}
			d.Secrets = append(d.Secrets, SecretRef{Server: i, Field: "token", Key: key})
		}
	}
	return d, nil
}

// eachPart calls f for each part of doc[key], a list of objects. f's error paths are relative
// to the part ("" is the part itself): the part's path is only spelled for an error.
func eachPart(doc ast.Object, key string, f func(part ast.Object, path string) error) error {
	parts, err := array(doc, key, key)
	if err != nil {
		return err
	}
	for n := range parts.Len() {
		part, ok := parts.Elem(n).Value.(ast.Object)
		if !ok {
			return &MalformedError{Path: indexPath(key, n), Msg: fmt.Sprintf("is %s, want an object", kind(parts.Elem(n).Value))}
		}
		if err := f(part, ""); err != nil {
			return under(err, indexPath(key, n))
		}
	}
	return nil
}

// appendNew appends to out the strings of add it does not hold yet (add itself when out is
// empty and add has no repeats).
func appendNew(out, add []string) []string {
	if len(out) == 0 && !hasRepeats(add) {
		return add
	}
	for _, s := range add {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// hasRepeats reports whether a string occurs twice in ss.
func hasRepeats(ss []string) bool {
	for i, s := range ss {
		if slices.Contains(ss[i+1:], s) {
			return true
		}
	}
	return false
}

// dropFields are the fields of decision.drop, in the order a server's drops are listed.
var dropFields = [3]string{"env", "headers", "allowedTools"}

// verdict is codes sorted without repeats, or an empty list.
func verdict(codes []string) []string {
	if len(codes) == 0 {
		return []string{}
	}
	slices.Sort(codes)
	return slices.Compact(codes)
}

// eachCode calls f(code, index) for every index of every code of o, an object of code: set
// of indices below n at path.
func eachCode(o ast.Object, path string, n int, f func(string, int)) error {
	for _, k := range o.Keys() {
		code, ok := k.Value.(ast.String)
		if !ok || code == "" {
			return &MalformedError{Path: path, Msg: fmt.Sprintf("has key %s, want a code", k)}
		}
		v := o.Get(k).Value
		ts, ok := elems(v)
		if !ok {
			return &MalformedError{Path: path + "." + string(code), Msg: fmt.Sprintf("is %s, want a set", kind(v))}
		}
		for _, t := range ts {
			i, ok := index(t, n)
			if !ok {
				return &MalformedError{Path: path + "." + string(code), Msg: fmt.Sprintf("holds %s, want an index below %d", t, n)}
			}
			f(string(code), i)
		}
	}
	return nil
}

// dropReasons adds to out, the first reason of each entry so far, the entries of drop[field],
// a list of [code, set of [server, key]] in priority order; path is drop's.
func dropReasons(out map[EntryRef]string, drop ast.Object, path, field string, n int) (map[EntryRef]string, error) {
	if get(drop, field) == nil {
		return out, nil
	}
	a, err := array(drop, field, path)
	if err != nil {
		return nil, err
	}
	for j := range a.Len() {
		pair, ok := a.Elem(j).Value.(*ast.Array)
		if !ok || pair.Len() != 2 {
			return nil, &MalformedError{Path: indexPath(path+"."+field, j), Msg: fmt.Sprintf("is %s, want [code, entries]", kind(a.Elem(j).Value))}
		}
		code, ok := pair.Elem(0).Value.(ast.String)
		if !ok || code == "" {
			return nil, &MalformedError{Path: indexPath(path+"."+field, j) + "[0]", Msg: fmt.Sprintf("is %s, want a code", show(pair.Elem(0)))}
		}
		ts, ok := elems(pair.Elem(1).Value)
		if !ok {
			return nil, &MalformedError{Path: indexPath(path+"."+field, j) + "[1]", Msg: fmt.Sprintf("is %s, want a set", kind(pair.Elem(1).Value))}
		}
		for _, t := range ts {
			r, ok := entryRef(t, n)
			if !ok {
				return nil, &MalformedError{Path: indexPath(path+"."+field, j) + "[1]", Msg: fmt.Sprintf("holds %s, want [server index, key]", t)}
			}
			if out == nil {
				out = map[EntryRef]string{}
			}
			if _, seen := out[r]; !seen {
				out[r] = string(code)
			}
		}
	}
	return out, nil
}

// entrySet adds to out the elements of o[key], a set of [server, key] pairs (none when o has
// no key).
func entrySet(out map[EntryRef]bool, o ast.Object, key, path string, n int) (map[EntryRef]bool, error) {
	v := get(o, key)
	if v == nil {
		return out, nil
	}
	ts, ok := elems(v)
	if !ok {
		return nil, &MalformedError{Path: path + "." + key, Msg: fmt.Sprintf("is %s, want a set", kind(v))}
	}
	for _, t := range ts {
		r, ok := entryRef(t, n)
		if !ok {
			return nil, &MalformedError{Path: path + "." + key, Msg: fmt.Sprintf("holds %s, want [server index, key]", t)}
		}
		if out == nil {
			out = map[EntryRef]bool{}
		}
		out[r] = true
	}
	return out, nil
}

// indexSet adds to out the elements of o[key], a set of indices below n (none when o has no
// key).
func indexSet(out map[int]bool, o ast.Object, key, path string, n int) (map[int]bool, error) {
	v := get(o, key)
	if v == nil {
		return out, nil
	}
	ts, ok := elems(v)
	if !ok {
		return nil, &MalformedError{Path: path + "." + key, Msg: fmt.Sprintf("is %s, want a set", kind(v))}
	}
	for _, t := range ts {
		i, ok := index(t, n)
		if !ok {
			return nil, &MalformedError{Path: path + "." + key, Msg: fmt.Sprintf("holds %s, want an index below %d", t, n)}
		}
		if out == nil {
			out = map[int]bool{}
		}
		out[i] = true
	}
	return out, nil
}

// elems are the elements of v, a set (in its sorted order, not copied) or an array.
func elems(v ast.Value) ([]*ast.Term, bool) {
	switch c := v.(type) {
	case ast.Set:
		return c.Slice(), true
	case *ast.Array:
		ts := make([]*ast.Term, c.Len())
		for i := range ts {
			ts[i] = c.Elem(i)
		}
		return ts, true
	}
	return nil, false
}

// index is t as an int in [0, n).
func index(t *ast.Term, n int) (int, bool) {
	num, ok := t.Value.(ast.Number)
	if !ok {
		return 0, false
	}
	i, ok := num.Int()
	return i, ok && i >= 0 && i < n
}

// entryRef is t, a [server, key] pair with a server index below n.
func entryRef(t *ast.Term, n int) (EntryRef, bool) {
	a, ok := t.Value.(*ast.Array)
	if !ok || a.Len() != 2 {
		return EntryRef{}, false
	}
	i, ok := index(a.Elem(0), n)
	if !ok {
		return EntryRef{}, false
	}
	k, ok := a.Elem(1).Value.(ast.String)
	return EntryRef{Server: i, Key: string(k)}, ok
}

// appendDrops appends to out the drops of server i's field, one per key in request order.
func appendDrops(out []Drop, reasons map[EntryRef]string, i int, field string, keys iter.Seq[string]) []Drop {
	if len(reasons) == 0 {
		return out
	}
	start := len(out)
	for k := range keys {
		r, ok := reasons[EntryRef{Server: i, Key: k}]
		if !ok || slices.ContainsFunc(out[start:], func(d Drop) bool { return d.Key == k }) {
			continue
		}
		out = append(out, Drop{Field: field, Key: k, Reason: r})
	}
	return out
}

// pairNames yields the names of ps.
func pairNames(ps []spec.Pair) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, p := range ps {
			if !yield(p.Name) {
				return
			}
		}
	}
}

// decodeWarnings appends to out the warnings of one part v, {code, message, servers?,
// skills?}: one per server index of servers, then one per skill index of skills, or one about
// neither when the part has no such set; warned gets the server index of each (or -1). Error
// paths are relative to the part.
func decodeWarnings(v ast.Value, out []Warning, warned []int, req *spec.Request) ([]Warning, []int, error) {
	o, err := object(v, "")
	if err != nil {
		return nil, nil, err
	}
	var w Warning
	if w.Code, err = nonEmptyString(o, "code", ""); err != nil {
		return nil, nil, err
	}
	if w.Message, err = stringField(o, "message", ""); err != nil {
		return nil, nil, err
	}
	servers, skills := get(o, "servers"), get(o, "skills")
	if servers == nil && skills == nil {
		return append(out, w), append(warned, -1), nil
	}
	if servers != nil {
		ts, ok := elems(servers)
		if !ok {
			return nil, nil, &MalformedError{Path: ".servers", Msg: fmt.Sprintf("is %s, want a set", kind(servers))}
		}
		for _, t := range ts {
			i, ok := index(t, len(req.Servers))
			if !ok {
				return nil, nil, &MalformedError{Path: ".servers", Msg: fmt.Sprintf("holds %s, want a request server index", t)}
			}
			ws := w
			ws.Server = req.Servers[i].ID
			out, warned = append(out, ws), append(warned, i)
		}
	}
	if skills != nil {
		ts, ok := elems(skills)
		if !ok {
			return nil, nil, &MalformedError{Path: ".skills", Msg: fmt.Sprintf("is %s, want a set", kind(skills))}
		}
		for _, t := range ts {
			k, ok := index(t, len(req.Skills))
			if !ok {
				return nil, nil, &MalformedError{Path: ".skills", Msg: fmt.Sprintf("holds %s, want a request skill index", t)}
			}
			ws := w
			ws.Skill = req.Skills[k].Name
			out, warned = append(out, ws), append(warned, -1)
		}
	}
	return out, warned, nil
}

// under prefixes the path of a *MalformedError with prefix.
func under(err error, prefix string) error {
	var me *MalformedError
	if errors.As(err, &me) {
		me.Path = prefix + me.Path
	}
	return err
}

// indexPath is prefix[i]; it is only built on the error path or per array entry.
func indexPath(prefix string, i int) string {
	return prefix + "[" + strconv.Itoa(i) + "]"
}

// Keys of the decision document, as terms built once.
var docKeys = map[string]*ast.Term{}

func init() {
	for _, k := range []string{"servers", "skills", "drop", "secrets", "spawnEnv", "warnings", "env", "headers",
		"allowedTools", "token", "keys", "prefixes", "code", "message", "servers", "skills"} {
		docKeys[k] = ast.StringTerm(k)
	}
}

// get is o[key], or nil when o has no such key.
func get(o ast.Object, key string) ast.Value {
	kt, ok := docKeys[key]
	if !ok {
		kt = ast.StringTerm(key)
	}
	if t := o.Get(kt); t != nil {
		return t.Value
	}
	return nil
}

func kind(v ast.Value) string {
	switch v.(type) {
	case nil, ast.Null:
		return "null"
	case ast.Object:
		return "an object"
	case *ast.Array:
		return "an array"
	case ast.Set:
		return "a set"
	case ast.String:
		return "a string"
	case ast.Boolean:
		return "a boolean"
	case ast.Number:
		return "a number"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// show is t's value in Rego syntax, or "undefined".
func show(t *ast.Term) string {
	if t == nil {
		return "undefined"
	}
	return t.Value.String()
}

func object(v ast.Value, path string) (ast.Object, error) {
	o, ok := v.(ast.Object)
	if !ok {
		return nil, &MalformedError{Path: path, Msg: fmt.Sprintf("is %s, want an object", kind(v))}
	}
	return o, nil
}

func array(o ast.Object, key, path string) (*ast.Array, error) {
	v := get(o, key)
	a, ok := v.(*ast.Array)
	if !ok {
		p := key
		if path != key {
			p = path + "." + key
		}
		return nil, &MalformedError{Path: p, Msg: fmt.Sprintf("is %s, want an array", kind(v))}
	}
	return a, nil
}

func boolField(o ast.Object, key, path string) (bool, error) {
	v := get(o, key)
	b, ok := v.(ast.Boolean)
	if !ok {
		return false, &MalformedError{Path: path + "." + key, Msg: fmt.Sprintf("is %s, want a boolean", kind(v))}
	}
	return bool(b), nil
}

func stringField(o ast.Object, key, path string) (string, error) {
	v := get(o, key)
	s, ok := v.(ast.String)
	if !ok {
		return "", &MalformedError{Path: path + "." + key, Msg: fmt.Sprintf("is %s, want a string", kind(v))}
	}
	return string(s), nil
}

func nonEmptyString(o ast.Object, key, path string) (string, error) {
	s, err := stringField(o, key, path)
	if err == nil && s == "" {
		err = &MalformedError{Path: path + "." + key, Msg: "is empty, want a code"}
	}
	return s, err
}

func stringList(o ast.Object, key, path string) ([]string, error) {
	a, err := array(o, key, path)
	if err != nil {
		return nil, err
	}
	out := make([]string, a.Len())
	for i := range out {
		s, ok := a.Elem(i).Value.(ast.String)
		if !ok {
			return nil, &MalformedError{Path: fmt.Sprintf("%s.%s[%d]", path, key, i), Msg: fmt.Sprintf("is %s, want a string", kind(a.Elem(i).Value))}
		}
		out[i] = string(s)
	}
	return out, nil
}
