package preinit_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"
)

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// exportNames lists a module's exports as wazero reads them.
func exportNames(t testing.TB, wasm []byte) []string {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	cm, err := rt.CompileModule(ctx, wasm)
	require.NoError(t, err, "CompileModule")
	var names []string
	for n := range cm.ExportedFunctions() {
		names = append(names, n)
	}
	return names
}
