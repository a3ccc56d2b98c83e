//go:build wasmtime

package wasmtime_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/enginetest"
	"github.com/loadout-dev/loadout/host/engine/wasmtime"
)

func TestEngine(t *testing.T) {
	enginetest.Run(t, func(t *testing.T) engine.Engine {
		e, err := wasmtime.New(context.Background(), wasmtime.Config{})
		require.NoError(t, err, "wasmtime.New")
		return e
	})
}
