// Package builtin holds the built-in renderer plugins, embedded into the loadout binary by
// ./build.sh (which builds plugins/<name> to wasm/<name>.wasm and writes wasm/pins.json with
// each module's sha256). A binary built without running ./build.sh first has no built-in
// plugins; Artifacts then says so.
package builtin

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed wasm
var files embed.FS

// Artifact is one embedded plugin module and its pin.
type Artifact struct {
	Name   string // file name, e.g. "claude.wasm"
	Bytes  []byte
	SHA256 string // "sha256:<hex>", from pins.json
}

// ErrNotBuilt means the binary was built without its plugins.
var ErrNotBuilt = errors.New("no built-in plugins embedded: run ./build.sh, which builds the plugins before the binary")

// Artifacts returns the embedded plugins in name order, each checked against its pin.
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
	var pins map[string]string
	dec := json.NewDecoder(bytes.NewReader(pinsJSON))
	if err := dec.Decode(&pins); err != nil {
		return nil, fmt.Errorf("built-in pins.json: %w", err)
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
		b, err := fs.ReadFile(fsys, "wasm/"+e.Name())
		if err != nil {
			return nil, err
		}
		pin, ok := pins[e.Name()]
		if !ok {
			return nil, fmt.Errorf("built-in plugin %s has no pin in pins.json: rebuild with ./build.sh", e.Name())
		}
		sum := sha256.Sum256(b)
		if got := "sha256:" + hex.EncodeToString(sum[:]); got != pin {
			return nil, fmt.Errorf("built-in plugin %s: sha256 %s does not match its pin %s: rebuild with ./build.sh", e.Name(), got, pin)
		}
		out = append(out, Artifact{Name: e.Name(), Bytes: b, SHA256: pin})
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
