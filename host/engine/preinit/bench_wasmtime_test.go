//go:build wasmtime

package preinit_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/engine"
	wt "github.com/loadout-dev/loadout/host/engine/wasmtime"
)

func init() {
	benchEngines = append(benchEngines, struct {
		name string
		new  func(b *testing.B) engine.Engine
	}{"wasmtime", func(b *testing.B) engine.Engine {
		e, err := wt.New(context.Background(), wt.Config{})
		require.NoError(b, err, "wasmtime.New")
		return e
	}})
}
