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
	for _, tc := range []struct {
		name string
		cfg  wazero.Config
	}{
		{"fresh instance per call", wazero.Config{}},
		{"pool of pre-initialized instances", wazero.Config{Pool: 2}},
		{"compilation cache on disk", wazero.Config{CacheDir: t.TempDir()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enginetest.Run(t, func(t *testing.T) engine.Engine {
				e, err := wazero.New(context.Background(), tc.cfg)
				require.NoError(t, err, "wazero.New(%+v)", tc.cfg)
				return e
			})
		})
	}
}

func TestNewRejectsNegativePool(t *testing.T) {
	_, err := wazero.New(context.Background(), wazero.Config{Pool: -1})
	require.Error(t, err, "wazero.New(Pool: -1)")
}
