//go:build wasmtime

package conformity_test

import (
	"context"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/wasmtime"
)

// With -tags wasmtime, TestCorpus runs every plugin on wasmtime too, and its engine diff
// compares the two engines' outputs case by case.
func init() {
	engines = append(engines, func(ctx context.Context) (engine.Engine, error) { return wasmtime.New(ctx, wasmtime.Config{}) })
}
