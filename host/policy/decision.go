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
// evaluation produced directly (no conversion to Go maps), reads the statements of its parts
// in order, turns their sets into the per-server verdicts of Decision (aligned with req,
// drops and secrets in request order) and refuses any index or shape the request does not
// have.
func decodeDecision(v ast.Value, req *spec.Request) (*Decision, error) {
	parts, ok := v.(*ast.Array)
	if !ok {
		return nil, &MalformedError{Path: "decision", Msg: fmt.Sprintf("is %s, want a list of parts", kind(v))}
	}
	d := &Decision{raw: sync.OnceValue(func() any {
		interned.RLock() // see interned
		defer interned.RUnlock()
		j, err := ast.JSON(v)
		if err != nil {
			return nil
		}
		return j
	})}
	dec := decoder{req: req, d: d}
	d.Servers = make([]ServerDecision, len(req.Servers))
	d.Skills = make([]SkillDecision, len(req.Skills))
	d.SpawnEnv = SpawnEnv{Keys: []string{}, Prefixes: []string{}}
	for n := range parts.Len() {
		part, ok := parts.Elem(n).Value.(*ast.Array)
		if !ok {
			return nil, &MalformedError{Path: indexPath("decision", n), Msg: fmt.Sprintf("is %s, want a list of statements", kind(parts.Elem(n).Value))}
		}
		for at := 0; at < part.Len(); {
			next, err := dec.statement(part, at)
			if err != nil {
				return nil, under(err, indexPath("decision", n))
			}
			at = next
		}
	}
	for i := range d.Servers {
		d.Servers[i].Reasons = verdict(d.Servers[i].Reasons)
		d.Servers[i].Allow = len(d.Servers[i].Reasons) == 0
	}
	// A warning about a refused server is left out: that server does not run.
	d.Warnings = []Warning{}
	for i, w := range dec.warnings {
		if dec.warned[i] < 0 || d.Servers[dec.warned[i]].Allow {
			d.Warnings = append(d.Warnings, w)
		}
	}
	for k := range d.Skills {
		d.Skills[k].Reasons = verdict(d.Skills[k].Reasons)
		d.Skills[k].Allow = len(d.Skills[k].Reasons) == 0
	}

	drops := &dec.drops
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
			if dec.envSecrets[r] && drops[0][r] == "" {
				d.Secrets = append(d.Secrets, SecretRef{Server: i, Field: "env", Key: p.Name})
			}
		}
		for _, p := range s.Headers {
			r := EntryRef{Server: i, Key: p.Name}
			if dec.headerSecrets[r] && drops[1][r] == "" {
				d.Secrets = append(d.Secrets, SecretRef{Server: i, Field: "headers", Key: p.Name})
			}
		}
		if dec.tokens[i] {
			key := "MCP_ACCESS_TOKEN"
			if s.Transport == "http" {
				key = "Authorization"
			}
			d.Secrets = append(d.Secrets, SecretRef{Server: i, Field: "token", Key: key})
		}
	}
	return d, nil
}

// decoder accumulates the statements of one decision.
type decoder struct {
	req *spec.Request
	d   *Decision
	// drops are the reason of each dropped entry (its first), per field of dropFields.
	drops                     [3]map[EntryRef]string
	envSecrets, headerSecrets map[EntryRef]bool
	tokens                    map[int]bool
	warnings                  []Warning
	warned                    []int // server index of each warning, or -1
}

