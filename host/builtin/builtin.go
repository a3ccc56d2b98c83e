// Package builtin holds the built-in renderer plugins, embedded into the loadout binary by
// ./build.sh, which builds plugins/<name> to wasm/<name>.wasm and writes wasm/pins.json
// (host/builtin/internal/pinsgen): for each module its sha256 and the manifest it reported at
// build time. A binary built without running ./build.sh first has no built-in plugins;
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
	"sort"
	"strings"

	"github.com/loadout-dev/loadout/sdk/abi"
)

//go:embed wasm
var files embed.FS

// Pin is one entry of pins.json, keyed by the module's file name. It is an object so that
// more pinned facts about a module can sit beside its digest.
type Pin struct {
	SHA256   string       `json:"sha256"`   // "sha256:<hex>" of the module
	Manifest abi.Manifest `json:"manifest"` // what the module reported when it was built
}

// Artifact is one embedded plugin module, its pin and its build-time manifest.
type Artifact struct {
	Name     string // file name, e.g. "claude.wasm"
	SHA256   string // "sha256:<hex>", from pins.json
	Manifest abi.Manifest
	fsys     fs.FS
}

// Wasm returns the module's bytes, unverified: the caller checks them against SHA256 before
// compiling (registry.Load does).
func (a Artifact) Wasm() ([]byte, error) {
	return fs.ReadFile(a.fsys, "wasm/"+a.Name)
}

// ErrNotBuilt means the binary was built without its plugins.
var ErrNotBuilt = errors.New("no built-in plugins embedded: run ./build.sh, which builds the plugins before the binary")

// Artifacts returns the embedded plugins in name order. It fails when a module has no pin or a
// pin names no module.
func Artifacts() ([]Artifact, error) {
	return load(files)
}

func load(fsys fs.FS) ([]Artifact, error) {
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
		if pin.SHA256 == "" || pin.Manifest.Harness == "" {
			return nil, fmt.Errorf("built-in pins.json: %s: sha256 and manifest.harness are required: rebuild with ./build.sh", e.Name())
		}
		out = append(out, Artifact{Name: e.Name(), SHA256: pin.SHA256, Manifest: pin.Manifest, fsys: fsys})
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
