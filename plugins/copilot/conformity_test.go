package main

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/conformity"
)

// TestConformity runs the whole conformity corpus on this renderer natively, through the sdk's
// wire path, with the same checks the suite applies to the WebAssembly build.
func TestConformity(t *testing.T) {
	const dir = "../../conformity/testdata/cases"
	ex, err := conformity.LoadExceptions("../../conformity/testdata/exceptions.txt")
	require.NoError(t, err, "conformity.LoadExceptions")
	tg, err := conformity.Native(manifest, render)
	require.NoError(t, err, "conformity.Native(%s)", manifest.Name)
	rep, err := conformity.Run(context.Background(), conformity.Config{CaseDirs: []string{dir}, Targets: []conformity.Target{tg}, Exceptions: ex, TempDir: t.TempDir()})
	require.NoError(t, err, "conformity.Run(%s)", dir)
	require.NotEmpty(t, rep.Results, "conformity.Run(%s): no result", dir)
	for _, res := range rep.Results {
		assert.True(t, res.OK, "case %s on %s natively: %s", res.File, res.Harness, strings.Join(res.Failures, "\n"))
	}
}
