//go:build !wasmtime

package server

import (
	"context"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/wazero"
)

// newTestEngine is the engine the real-host tests run plugins on: wazero, or wasmtime under
// the wasmtime build tag.
func newTestEngine(ctx context.Context) (engine.Engine, error) {
	return wazero.New(ctx, wazero.Config{Cache: testCache("wazero"), Pool: 2})
}

// serveTargetRate is the renders/s `serve` is to sustain on wazero (docs/PERFORMANCE.md);
// BenchmarkServeLatency measures latency at half of it.
const serveTargetRate = 300
