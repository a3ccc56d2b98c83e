package preinit

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/sdk/abi"
)

func TestWarmupRequest(t *testing.T) {
	for _, tc := range []struct {
		name       string
		transports []string
		want       []string
	}{
		{"both transports", []string{abi.TransportStdio, abi.TransportHTTP}, []string{abi.TransportStdio, abi.TransportStdio, abi.TransportHTTP, abi.TransportHTTP}},
		{"stdio only", []string{abi.TransportStdio}, []string{abi.TransportStdio, abi.TransportStdio}},
		{"unknown transports are ignored", []string{"carrier-pigeon"}, nil},
		{"a repeated transport counts once", strings.Split(strings.Repeat("http,", 100_000)+"http", ","), []string{abi.TransportHTTP, abi.TransportHTTP}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := warmupRequest(abi.Manifest{Harness: "claude", Transports: tc.transports})
			var req abi.Request
			require.NoError(t, json.Unmarshal(b, &req), "the warm-up request is JSON")
			var got []string
			for _, s := range req.Servers {
				got = append(got, s.Transport)
			}
			assert.Equal(t, tc.want, got, "server transports of the warm-up request")
			assert.Equal(t, "claude", req.Harness, "the warm-up request names the plugin's harness")
			assert.Equal(t, abi.Version, req.ABIVersion, "ABI version of the warm-up request")
			assert.Less(t, len(b), 4096, "the warm-up request stays small")
		})
	}
}
