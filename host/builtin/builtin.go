// Package builtin holds the built-in renderer plugins, embedded into the loadout binary by
// ./build.sh, which builds plugins/<name> to wasm/<name>.wasm and writes wasm/pins.json
// (host/builtin/internal/pinsgen): for each module its sha256, the sha256 of its harness
// profile (plugins/<name>/profile.yaml, embedded by package plugins) and the manifest it
// reported at build time. A module and the profile its plans are checked through are thus
// pinned as a pair: Artifact.Profile refuses a profile whose bytes are not the ones pinned. A binary built without running ./build.sh first has no built-in plugins;
// Artifacts then says so.
//
// Artifacts reads pins.json only, so a command learns every plugin's harness without reading,
// hashing or instantiating a module, and loads just the ones it needs. A module's bytes are
// checked against its pin where they are compiled (host/registry.Load), once. The package
// keeps no state; its functions are safe for concurrent use.
package builtin

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/host/registry"
	"github.com/loadout-dev/loadout/plugins"
	"github.com/loadout-dev/loadout/sdk/abi"
)

//go:embed wasm
var files embed.FS

// Pin is one entry of pins.json, keyed by the module's file name. It is an object so that
// more pinned facts about a module can sit beside its digest.
type Pin struct {
	SHA256 string `json:"sha256"` // "sha256:<hex>" of the module
	// Profile is "sha256:<hex>" of the module's harness profile, <stem>/profile.yaml of
	// plugins.Profiles.
	Profile  string       `json:"profile"`
	Manifest abi.Manifest `json:"manifest"` // what the module reported when it was built
}

// Artifact is one embedded plugin module, its pin and its build-time manifest.
type Artifact struct {
	Name     string // file name, e.g. "claude.wasm"
	SHA256   string // "sha256:<hex>", from pins.json
	Manifest abi.Manifest
	// ProfileSHA256 is the pin of the module's harness profile, from pins.json.
	ProfileSHA256 string
	fsys          fs.FS
	profiles      fs.FS
}

// Wasm returns the module's bytes, unverified: the caller checks them against SHA256 before
// compiling (registry.Load does).
func (a Artifact) Wasm() ([]byte, error) {
	return fs.ReadFile(a.fsys, "wasm/"+a.Name)
}

// ProfilePath is where the profile of the module named name ("claude.wasm") lives in
// plugins.Profiles: the plugin's directory, the module's name without ".wasm".
func ProfilePath(name string) string { return strings.TrimSuffix(name, ".wasm") + "/profile.yaml" }

// Profile returns the module's harness profile, parsed, after checking its bytes against
// ProfileSHA256 (registry.VerifyProfile: an error wrapping registry.ErrPinMismatch when they
// differ) and that it is the profile of the manifest's harness.
func (a Artifact) Profile() (*plan.Profile, error) {
	path := ProfilePath(a.Name)
	data, err := fs.ReadFile(a.profiles, path)
	if err != nil {
		return nil, fmt.Errorf("built-in plugin %s: profile: %w", a.Name, err)
	}
	if err := registry.VerifyProfile(path, data, a.ProfileSHA256); err != nil {
		return nil, fmt.Errorf("built-in plugin %s: profile: %w: rebuild with ./build.sh", a.Name, err)
	}
	p, err := plan.ParseProfile(data)
	if err != nil {
		return nil, fmt.Errorf("built-in plugin %s: %w", a.Name, err)
	}
	if p.Harness != a.Manifest.Harness {
		return nil, fmt.Errorf("built-in plugin %s: profile %s is for harness %q, the module renders %q", a.Name, path, p.Harness, a.Manifest.Harness)
	}
	return p, nil
}

// Profiles returns the profile of every embedded plugin, each verified as Artifact.Profile
// does, by harness.
func Profiles(arts []Artifact) (plan.Profiles, error) {
	out := plan.Profiles{}
	for _, a := range arts {
		p, err := a.Profile()
		if err != nil {
			return nil, err
		}
		out[p.Harness] = p
	}
	return out, nil
}

// ErrNotBuilt means the binary was built without its plugins.
var ErrNotBuilt = errors.New("no built-in plugins embedded: run ./build.sh, which builds the plugins before the binary")

// Artifacts returns the embedded plugins in name order. It fails when a module has no pin or a
// pin names no module.
func Artifacts() ([]Artifact, error) {
	return load(files, plugins.Profiles)
}

// Harnesses returns the harnesses arts render (each manifest's harness), sorted, without
// duplicates: the list a help text or a completion names, so that no text outside plugins/
// has to.
func Harnesses(arts []Artifact) []string {
	out := make([]string, 0, len(arts))
	for _, a := range arts {
		out = append(out, a.Manifest.Harness)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func load(fsys, profiles fs.FS) ([]Artifact, error) {
	pinsJSON, err := fs.ReadFile(fsys, "wasm/pins.json")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotBuilt
	}
	if err != nil {
		return nil, err
	}
	var pins map[string]Pin
	dec := json.NewDecoder(bytes.NewReader(pinsJSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pins); err != nil {
		return nil, fmt.Errorf("built-in pins.json: %w: rebuild with ./build.sh", err)
	}
	entries, err := fs.ReadDir(fsys, "wasm")
	if err != nil {
		return nil, err
	}
	var out []Artifact
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".wasm") {
			continue
		}
		pin, ok := pins[e.Name()]
		if !ok {
			return nil, fmt.Errorf("built-in plugin %s has no pin in pins.json: rebuild with ./build.sh", e.Name())
		}
		if pin.SHA256 == "" || pin.Profile == "" || pin.Manifest.Harness == "" {
			return nil, fmt.Errorf("built-in pins.json: %s: sha256, profile and manifest.harness are required: rebuild with ./build.sh", e.Name())
		}
		out = append(out, Artifact{Name: e.Name(), SHA256: pin.SHA256, Manifest: pin.Manifest, ProfileSHA256: pin.Profile, fsys: fsys, profiles: profiles})
	}
	for name := range pins {
		if _, err := fs.Stat(fsys, "wasm/"+name); err != nil {
			return nil, fmt.Errorf("built-in pins.json names %s, which is not embedded: rebuild with ./build.sh", name)
		}
	}
	if len(out) == 0 {
		return nil, ErrNotBuilt
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
