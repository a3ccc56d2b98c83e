package policy

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// TunablesPath is where the policy tree keeps its tunables (policies/tunables/*.yaml): the
// lists and patterns the security team edits. Go reads them once in New and turns them into
// facts (e.g. "this env key is refused"); the Rego maps facts to reason codes. A tree without
// tunables has empty lists and no tool-name pattern (every tool name is then invalid).
const TunablesPath = "data.tunables"

// tunablesDoc is data.tunables as the data files spell it.
type tunablesDoc struct {
	URL struct {
		SchemesAnywhere []string `json:"schemes_anywhere"`
		SchemesLoopback []string `json:"schemes_loopback"`
	} `json:"url"`
	Secrets struct {
		AlwaysSecretHeaders   []string `json:"always_secret_headers"`
		UserCredentialHeaders []string `json:"user_credential_headers"`
		UserCredentialEnv     []string `json:"user_credential_env"`
	} `json:"secrets"`
	Allow struct {
		IDs struct {
			Reserved         []string `json:"reserved"`
			ReservedPrefixes []string `json:"reserved_prefixes"`
		} `json:"ids"`
		Tools struct {
			Pattern *string `json:"pattern"`
		} `json:"tools"`
		EnvRefused struct {
			Keys     []string `json:"keys"`
			Prefixes []string `json:"prefixes"`
			Suffixes []string `json:"suffixes"`
		} `json:"env_refused"`
		Skills struct {
			DeniedNames []string `json:"denied_names"`
		} `json:"skills"`
		Credentials struct {
			Modes []string `json:"modes"`
		} `json:"credentials"`
	} `json:"allow"`
}

// tunables are the compiled tunables: sets in the case they are compared in. Immutable after
// readTunables, so shared by concurrent Decide calls.
type tunables struct {
	schemesAnywhere, schemesLoopback set // lowercased
	alwaysSecretHeaders, userHeaders set // lowercased
	userEnv                          set // uppercased
	reservedIDs                      set
	reservedPrefixes                 []string
	toolPattern                      *regexp.Regexp // nil: no pattern, every tool name is invalid
	refusedKeys                      set            // uppercased
	refusedPrefixes, refusedSuffixes []string       // uppercased; prefixes end with "_"
	deniedSkills                     set            // lowercased
	credentialModes                  set            // exact
	credentialModeList               []string       // in the tunables' order, without repeats
	// credentialGroups: the keys of the input's facts grouped by credentials (the modes);
	// userCredentialGroups: "" and the modes.
	credentialGroups, userCredentialGroups *groupShape
}

type set map[string]struct{}

func (s set) has(k string) bool { _, ok := s[k]; return ok }

func newSet(items []string, fold func(string) string) set {
	s := make(set, len(items))
	for _, it := range items {
		s[fold(it)] = struct{}{}
	}
	return s
}

func same(s string) string { return s }

// readTunables compiles the tunables document (data.tunables, nil when the tree has none).
// A tunable of the wrong type, a pattern that does not compile, or a refused prefix (suffix)
// that does not end (start) with "_" is an error: the engine is not built.
func readTunables(doc any) (*tunables, error) {
	var d tunablesDoc
	if doc != nil {
		b, err := json.Marshal(doc)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", TunablesPath, err)
		}
		if err := json.Unmarshal(b, &d); err != nil {
			return nil, fmt.Errorf("read %s: %w", TunablesPath, err)
		}
	}
	t := &tunables{
		schemesAnywhere:     newSet(d.URL.SchemesAnywhere, strings.ToLower),
		schemesLoopback:     newSet(d.URL.SchemesLoopback, strings.ToLower),
		alwaysSecretHeaders: newSet(d.Secrets.AlwaysSecretHeaders, strings.ToLower),
		userHeaders:         newSet(d.Secrets.UserCredentialHeaders, strings.ToLower),
		userEnv:             newSet(d.Secrets.UserCredentialEnv, strings.ToUpper),
		reservedIDs:         newSet(d.Allow.IDs.Reserved, same),
		reservedPrefixes:    d.Allow.IDs.ReservedPrefixes,
		refusedKeys:         newSet(d.Allow.EnvRefused.Keys, strings.ToUpper),
		deniedSkills:        newSet(d.Allow.Skills.DeniedNames, strings.ToLower),
		credentialModes:     newSet(d.Allow.Credentials.Modes, same),
	}
	for _, m := range d.Allow.Credentials.Modes {
		if m != "" && !slices.Contains(t.credentialModeList, m) {
			t.credentialModeList = append(t.credentialModeList, m)
		}
	}
	t.credentialGroups = newGroupShape(t.credentialModeList, false)
	t.userCredentialGroups = newGroupShape(t.credentialModeList, true)
	for i, p := range d.Allow.EnvRefused.Prefixes {
		if !strings.HasSuffix(p, "_") {
			return nil, fmt.Errorf("read %s: allow.env_refused.prefixes[%d] %q must end with \"_\"", TunablesPath, i, p)
		}
		t.refusedPrefixes = append(t.refusedPrefixes, strings.ToUpper(p))
	}
	for i, s := range d.Allow.EnvRefused.Suffixes {
		if s == "" {
			return nil, fmt.Errorf("read %s: allow.env_refused.suffixes[%d] must not be empty", TunablesPath, i)
		}
		t.refusedSuffixes = append(t.refusedSuffixes, strings.ToUpper(s))
	}
	if p := d.Allow.Tools.Pattern; p != nil {
		re, err := regexp.Compile(*p)
		if err != nil {
			return nil, fmt.Errorf("read %s: allow.tools.pattern: %w", TunablesPath, err)
		}
		t.toolPattern = re
	}
	return t, nil
}

// envRefused reports whether an env key (uppercased) is refused: a refused key, or it starts
// with a refused prefix or ends with a refused suffix (R4).
func (t *tunables) envRefused(upper string) bool {
	if t.refusedKeys.has(upper) {
		return true
	}
	for _, p := range t.refusedPrefixes {
		if strings.HasPrefix(upper, p) {
			return true
		}
	}
	for _, s := range t.refusedSuffixes {
		if strings.HasSuffix(upper, s) {
			return true
		}
	}
	return false
}

// idReserved reports whether a server id is reserved, exactly or by prefix.
func (t *tunables) idReserved(id string) bool {
	if t.reservedIDs.has(id) {
		return true
	}
	for _, p := range t.reservedPrefixes {
		if strings.HasPrefix(id, p) {
			return true
		}
	}
	return false
}

// toolInvalid reports whether an allowedTools entry breaks the tool-name pattern (R3).
func (t *tunables) toolInvalid(name string) bool {
	return t.toolPattern == nil || !t.toolPattern.MatchString(name)
}
