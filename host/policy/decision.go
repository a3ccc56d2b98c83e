package policy

import (
	"encoding/json"
	"fmt"
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

	raw any // the document as the policy produced it
}

// Raw is the decision document exactly as the policy produced it (for `loadout policy eval`).
// The caller must not modify it.
func (d *Decision) Raw() any { return d.raw }

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
// must have nServers and nSkills entries.
func decodeDecision(v any, nServers, nSkills int) (*Decision, error) {
	doc, ok := v.(map[string]any)
	if !ok {
		return nil, &MalformedError{Path: "decision", Msg: fmt.Sprintf("is %s, want an object", kind(v))}
	}
	d := &Decision{raw: v}
	servers, err := array(doc, "servers", "servers")
	if err != nil {
		return nil, err
	}
	if len(servers) != nServers {
		return nil, &MalformedError{Path: "servers", Msg: fmt.Sprintf("has %d entries, want one per request server (%d)", len(servers), nServers)}
	}
	d.Servers = make([]ServerDecision, len(servers))
	for i, sv := range servers {
		p := fmt.Sprintf("servers[%d]", i)
		o, err := object(sv, p)
		if err != nil {
			return nil, err
		}
		sd := &d.Servers[i]
		if sd.Allow, err = boolField(o, "allow", p); err != nil {
			return nil, err
		}
		if sd.Reasons, err = stringList(o, "reasons", p); err != nil {
			return nil, err
		}
		if sd.Allow != (len(sd.Reasons) == 0) {
			return nil, &MalformedError{Path: p, Msg: "allow must be true exactly when reasons is empty"}
		}
		drops, err := array(o, "drop", p)
		if err != nil {
			return nil, err
		}
		sd.Drop = make([]Drop, len(drops))
		for j, dv := range drops {
			dp := fmt.Sprintf("%s.drop[%d]", p, j)
			do, err := object(dv, dp)
			if err != nil {
				return nil, err
			}
			dr := &sd.Drop[j]
			if dr.Field, err = stringField(do, "field", dp); err != nil {
				return nil, err
			}
			if dr.Field != "env" && dr.Field != "headers" && dr.Field != "allowedTools" {
				return nil, &MalformedError{Path: dp + ".field", Msg: fmt.Sprintf("is %q, want env, headers or allowedTools", dr.Field)}
			}
			if dr.Key, err = stringField(do, "key", dp); err != nil {
				return nil, err
			}
			if dr.Reason, err = nonEmptyString(do, "reason", dp); err != nil {
				return nil, err
			}
		}
	}
	skills, err := array(doc, "skills", "skills")
	if err != nil {
		return nil, err
	}
	if len(skills) != nSkills {
		return nil, &MalformedError{Path: "skills", Msg: fmt.Sprintf("has %d entries, want one per request skill (%d)", len(skills), nSkills)}
	}
	d.Skills = make([]SkillDecision, len(skills))
	for i, sv := range skills {
		p := fmt.Sprintf("skills[%d]", i)
		o, err := object(sv, p)
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
	d.Secrets = make([]SecretRef, len(secrets))
	for i, sv := range secrets {
		p := fmt.Sprintf("secrets[%d]", i)
		o, err := object(sv, p)
		if err != nil {
			return nil, err
		}
		s := &d.Secrets[i]
		n, ok := o["server"].(json.Number)
		idx, ierr := n.Int64()
		if !ok || ierr != nil || idx < 0 || idx >= int64(nServers) {
			return nil, &MalformedError{Path: p + ".server", Msg: fmt.Sprintf("is %v, want a request server index", o["server"])}
		}
		s.Server = int(idx)
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
	se, err := object(doc["spawnEnv"], "spawnEnv")
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
			return nil, &MalformedError{Path: fmt.Sprintf("spawnEnv.prefixes[%d]", i), Msg: "is empty: it would pass the whole host environment"}
		}
	}
	warnings, err := array(doc, "warnings", "warnings")
	if err != nil {
		return nil, err
	}
	d.Warnings = make([]Warning, len(warnings))
	for i, wv := range warnings {
		p := fmt.Sprintf("warnings[%d]", i)
		o, err := object(wv, p)
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

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	default:
		return fmt.Sprintf("%T", v)
	}
}

func object(v any, path string) (map[string]any, error) {
	o, ok := v.(map[string]any)
	if !ok {
		return nil, &MalformedError{Path: path, Msg: fmt.Sprintf("is %s, want an object", kind(v))}
	}
	return o, nil
}

func array(o map[string]any, key, path string) ([]any, error) {
	p := key
	if path != key {
		p = path + "." + key
	}
	a, ok := o[key].([]any)
	if !ok {
		return nil, &MalformedError{Path: p, Msg: fmt.Sprintf("is %s, want an array", kind(o[key]))}
	}
	return a, nil
}

func boolField(o map[string]any, key, path string) (bool, error) {
	b, ok := o[key].(bool)
	if !ok {
		return false, &MalformedError{Path: path + "." + key, Msg: fmt.Sprintf("is %s, want a boolean", kind(o[key]))}
	}
	return b, nil
}

func stringField(o map[string]any, key, path string) (string, error) {
	s, ok := o[key].(string)
	if !ok {
		return "", &MalformedError{Path: path + "." + key, Msg: fmt.Sprintf("is %s, want a string", kind(o[key]))}
	}
	return s, nil
}

func nonEmptyString(o map[string]any, key, path string) (string, error) {
	s, err := stringField(o, key, path)
	if err == nil && s == "" {
		err = &MalformedError{Path: path + "." + key, Msg: "is empty, want a code"}
	}
	return s, err
}

func optionalString(o map[string]any, key, path string) (string, error) {
	if _, ok := o[key]; !ok {
		return "", nil
	}
	return stringField(o, key, path)
}

func stringList(o map[string]any, key, path string) ([]string, error) {
	a, err := array(o, key, path)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(a))
	for i, v := range a {
		s, ok := v.(string)
		if !ok {
			return nil, &MalformedError{Path: fmt.Sprintf("%s.%s[%d]", path, key, i), Msg: fmt.Sprintf("is %s, want a string", kind(v))}
		}
		out[i] = s
	}
	return out, nil
}
