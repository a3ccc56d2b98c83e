// Package corpus loads the conformity case files (conformity/testdata/cases/NNN-<name>.json;
// the format is described in the corpus README). Every runner of the suite, whatever it
// drives (the host pipeline, a plugin, a policy), reads cases through Load, so a case means the
// same thing everywhere.
//
// The package uses the standard library only and holds no state: Load and the methods of Case
// are safe to call from several goroutines. A Case returned by Load belongs to the caller.
package corpus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"sort"
	"strings"
)

// Case is one conformity case, as written in its file.
type Case struct {
	// File is the case's file name (NNN-<name>.json), set by Load.
	File        string  `json:"-"`
	Name        string  `json:"name"`
	Area        string  `json:"area"`
	Description string  `json:"description"`
	Context     Context `json:"context"`
	// Input is the request as a JSON value; nil when the case gives InputRaw instead.
	Input json.RawMessage `json:"input,omitempty"`
	// InputRaw is the request body byte for byte, for bodies that are not plain JSON values;
	// meaningful only when Input is nil.
	InputRaw string `json:"inputRaw,omitempty"`
	Expect   Expect `json:"expect"`
}

// Context is the environment a case runs in. Both maps are empty when absent: a runner must
// never fall back to its own environment.
type Context struct {
	// HostEnv is the whole host environment the spawn environment is built from.
	HostEnv map[string]string `json:"hostEnv"`
	// Tokens maps a server id to its stored token.
	Tokens map[string]string `json:"tokens"`
	// Data is policy data laid over the policy's own for this case (policy.Config.Data), e.g.
	// {"tunables": {"userservers": {"userServers": "remote"}}}; nil: the policy as it is.
	Data map[string]any `json:"data,omitempty"`
}

// Expect is the outcome a case expects. Servers, Skills, Resources and Redact are always given;
// the other fields are checked only when present.
type Expect struct {
	// Servers are the ids of the kept servers, in request order.
	Servers []string `json:"servers"`
	// Skills are the sanitized names of the kept skills, in request order.
	Skills []string `json:"skills"`
	// Resources maps a kept skill to the sanitized relPaths of its kept resources, in request
	// order; a kept skill not listed has none.
	Resources map[string][]string `json:"resources"`
	// Redact is every string the host treats as a secret (a set).
	Redact []string `json:"redact"`
	// SpawnEnv maps a listed stdio server id to its complete spawn environment; nil: not checked.
	SpawnEnv map[string]map[string]string `json:"spawnEnv,omitempty"`
	// ArgToolRules are the server and tool rules of the tools flag (Claude's --allowedTools); checked
	// for every harness whose profile carries tool rules on the command line. See AllowRules.
	ArgToolRules AllowRules `json:"claudeMcpAllowRules"`
	// TOMLServers are the ids of the server tables ([mcp_servers.<id>] of Codex's config.toml)
	// of a TOML config, in order; checked for every harness whose profile's config is TOML; nil:
	// not checked (an empty list in the file decodes to an empty, non-nil slice).
	TOMLServers []string `json:"codexServers,omitempty"`
	// Rejected is true when the whole request must be refused.
	Rejected bool `json:"rejected,omitempty"`
	// Exposure is what the host makes of exposure and toolExposure; nil: not checked.
	Exposure *Exposure `json:"exposure,omitempty"`
}

// Exposure is the exposure expectation. Servers and Refused are checked for every harness
// whose profile has no exposure of its own (tools.in is not exposure), where the host turns
// exposure into tool lists (host/exposure); NativeServers replaces Expect.Servers for a harness
// that renders exposure itself.
type Exposure struct {
	// Servers maps a kept server id to the tool lists the plugin is handed and the exposure
	// values the host warns about.
	Servers map[string]ExposureServer `json:"servers,omitempty"`
	// Refused maps a server id to the code the host refuses it with.
	Refused map[string]string `json:"refused,omitempty"`
	// NativeServers are the kept server ids on a harness that renders exposure itself; nil:
	// Expect.Servers.
	NativeServers []string `json:"nativeServers,omitempty"`
}

// ExposureServer is one kept server's expected tool lists.
type ExposureServer struct {
	// Allowed are the tools the server is restricted to; nil (null or absent): unrestricted.
	Allowed *[]string `json:"allowed"`
	// Denied are the tools the harness must not offer, in order.
	Denied []string `json:"denied"`
	// Unsupported are the exposure values warned about (exposure_unsupported), in order.
	Unsupported []string `json:"unsupported"`
}

