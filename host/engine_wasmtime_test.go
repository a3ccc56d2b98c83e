//go:build wasmtime

package host_test

import (
	"context"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/wasmtime"
	"github.com/loadout-dev/loadout/host/engine/wazero"
)

// testEngines are the engines the hostile-plan suite runs on: wazero, and wasmtime too under
// the wasmtime build tag.
var testEngines = map[string]func(ctx context.Context) (engine.Engine, error){
	"wazero":   func(ctx context.Context) (engine.Engine, error) { return wazero.New(ctx, wazero.Config{}) },
	"wasmtime": func(ctx context.Context) (engine.Engine, error) { return wasmtime.New(ctx, wasmtime.Config{}) },
}
