package conformity

import (
	"context"
	"fmt"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/registry"
)

// Wasm compiles a plugin module on eng (once; every case reuses it) and returns its target. The
// module is pinned to the digest of the bytes given, read once by the caller, so the bytes the
// suite certifies are the bytes it ran. The caller closes the returned plugin, before eng.
func Wasm(ctx context.Context, eng engine.Engine, name string, wasm []byte) (Target, *registry.Plugin, error) {
	p, err := registry.Load(ctx, eng, registry.Artifact{Name: name, Wasm: wasm, SHA256: registry.Digest(wasm)})
	if err != nil {
		return Target{}, nil, fmt.Errorf("load %s on %s: %w", name, eng.Name(), err)
	}
	return Target{Plugin: p, Engine: eng.Name(), Source: name}, p, nil
}