// statement decodes the statement of part that starts at element at, and returns where the
// next one starts. Error paths are relative to the part.
func (dec *decoder) statement(part *ast.Array, at int) (int, error) {
	verb, ok := part.Elem(at).Value.(ast.String)
	if !ok {
		return 0, &MalformedError{Path: indexPath("", at), Msg: fmt.Sprintf("is %s, want a statement (server, skill, drop, secret, warn, warn_skill or spawn_env)", show(part.Elem(at)))}
	}
	n := arity[string(verb)]
	if n == 0 {
		return 0, &MalformedError{Path: indexPath("", at), Msg: fmt.Sprintf("is %s, want a statement (server, skill, drop, secret, warn, warn_skill or spawn_env)", verb)}
	}
	if at+n > part.Len() {
		return 0, &MalformedError{Path: indexPath("", at), Msg: fmt.Sprintf("%s statement has %d of its %d values", verb, part.Len()-at-1, n-1)}
	}
	arg := func(k int) *ast.Term { return part.Elem(at + k) }
	// pos(k) is where value k is: its path, "[at+k]", is only spelled for an error.
	pos := func(k int) int { return at + k }
	nServers := len(dec.req.Servers)
	switch verb {
	case "server", "skill":
		code, err := codeArg(arg(1), pos(1))
		if err != nil {
			return 0, err
		}
		limit, reasons := nServers, func(i int) *[]string { return &dec.d.Servers[i].Reasons }
		if verb == "skill" {
			limit, reasons = len(dec.req.Skills), func(k int) *[]string { return &dec.d.Skills[k].Reasons }
		}
		err = eachIndex(arg(2), pos(2), limit, func(i int) { *reasons(i) = append(*reasons(i), code) })
		return at + n, err
	case "drop":
		f := slices.Index(dropFields[:], fieldName(arg(1)))
		if f < 0 {
			return 0, &MalformedError{Path: elemPath(pos(1)), Msg: fmt.Sprintf("is %s, want env, headers or allowedTools", show(arg(1)))}
		}
		code, err := codeArg(arg(2), pos(2))
		if err != nil {
			return 0, err
		}
		err = eachEntry(arg(3), pos(3), nServers, func(r EntryRef) {
			if dec.drops[f] == nil {
				dec.drops[f] = map[EntryRef]string{}
			}
			if _, seen := dec.drops[f][r]; !seen {
				dec.drops[f][r] = code
			}
		})
		return at + n, err
	case "secret":
		var err error
		switch fieldName(arg(1)) {
		case "env":
			err = eachEntry(arg(2), pos(2), nServers, func(r EntryRef) { dec.envSecrets = setTrue(dec.envSecrets, r) })
		case "headers":
			err = eachEntry(arg(2), pos(2), nServers, func(r EntryRef) { dec.headerSecrets = setTrue(dec.headerSecrets, r) })
		case "token":
			err = eachIndex(arg(2), pos(2), nServers, func(i int) { dec.tokens = setTrue(dec.tokens, i) })
		default:
			err = &MalformedError{Path: elemPath(pos(1)), Msg: fmt.Sprintf("is %s, want env, headers or token", show(arg(1)))}
		}
		return at + n, err
	case "warn", "warn_skill":
		code, err := codeArg(arg(1), pos(1))
		if err != nil {
			return 0, err
		}
		msg, ok := arg(2).Value.(ast.String)
		if !ok {
			return 0, &MalformedError{Path: elemPath(pos(2)), Msg: fmt.Sprintf("is %s, want a message", kind(arg(2).Value))}
		}
		w := Warning{Code: code, Message: string(msg)}
		if verb == "warn_skill" {
			err = eachIndex(arg(3), pos(3), len(dec.req.Skills), func(k int) {
				w.Skill = dec.req.Skills[k].Name
				dec.warnings, dec.warned = append(dec.warnings, w), append(dec.warned, -1)
			})
			return at + n, err
		}
		err = eachIndex(arg(3), pos(3), nServers, func(i int) {
			w.Server = dec.req.Servers[i].ID
			dec.warnings, dec.warned = append(dec.warnings, w), append(dec.warned, i)
		})
		return at + n, err
	default: // spawn_env
		keys, err := stringList(arg(1), pos(1))
		if err != nil {
			return 0, err
		}
		prefixes, err := stringList(arg(2), pos(2))
		if err != nil {
			return 0, err
		}
		for i, pfx := range prefixes {
			if pfx == "" {
				return 0, &MalformedError{Path: indexPath(elemPath(pos(2)), i), Msg: "is empty: it would pass the whole host environment"}
			}
		}
		dec.d.SpawnEnv.Keys = appendNew(dec.d.SpawnEnv.Keys, keys)
		dec.d.SpawnEnv.Prefixes = appendNew(dec.d.SpawnEnv.Prefixes, prefixes)
		return at + n, nil
	}
}

