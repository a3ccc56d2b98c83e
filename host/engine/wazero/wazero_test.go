package wazero_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/enginetest"
	"github.com/loadout-dev/loadout/host/engine/wazero"
)

func TestEngine(t *testing.T) {
	enginetest.Run(t, func(t *testing.T) engine.Engine {
		e, err := wazero.New(context.Background(), wazero.Config{})
		require.NoError(t, err, "wazero.New")
		return e
	})
}
