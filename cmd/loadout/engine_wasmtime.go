//go:build wasmtime

package main

import (
	"context"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/wasmtime"
)

func init() {
	engineFactories["wasmtime"] = func(ctx context.Context, cacheDir string) (engine.Engine, error) {
		return wasmtime.New(ctx, wasmtime.Config{CacheDir: cacheDir})
	}
}
