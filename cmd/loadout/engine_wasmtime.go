//go:build wasmtime

package main

import (
	"context"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/wasmtime"
)

func init() {
	engineFactories["wasmtime"] = func(ctx context.Context, cfg engineConfig) (engine.Engine, error) {
		// Wasmtime instantiates from a copy-on-write memory image, so it needs no pool.
		return wasmtime.New(ctx, wasmtime.Config{Cache: cfg.cache})
	}
}
