package server

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host"
)

// The serve answer carries each kept server's details, the instance key included, the same
// from one request to the next and whatever harness renders.
func TestRealHostServerDetails(t *testing.T) {
	s, _ := newTestServer(t, Config{}, realLoader(t))
	defer s.Close()
	details := func(harness string) []host.ServerDetail {
		rec := do(s.Handler(), http.MethodPost, "/v1/render", realRequest(harness))
		require.Equal(t, http.StatusOK, rec.Code, "POST /v1/render: %s", rec.Body.String())
		var res struct {
			ServerDetails []host.ServerDetail `json:"serverDetails"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &res), "decode %s", rec.Body.String())
		return res.ServerDetails
	}
	first := details("claude")
	require.Len(t, first, 2, "one entry per kept server")
	for i, id := range []string{"fs", "docs"} {
		assert.Equal(t, id, first[i].ID)
		assert.Equal(t, "catalog", first[i].Source)
		assert.Equal(t, "session", first[i].Scope)
		assert.Regexp(t, "^[0-9a-f]{64}$", first[i].InstanceKey)
	}
	assert.NotEqual(t, first[0].InstanceKey, first[1].InstanceKey)
	assert.Equal(t, first, details("claude"), "the same request gives the same keys")
	assert.Equal(t, first, details("codex"), "the key does not depend on the harness")
}