// AllowRules is the claudeMcpAllowRules expectation, which has three states: absent (not
// checked), null (no --allowedTools at all) and a list (its server and tool rules, possibly none).
type AllowRules struct {
	Present bool     // the field is in the file
	Null    bool     // the field is null: no --allowedTools flag
	Rules   []string // the server and tool rules in order, when Present and not Null
}

// UnmarshalJSON decodes null or a list of strings.
func (a *AllowRules) UnmarshalJSON(b []byte) error {
	a.Present = true
	if string(bytes.TrimSpace(b)) == "null" {
		a.Null, a.Rules = true, nil
		return nil
	}
	var rules []string
	if err := json.Unmarshal(b, &rules); err != nil {
		return fmt.Errorf("claudeMcpAllowRules: %w", err)
	}
	if rules == nil {
		rules = []string{}
	}
	a.Null, a.Rules = false, rules
	return nil
}

// MarshalJSON encodes null or the list; an absent value is encoded as null too, so callers
// that need to omit it check Present.
func (a AllowRules) MarshalJSON() ([]byte, error) {
	if !a.Present || a.Null {
		return []byte("null"), nil
	}
	rules := a.Rules
	if rules == nil {
		rules = []string{}
	}
	return json.Marshal(rules)
}

// Body is the request body the case sends: InputRaw's bytes, or Input.
func (c Case) Body() []byte {
	if c.Input != nil {
		return []byte(c.Input)
	}
	return []byte(c.InputRaw)
}

var (
	fileName = regexp.MustCompile(`^([0-9]{3})-([a-z0-9]+(?:-[a-z0-9]+)*)\.json$`)
	kebab    = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)
)

// Load reads every *.json case in dir, sorted by file name. It is strict: a file that is not
// named NNN-<name>.json after its name field, holds unknown or missing fields, trailing data,
// both or neither of input and inputRaw, or an area that is not kebab-case, fails the whole load.
func Load(dir string) ([]Case, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("load cases: %w", err)
	}
	return LoadFS(os.DirFS(dir))
}

// LoadFS reads every *.json case at the root of fsys (a corpus built into a binary, say), as
// Load does a directory.
func LoadFS(fsys fs.FS) ([]Case, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("load cases: %w", err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	cases := make([]Case, 0, len(names))
	for _, n := range names {
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, fmt.Errorf("load cases: %w", err)
		}
		c, err := decodeCase(n, data)
		if err != nil {
			return nil, fmt.Errorf("load case %s: %w", n, err)
		}
		cases = append(cases, c)
	}
	return cases, nil
}

func decodeCase(file string, data []byte) (Case, error) {
	m := fileName.FindStringSubmatch(file)
	if m == nil {
		return Case{}, errors.New("file name is not NNN-<kebab-case name>.json")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c Case
	if err := dec.Decode(&c); err != nil {
		return Case{}, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Case{}, errors.New("data after the case object")
	}
	var fields struct {
		InputRaw *string                    `json:"inputRaw"`
		Expect   map[string]json.RawMessage `json:"expect"`
	}
	if err := json.Unmarshal(data, &fields); err != nil {
		return Case{}, err
	}
	c.File = file
	switch {
	case c.Name != m[2]:
		return Case{}, fmt.Errorf("name %q does not match the file name", c.Name)
	case !kebab.MatchString(c.Area):
		return Case{}, fmt.Errorf("area %q is not a kebab-case word", c.Area)
	case c.Description == "":
		return Case{}, errors.New("description is empty")
	case (c.Input != nil) == (fields.InputRaw != nil):
		return Case{}, errors.New("want exactly one of input and inputRaw")
	case c.Input != nil && string(bytes.TrimSpace(c.Input)) == "null":
		return Case{}, errors.New("input is null")
	}
	for _, k := range []string{"servers", "skills", "resources", "redact"} {
		if _, ok := fields.Expect[k]; !ok {
			return Case{}, fmt.Errorf("expect.%s is missing", k)
		}
	}
	if c.Context.HostEnv == nil {
		c.Context.HostEnv = map[string]string{}
	}
	if c.Context.Tokens == nil {
		c.Context.Tokens = map[string]string{}
	}
	if c.Expect.Resources == nil {
		c.Expect.Resources = map[string][]string{}
	}
	return c, nil
}
