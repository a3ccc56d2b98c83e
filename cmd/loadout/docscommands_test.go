package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/internal/testplugins"
)

// TestGuideCommandsExist: every loadout command line docs/ADDING-A-HARNESS.md shows names a
// command and flags this binary has, so the guide cannot drift from the CLI.
func TestGuideCommandsExist(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testplugins.Root(t), "docs", "ADDING-A-HARNESS.md"))
	require.NoError(t, err)
	var lines []string
	for _, m := range regexp.MustCompile("(?ms)^```sh\n(.*?)^```$").FindAllStringSubmatch(string(b), -1) {
		for _, l := range strings.Split(strings.ReplaceAll(m[1], "\\\n", " "), "\n") {
			if strings.HasPrefix(l, "loadout ") {
				lines = append(lines, l)
			}
		}
	}
	require.GreaterOrEqual(t, len(lines), 3, "the guide shows plugins add, conformity and render")
	root := (&app{}).rootCommand()
	for _, l := range lines {
		fields := strings.Fields(l)[1:]
		cmd, rest, err := root.Find(fields)
		require.NoError(t, err, "%s", l)
		assert.NotEqual(t, root, cmd, "%s names a command", l)
		for _, f := range rest {
			if name, ok := strings.CutPrefix(f, "--"); ok {
				assert.NotNil(t, cmd.Flag(name), "%s: %q has no flag --%s", l, cmd.CommandPath(), name)
			}
		}
	}
}
