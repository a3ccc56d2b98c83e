package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/builtin"
)

// largeRequest is a vetted-clean request of n servers, every one restricting its tools and
// hiding some by pattern, half stdio with a secret env value and half http with a secret
// header, and a skill per ten servers.
func largeRequest(n int) []byte {
	var servers []map[string]any
	var skills []map[string]any
	for i := range n {
		if i%2 == 0 {
			servers = append(servers, map[string]any{
				"id": fmt.Sprintf("s%d", i), "command": "/usr/bin/mcp-fs", "args": []string{"--root", "."},
				"env": map[string]string{"FS_TOKEN": fmt.Sprintf("fs-secret-%d", i)}, "secretKeys": []string{"FS_TOKEN"},
				"allowedTools": []string{"read", "write", "list"}, "toolExposure": map[string]string{"admin_*": "hidden"},
			})
		} else {
			servers = append(servers, map[string]any{
				"id": fmt.Sprintf("h%d", i), "transport": "http", "url": "https://mcp.example.com/mcp",
				"headers": map[string]string{"Authorization": fmt.Sprintf("Bearer tok-%d", i)}, "secretKeys": []string{"Authorization"},
				"allowedTools": []string{"search", "fetch"}, "timeout": 30,
			})
		}
		if i%10 == 0 {
			skills = append(skills, map[string]any{"name": fmt.Sprintf("skill-%d", i), "description": "d", "instructions": "do it",
				"resources": []map[string]string{{"relPath": "notes.md", "content": "x"}}})
		}
	}
	b, _ := json.Marshal(map[string]any{"run": map[string]any{"user": "alice"}, "mcpServers": servers, "skills": skills})
	return b
}

// TestRenderLargeRequestEveryHarness renders a 1,000-server request for every built-in harness:
// the plan's limits grow with the vetted request, so a request the policy passed whole is never
// refused for its size.
func TestRenderLargeRequestEveryHarness(t *testing.T) {
	arts, err := builtin.Artifacts()
	require.NoError(t, err, "built-in plugins (./build.sh plugins)")
	const n = 1000
	reqPath := filepath.Join(t.TempDir(), "large.json")
	require.NoError(t, os.WriteFile(reqPath, largeRequest(n), 0o600))
	for _, a := range arts {
		harness := a.Manifest.Harness
		t.Run(harness, func(t *testing.T) {
			out := t.TempDir()
			code, stdout, stderr := runCLI(t, "", "render", "--harness", harness, "--out", out, "--format", "json", reqPath)
			require.Equal(t, exitOK, code, "render %d servers for %s: stderr %s", n, harness, firstLines(stderr, 5))
			var res host.Result
			require.NoError(t, json.Unmarshal([]byte(stdout), &res))
			assert.Len(t, res.Servers, n, "every server is rendered")
			assert.NotEmpty(t, res.Files, "files written")
		})
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
