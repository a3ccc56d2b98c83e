package policy

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/spec"
)

// TestDataOverlay: Config.Data changes the one setting it names and leaves the tree's other data
// as it was, and a bundle takes none.
func TestDataOverlay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const body = `{"mcpServers": [{"id": "s", "command": "npx", "env": {"API_KEY": "unlisted"},
	  "headers": {}}, {"id": "h", "transport": "http", "url": "https://h.example.com/mcp",
	  "headers": {"Authorization": "Bearer h-secret"}}]}`
	redactions := func(e *Engine) []string {
		t.Helper()
		req, _, err := spec.Parse([]byte(body))
		require.NoError(t, err)
		d, err := e.Decide(ctx, req, nil, "claude")
		require.NoError(t, err, "Decide")
		v, err := Vet(req, d, nil, VetOptions{})
		require.NoError(t, err, "Vet")
		return v.Redactions()
	}

	plain, err := New(ctx, Config{})
	require.NoError(t, err)
	assert.NotContains(t, redactions(plain), "unlisted", "by default an unlisted API_KEY is no secret")
	assert.Contains(t, redactions(plain), "Bearer h-secret", "by default Authorization is a secret")

	over, err := New(ctx, Config{Data: map[string]any{"tunables": map[string]any{"secrets": map[string]any{
		"always_secret_env_suffixes": []any{"_KEY"}}}}})
	require.NoError(t, err, "New with a data overlay")
	assert.Contains(t, redactions(over), "unlisted", "the overlay's suffix list makes API_KEY a secret")
	assert.Contains(t, redactions(over), "Bearer h-secret", "the tree's header list is kept beside the overlay")

	_, err = New(ctx, Config{Bundle: &Bundle{}, Data: map[string]any{"x": 1}})
	assert.ErrorContains(t, err, "bundle", "data over a bundle")
}
