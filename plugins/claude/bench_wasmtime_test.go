//go:build wasmtime

package main

import (
	"context"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/wasmtime"
)

func init() {
	benchEngines = append(benchEngines,
		struct {
			name string
			new  func(ctx context.Context) (engine.Engine, error)
		}{"wasmtime", func(ctx context.Context) (engine.Engine, error) {
			return wasmtime.New(ctx, wasmtime.Config{})
		}},
	)
}
