package host

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/loadout-dev/loadout/host/policy"
	"github.com/loadout-dev/loadout/host/spec"
)

// Result is what one render returns; it is the JSON document `loadout render --format json`
// prints and `POST /v1/render` answers. Secrets never appear in it.
type Result struct {
	Harness string `json:"harness"`
	// DryRun is true when nothing was written.
	DryRun bool `json:"dryRun"`
	// Servers and Skills are the surviving server ids and skill names, in request order.
	Servers []string `json:"servers"`
	// ServerDetails describes each surviving server, in the order of Servers.
	ServerDetails []ServerDetail `json:"serverDetails"`
	Skills        []string       `json:"skills"`
	Resources     ResourceList   `json:"resources"`
	// BuiltinTools are the harness's own tools the run pre-approves (run.builtinTools as the
	// policy and the harness's profile left them), in request order; empty when none: a
	// restricted server never adds one.
	BuiltinTools []string `json:"builtinTools"`
	// Dropped lists every entry the parser or the policy removed or changed, in request order.
	Dropped  []spec.Diagnostic `json:"dropped"`
	Files    []FileResult      `json:"files"`
	Args     []string          `json:"args"`
	Env      []EnvVar          `json:"env"`
	Prompt   string            `json:"prompt"`
	Warnings []Warning         `json:"warnings"`
	// Decision is the policy's decision document (it names secrets by key, never by value).
	Decision *policy.Decision `json:"decision,omitempty"`
	// PolicyRevision is the revision of the policy bundle that decided this render; empty for
	// a policy directory or the embedded defaults.
	PolicyRevision string `json:"policyRevision,omitempty"`
}

// ServerDetail is what a platform needs to know about one kept server besides its config.
type ServerDetail struct {
	ID string `json:"id"`
	// Source is "catalog" (mcpServers) or "user" (userServers).
	Source string `json:"source"`
	// Scope is what one instance of the server is shared across: "session", "space" or "app".
	Scope string `json:"scope"`
	// InstanceKey identifies the connection the server is made from (host/instance): runs whose
	// servers have the same key in the same scope may share one server process or connection.
	// It is a SHA-256 digest in which every secret went in as its own digest.
	InstanceKey string `json:"instanceKey"`
	// Credentials is the request's credentials mode, "" when none ("user" or "shared").
	Credentials string `json:"credentials,omitempty"`
	// SharedAuthority, for a shared server, names whose credential every permitted user's
	// agent acts with (SharedNotice).
	SharedAuthority string `json:"sharedAuthority,omitempty"`
}

// SharedNotice is how loadout says what a shared server hands out, in the prompt beside the
// server and in the policy's shared_credential warning (policies/loadout/request).
func SharedNotice(authority string) string {
	return "shared server: every permitted user's agent acts with " + authority + "'s credential"
}

// FileResult describes one file of the plan.
type FileResult struct {
	Root   string `json:"root"`
	Path   string `json:"path"`
	Mode   string `json:"mode"`
	Bytes  int    `json:"bytes"`
	Secret bool   `json:"secret"`
	SHA256 string `json:"sha256"` // of the bytes written (on a dry run, of the content with secrets masked)
	// Written is the absolute path the file was written to; empty on a dry run.
	Written string `json:"written,omitempty"`
	// Content is the planned content with every secret masked, set only on a dry run with
	// RenderRequest.ShowContent.
	Content string `json:"content,omitempty"`
}

// EnvVar is one variable of the harness environment; a secret value is masked.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Warning is something the renderer could not render faithfully.
type Warning struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Server  string `json:"server,omitempty"`
	Skill   string `json:"skill,omitempty"`
}

// SkillResources is one kept skill's kept resource paths, in request order.
type SkillResources struct {
	Skill string
	Paths []string
}

// ResourceList is an ordered map skill → resource paths. It marshals as a JSON object whose
// members keep skill order (encoding/json would sort a Go map).
type ResourceList []SkillResources

// MarshalJSON writes the list as an object in order.
func (l ResourceList) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, sr := range l {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(sr.Skill)
		if err != nil {
			return nil, err
		}
		paths := sr.Paths
		if paths == nil {
			paths = []string{}
		}
		v, err := json.Marshal(paths)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// PluginInfo describes one loaded plugin.
type PluginInfo struct {
	Name         string   `json:"name"`
	Version      string   `json:"version"`
	ABIVersion   int      `json:"abiVersion"`
	Harness      string   `json:"harness"`
	SHA256       string   `json:"sha256"`
	Transports   []string `json:"transports"`
	NativeSkills bool     `json:"nativeSkills"`
	Roots        []string `json:"roots"`
	Source       string   `json:"source"` // "builtin" or the file it was loaded from
	Engine       string   `json:"engine"` // the engine that compiled it
}

// UnmarshalJSON reads the object MarshalJSON writes, keeping member order.
func (l *ResourceList) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("resources: want an object")
	}
	out := ResourceList{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		var paths []string
		if err := dec.Decode(&paths); err != nil {
			return err
		}
		out = append(out, SkillResources{Skill: t.(string), Paths: paths})
	}
	*l = out
	return nil
}
