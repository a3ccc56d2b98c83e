package host_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/spec"
	"github.com/loadout-dev/loadout/policies"
)

// TestVetRefusesATypoThatLeavesNothing pins that a request a typo dropped a server of is
// refused when the policy drops the rest, never rendered empty with success; a request the
// policy alone empties keeps the documented empty render.
func TestVetRefusesATypoThatLeavesNothing(t *testing.T) {
	ctx := context.Background()
	h, err := host.New(ctx, host.Config{Policies: policies.FS})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close(ctx) })
	denied := `{"id":"remote","transport":"http","url":"http://remote.example/mcp"}`

	for name, body := range map[string]string{
		"unknown member":      `{"mcpServers":[{"id":"docs","command":"npx","allowedTool":["search"]},` + denied + `]}`,
		"access field typo":   `{"mcpServers":[{"id":"docs","command":"npx","credentials":"User"},` + denied + `]}`,
		"unknown skill field": `{"skills":[{"name":"s","instruction":"i"}],"mcpServers":[` + denied + `]}`,
	} {
		_, err := h.Vet(ctx, []byte(body), nil, "")
		var re *spec.RejectError
		require.True(t, errors.As(err, &re), "%s: Vet error = %v, want a refusal", name, err)
		assert.Contains(t, re.Message, "nothing else is left to render", name)
		assert.Equal(t, host.ClassRejected, host.Classify(err), name)
	}

	p, err := h.Vet(ctx, []byte(`{"mcpServers":[`+denied+`]}`), nil, "")
	require.NoError(t, err, "a request only the policy empties is no mistake of the request")
	assert.True(t, p.Vetted.Empty())
	assert.NotEmpty(t, p.Vetted.Dropped(), "the denied server is reported")
}
