package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// teamDir writes files into a fresh policy directory.
func teamDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		path := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	}
	return dir
}

// A conftest policy in package main, or a typo of a rule kind, stops loadout at load with
// file:row instead of deciding nothing.
func TestPolicyLoadRefusesUnreadRules(t *testing.T) {
	for name, tc := range map[string]struct{ file, src, want string }{
		"package main": {"main.rego", "package main\n\ndeny contains msg if {\n\tsome s in input.servers\n\tmsg := s.id\n}\n", "main.rego:3: deny in package main is never read"},
		"typo":         {"loadout/corp.rego", "package loadout.corp\n\ndney contains {\"server\": 0, \"code\": \"x\"} if false\n", "loadout/corp.rego:3: rule dney looks like deny"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := teamDir(t, map[string]string{tc.file: tc.src})
			code, _, stderr := runCLI(t, hostileBody, "policy", "eval", "--policies", dir, "-")
			assert.NotEqual(t, exitOK, code)
			assert.Contains(t, stderr, dir+"/"+tc.want)
			code, _, stderr = runCLI(t, "", "policy", "test", dir)
			assert.NotEqual(t, exitOK, code)
			assert.Contains(t, stderr, tc.want, "policy test refuses it too")
		})
	}
}

// conftest's `deny contains msg` with a string refuses the request with its message.
func TestConftestStringDenyRefusesTheRequest(t *testing.T) {
	dir := teamDir(t, map[string]string{"loadout/conftest.rego": "package loadout.conftest\n\ndeny contains msg if {\n\tsome s in input.servers\n\ts.transport == \"stdio\"\n\tmsg := sprintf(\"%s: no local servers here\", [s.id])\n}\n"})
	code, stdout, stderr := runCLI(t, hostileBody, "policy", "eval", "--policies", dir, "-")
	assert.Equal(t, exitRejected, code, "stdout: %s", stdout)
	assert.Contains(t, stderr, "request denied by policy: node: no local servers here ["+dir+"/loadout/conftest.rego:3]")
}
