package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRenderSweepsAKilledRender: a render killed while writing leaves its stage (a copy of the
// secret config among it) in the roots; the next render into them removes it before anything
// else, even when it then refuses its own request.
func TestRenderSweepsAKilledRender(t *testing.T) {
	out := t.TempDir()
	stage := filepath.Join(out, "run", ".loadout-stage-0123456789abcdef")
	require.NoError(t, os.MkdirAll(stage, 0o700))
	require.NoError(t, os.Chmod(filepath.Join(out, "run"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(stage, "lock"), nil, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(stage, "f1"), []byte(`{"mcpServers":{"a":{"env":{"KEY":"s3cr3t"}}}}`), 0o600))

	body := `{"mcpServers":[{"id":"a","command":"safe","Command":"evil"}]}`
	args := append([]string{"render", "--harness", "claude", "--out", out, "-"}, pluginArgs(t)...)
	code, _, stderr := runCLI(t, body, args...)
	assert.Equal(t, exitRejected, code, "the request is refused; stderr: %s", stderr)
	assert.NoDirExists(t, stage, "the killed render's stage")
}