// arity is the number of elements of each statement, its verb included.
var arity = map[string]int{
	"server":     3, // "server", code, {server index...}
	"skill":      3, // "skill", code, {skill index...}
	"drop":       4, // "drop", field, code, {[server index, key]...}
	"secret":     3, // "secret", "env"|"headers", {[server index, key]...} or "secret", "token", {server index...}
	"warn":       4, // "warn", code, message, {server index...}
	"warn_skill": 4, // "warn_skill", code, message, {skill index...}
	"spawn_env":  3, // "spawn_env", [key...], [prefix...]
}

// fieldName is t's string, or "" when t is no string.
func fieldName(t *ast.Term) string {
	s, _ := t.Value.(ast.String)
	return string(s)
}

// elemPath is the path of element at of a part, relative to the part.
func elemPath(at int) string { return indexPath("", at) }

// codeArg is t, element at of a part, as a reason code: a non-empty string.
func codeArg(t *ast.Term, at int) (string, error) {
	code, ok := t.Value.(ast.String)
	if !ok || code == "" {
		return "", &MalformedError{Path: elemPath(at), Msg: fmt.Sprintf("is %s, want a code", show(t))}
	}
	return string(code), nil
}

func setTrue[K comparable](m map[K]bool, k K) map[K]bool {
	if m == nil {
		m = map[K]bool{}
	}
	m[k] = true
	return m
}

// eachIndex calls f for each element of t, a set of indices below n.
func eachIndex(t *ast.Term, at int, n int, f func(int)) error {
	ts, ok := elems(t.Value)
	if !ok {
		return &MalformedError{Path: elemPath(at), Msg: fmt.Sprintf("is %s, want a set", kind(t.Value))}
	}
	for _, e := range ts {
		i, ok := index(e, n)
		if !ok {
			return &MalformedError{Path: elemPath(at), Msg: fmt.Sprintf("holds %s, want an index below %d", e, n)}
		}
		f(i)
	}
	return nil
}

// eachEntry calls f for each element of t, a set of [server index, key] pairs with a server
// index below n.
func eachEntry(t *ast.Term, at int, n int, f func(EntryRef)) error {
	ts, ok := elems(t.Value)
	if !ok {
		return &MalformedError{Path: elemPath(at), Msg: fmt.Sprintf("is %s, want a set", kind(t.Value))}
	}
	for _, e := range ts {
		r, ok := entryRef(e, n)
		if !ok {
			return &MalformedError{Path: elemPath(at), Msg: fmt.Sprintf("holds %s, want [server index, key]", e)}
		}
		f(r)
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

// dropFields are the fields a drop statement names, in the order a server's drops are listed.
var dropFields = [3]string{"env", "headers", "allowedTools"}

// verdict is codes sorted without repeats, or an empty list.
func verdict(codes []string) []string {
	if len(codes) == 0 {
		return []string{}
	}
	slices.Sort(codes)
	return slices.Compact(codes)
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

// stringList is t, element at of a part, as a list of strings.
func stringList(t *ast.Term, at int) ([]string, error) {
	a, ok := t.Value.(*ast.Array)
	if !ok {
		return nil, &MalformedError{Path: elemPath(at), Msg: fmt.Sprintf("is %s, want a list of strings", kind(t.Value))}
	}
	out := make([]string, a.Len())
	for i := range out {
		s, ok := a.Elem(i).Value.(ast.String)
		if !ok {
			return nil, &MalformedError{Path: indexPath(elemPath(at), i), Msg: fmt.Sprintf("is %s, want a string", kind(a.Elem(i).Value))}
		}
		out[i] = string(s)
	}
	return out, nil
}
