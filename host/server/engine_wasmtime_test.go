//go:build wasmtime

package server

import (
	"context"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/wasmtime"
)

// newTestEngine is the engine the real-host tests run plugins on: wasmtime under the wasmtime
// build tag.
func newTestEngine(ctx context.Context) (engine.Engine, error) {
	return wasmtime.New(ctx, wasmtime.Config{Cache: testCache("wasmtime")})
}

// serveTargetRate is the renders/s `serve` is to sustain on Wasmtime (docs/PERFORMANCE.md);
// BenchmarkServeLatency measures latency at half of it.
const serveTargetRate = 1000
