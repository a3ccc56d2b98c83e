package materialize_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/materialize"
	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// input is what a test writes a plan with: the roots, and what the plan is checked against.
type input struct {
	Roots materialize.Roots
	Plan  plan.Input
}

// write checks p and writes it, as the host does; a plan that fails the check is that error.
func write(ctx context.Context, p *abi.Plan, in input) (*materialize.Result, error) {
	c, err := plan.Check(p, in.Plan)
	if err != nil {
		return nil, err
	}
	return materialize.Write(ctx, c, in.Roots)
}

// dryRun checks p and dry-runs it.
func dryRun(ctx context.Context, p *abi.Plan, in input) (*materialize.Result, error) {
	c, err := plan.Check(p, in.Plan)
	if err != nil {
		return nil, err
	}
	return materialize.DryRun(ctx, c, in.Roots)
}

// TestWriteNeedsACheckedPlan: without a checked plan nothing is written or dry-run.
func TestWriteNeedsACheckedPlan(t *testing.T) {
	t.Parallel()
	roots := materialize.Roots{Config: t.TempDir(), Run: t.TempDir(), Checkout: t.TempDir()}
	_, err := materialize.Write(context.Background(), nil, roots)
	require.Error(t, err, "Write(nil checked plan)")
	_, err = materialize.DryRun(context.Background(), nil, roots)
	require.Error(t, err, "DryRun(nil checked plan)")
	for _, d := range []string{roots.Config, roots.Run, roots.Checkout} {
		entries, err := os.ReadDir(d)
		require.NoError(t, err)
		assert.Empty(t, entries, "root %s after Write(nil)", d)
	}
}
