//go:build cgo

package native_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/plugins/mcpjson-c/native"
)

// TestRender checks that the native build renders a request and reports a bad one as the ABI's
// error document (../native_test.go holds it equal to the WebAssembly build).
func TestRender(t *testing.T) {
	plan := native.Render([]byte(`{"abiVersion":1,"harness":"mcpjson","servers":[{"id":"files","transport":"stdio","enabled":true,"command":"/bin/files"}]}`))
	var got struct {
		Files []struct{ Path, Content string }
	}
	require.NoError(t, json.Unmarshal(plan, &got), "plan: %s", plan)
	require.Len(t, got.Files, 1, "plan: %s", plan)
	assert.Equal(t, "mcp.json", got.Files[0].Path)
	assert.Contains(t, got.Files[0].Content, `"command": "/bin/files"`)

	var failed struct{ Error struct{ Code string } }
	require.NoError(t, json.Unmarshal(native.Render([]byte(`{"harness":`)), &failed))
	assert.Equal(t, "invalid_input", failed.Error.Code)
	require.NoError(t, json.Unmarshal(native.Render(nil), &failed))
	assert.Equal(t, "invalid_input", failed.Error.Code)
}
