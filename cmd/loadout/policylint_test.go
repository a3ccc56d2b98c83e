package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/internal/testenv"
	"github.com/loadout-dev/loadout/internal/testplugins"
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

// opaCLI is the upstream opa CLI scripts/deps.sh installs into .cache/bin.
func opaCLI(t *testing.T) string {
	t.Helper()
	p := filepath.Join(testplugins.Root(t), ".cache", "bin", "opa")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return testenv.Command(t, "opa", testenv.InstallDeps)
}

// policy check runs loadout's load checks and OPA's strict check, and agrees with the
// upstream `opa check --strict --capabilities` on what `policy capabilities` exports.
func TestPolicyCheckAndCapabilities(t *testing.T) {
	opa := opaCLI(t)
	code, caps, stderr := runCLI(t, "", "policy", "capabilities")
	require.Equal(t, exitOK, code, stderr)
	capsFile := filepath.Join(t.TempDir(), "capabilities.json")
	require.NoError(t, os.WriteFile(capsFile, []byte(caps), 0o644))

	good := teamDir(t, map[string]string{"loadout/corp.rego": "package loadout.corp\n\ndeny contains {\"server\": i, \"code\": \"x\"} if {\n\tsome i, s in input.servers\n\ts.id == \"evil\"\n}\n"})
	code, stdout, stderr := runCLI(t, "", "policy", "check", good)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "ok")
	out, err := exec.Command(opa, "check", "--strict", "--capabilities", capsFile, good).CombinedOutput()
	require.NoError(t, err, "opa check agrees: %s", out)

	for name, tc := range map[string]struct {
		files  map[string]string
		want   string
		opaToo bool // the upstream opa check with the exported capabilities refuses it too
	}{
		"network built-in":        {map[string]string{"loadout/net.rego": "package loadout.net\n\nwarn contains {\"code\": \"x\"} if http.send({\"method\": \"get\", \"url\": \"https://x.example\"})\n"}, "loadout/net.rego:3", true},
		"unused import in a test": {map[string]string{"loadout/corp_test.rego": "package loadout.corp_test\n\nimport data.loadout.allow\n\ntest_x if true\n"}, "loadout/corp_test.rego:3", true},
		"misspelled tunable":      {map[string]string{"tunables/url/data.yaml": "schemes_anywere: [https]\n"}, "additional properties 'schemes_anywere' not allowed", false},
	} {
		t.Run(name, func(t *testing.T) {
			dir := teamDir(t, tc.files)
			code, _, stderr := runCLI(t, "", "policy", "check", dir)
			assert.Equal(t, exitRejected, code)
			assert.Contains(t, stderr, tc.want)
			if tc.opaToo {
				out, err := exec.Command(opa, "check", "--strict", "--capabilities", capsFile, dir).CombinedOutput()
				assert.Error(t, err, "opa check --capabilities refuses it too: %s", out)
			}
		})
	}
}

// policy test -v prints the expression a failed test failed at.
func TestPolicyTestVerbose(t *testing.T) {
	dir := teamDir(t, map[string]string{"loadout/v_test.rego": "package loadout.v_test\n\ntest_fail if {\n\ty := 1\n\ty == 2\n}\n"})
	code, stdout, _ := runCLI(t, "", "policy", "test", "-v", dir)
	assert.Equal(t, exitRejected, code)
	assert.Contains(t, stdout, "failed at "+dir+"/loadout/v_test.rego:5: y == 2")
	_, stdout, _ = runCLI(t, "", "policy", "test", dir)
	assert.NotContains(t, stdout, "failed at", "only with -v")
}
