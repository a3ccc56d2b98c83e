package policy

import (
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
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

// decodeDecision checks and decodes the evaluated document v, whose servers and skills arrays
// must have nServers and nSkills entries. It reads the AST the evaluation produced directly:
// no conversion to Go maps.
func decodeDecision(v ast.Value, nServers, nSkills int) (*Decision, error) {
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
	servers, err := array(doc, "servers", "servers")
	if err != nil {
		return nil, err
	}
	if servers.Len() != nServers {
		return nil, &MalformedError{Path: "servers", Msg: fmt.Sprintf("has %d entries, want one per request server (%d)", servers.Len(), nServers)}
	}
	d.Servers = make([]ServerDecision, servers.Len())
	for i := range d.Servers {
		if err := decodeServer(servers.Elem(i).Value, &d.Servers[i]); err != nil {
			return nil, under(err, indexPath("servers", i))
		}
	}
	skills, err := array(doc, "skills", "skills")
	if err != nil {
		return nil, err
	}
	if skills.Len() != nSkills {
		return nil, &MalformedError{Path: "skills", Msg: fmt.Sprintf("has %d entries, want one per request skill (%d)", skills.Len(), nSkills)}
	}
	d.Skills = make([]SkillDecision, skills.Len())
	for i := range d.Skills {
		p := indexPath("skills", i)
		o, err := object(skills.Elem(i).Value, p)
		if err != nil {
			return nil, err
		}
		if d.Skills[i].Allow, err = boolField(o, "allow", p); err != nil {
			return nil, err
		}
		if d.Skills[i].Reasons, err = stringList(o, "reasons", p); err != nil {
			return nil, err
		}
		if d.Skills[i].Allow != (len(d.Skills[i].Reasons) == 0) {
			return nil, &MalformedError{Path: p, Msg: "allow must be true exactly when reasons is empty"}
		}
	}
	secrets, err := array(doc, "secrets", "secrets")
	if err != nil {
		return nil, err
	}
	d.Secrets = make([]SecretRef, secrets.Len())
	for i := range d.Secrets {
		p := indexPath("secrets", i)
		o, err := object(secrets.Elem(i).Value, p)
		if err != nil {
			return nil, err
		}
		s := &d.Secrets[i]
		sv := o.Get(termServer)
		var idx int
		ok := false
		if sv != nil {
			if n, isNum := sv.Value.(ast.Number); isNum {
				idx, ok = n.Int()
			}
		}
		if !ok || idx < 0 || idx >= nServers {
			return nil, &MalformedError{Path: p + ".server", Msg: fmt.Sprintf("is %s, want a request server index", show(sv))}
		}
		s.Server = idx
		if s.Field, err = stringField(o, "field", p); err != nil {
			return nil, err
		}
		if s.Field != "env" && s.Field != "headers" && s.Field != "token" {
			return nil, &MalformedError{Path: p + ".field", Msg: fmt.Sprintf("is %q, want env, headers or token", s.Field)}
		}
		if s.Key, err = stringField(o, "key", p); err != nil {
			return nil, err
		}
	}
	se, err := object(get(doc, "spawnEnv"), "spawnEnv")
	if err != nil {
		return nil, err
	}
	if d.SpawnEnv.Keys, err = stringList(se, "keys", "spawnEnv"); err != nil {
		return nil, err
	}
	if d.SpawnEnv.Prefixes, err = stringList(se, "prefixes", "spawnEnv"); err != nil {
		return nil, err
	}
	for i, pfx := range d.SpawnEnv.Prefixes {
		if pfx == "" {
			return nil, &MalformedError{Path: indexPath("spawnEnv.prefixes", i), Msg: "is empty: it would pass the whole host environment"}
		}
	}
	warnings, err := array(doc, "warnings", "warnings")
	if err != nil {
		return nil, err
	}
	d.Warnings = make([]Warning, warnings.Len())
	for i := range d.Warnings {
		p := indexPath("warnings", i)
		o, err := object(warnings.Elem(i).Value, p)
		if err != nil {
			return nil, err
		}
		w := &d.Warnings[i]
		if w.Code, err = nonEmptyString(o, "code", p); err != nil {
			return nil, err
		}
		if w.Message, err = stringField(o, "message", p); err != nil {
			return nil, err
		}
		if w.Server, err = optionalString(o, "server", p); err != nil {
			return nil, err
		}
		if w.Skill, err = optionalString(o, "skill", p); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// decodeServer decodes one entry of servers into sd. Error paths are relative to the entry
// (the caller prefixes them): no path string is built unless the entry is malformed.
func decodeServer(v ast.Value, sd *ServerDecision) error {
	o, err := object(v, "")
	if err != nil {
		return err
	}
	if sd.Allow, err = boolField(o, "allow", ""); err != nil {
		return err
	}
	if sd.Reasons, err = stringList(o, "reasons", ""); err != nil {
		return err
	}
	if sd.Allow != (len(sd.Reasons) == 0) {
		return &MalformedError{Msg: "allow must be true exactly when reasons is empty"}
	}
	drops, err := array(o, "drop", "")
	if err != nil {
		return err
	}
	sd.Drop = make([]Drop, drops.Len())
	for j := range sd.Drop {
		if err := decodeDrop(drops.Elem(j).Value, &sd.Drop[j]); err != nil {
			return under(err, indexPath(".drop", j))
		}
	}
	return nil
}

// decodeDrop decodes one drop into dr; error paths are relative to it.
func decodeDrop(v ast.Value, dr *Drop) error {
	do, err := object(v, "")
	if err != nil {
		return err
	}
	if dr.Field, err = stringField(do, "field", ""); err != nil {
		return err
	}
	if dr.Field != "env" && dr.Field != "headers" && dr.Field != "allowedTools" {
		return &MalformedError{Path: ".field", Msg: fmt.Sprintf("is %q, want env, headers or allowedTools", dr.Field)}
	}
	if dr.Key, err = stringField(do, "key", ""); err != nil {
		return err
	}
	if dr.Reason, err = nonEmptyString(do, "reason", ""); err != nil {
		return err
	}
	return nil
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
var (
	termServer = ast.StringTerm("server")
	docKeys    = map[string]*ast.Term{}
)

func init() {
	for _, k := range []string{"servers", "skills", "secrets", "spawnEnv", "warnings", "allow", "reasons", "drop",
		"field", "key", "reason", "server", "keys", "prefixes", "code", "message", "skill"} {
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

func optionalString(o ast.Object, key, path string) (string, error) {
	if get(o, key) == nil {
		return "", nil
	}
	return stringField(o, key, path)
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
