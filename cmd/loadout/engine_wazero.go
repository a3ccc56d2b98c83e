package main

import (
	"context"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/wazero"
)

func init() {
	engineFactories["wazero"] = func(ctx context.Context, cfg engineConfig) (engine.Engine, error) {
		return wazero.New(ctx, wazero.Config{Cache: cfg.cache, Pool: cfg.pool})
	}
}
