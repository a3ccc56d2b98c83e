package main

import (
	"bytes"
	"io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/builtin"
	"github.com/loadout-dev/loadout/plugins"
)

// pluginHarnesses are the harnesses of plugins/<name>/profile.yaml, read from the profiles:
// the names no help text outside plugins/ may spell out.
func pluginHarnesses(t *testing.T) []string {
	t.Helper()
	files, err := fs.Glob(plugins.Profiles, "*/profile.yaml")
	require.NoError(t, err)
	re := regexp.MustCompile(`(?m)^harness:\s*(\S+)`)
	var out []string
	for _, f := range files {
		b, err := fs.ReadFile(plugins.Profiles, f)
		require.NoError(t, err)
		m := re.FindSubmatch(b)
		require.NotNil(t, m, "%s names its harness", f)
		out = append(out, string(m[1]))
	}
	require.NotEmpty(t, out, "plugins.Profiles holds the built-in profiles")
	return out
}

// helpText is every text the command tree shows: each command's Short, Long and Example and
// each flag's usage.
func helpText(root *cobra.Command) string {
	var b strings.Builder
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		b.WriteString(c.Short + "\n" + c.Long + "\n" + c.Example + "\n")
		c.LocalFlags().VisitAll(func(f *pflag.Flag) { b.WriteString(f.Usage + "\n") })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return b.String()
}

// TestHelpDerivesTheHarnesses: no help text, flag, completion or starter request spells a
// harness of plugins/ by name: with the built-in list replaced by made-up names, those names
// appear wherever harnesses are listed, and no real one anywhere.
func TestHelpDerivesTheHarnesses(t *testing.T) {
	saved := builtinHarnesses
	t.Cleanup(func() { builtinHarnesses = saved })
	builtinHarnesses = func() []string { return []string{"alpha", "beta"} }

	var out, errb bytes.Buffer
	a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
	root := a.rootCommand()
	text := helpText(root)
	code, starter, stderr := runCLI(t, "", "init", "-")
	require.Equal(t, exitOK, code, "loadout init -: %s", stderr)
	_, completion, _ := runCLI(t, "", cobra.ShellCompRequestCmd, "render", "--harness", "")
	for _, h := range pluginHarnesses(t) {
		word := regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(h) + `\b`)
		assert.Empty(t, word.FindAllString(text, -1), "help text spells harness %q", h)
		assert.NotRegexp(t, word, starter, "the starter request names harness %q", h)
		assert.NotRegexp(t, word, completion, "the --harness completion offers %q", h)
	}
	assert.Contains(t, text, "Built-in harnesses: alpha, beta.", "loadout --help lists the built-in harnesses")
	assert.Contains(t, text, "(built in: alpha, beta)", "render --harness lists them")
	assert.Contains(t, text, "render --harness alpha --dry-run", "render's examples use a built-in harness")
	assert.Contains(t, text, "--harness alpha,beta --out out/ -", "and render for all of them at once")
	assert.Contains(t, starter, `"harness": "alpha",`, "the starter request renders for the first built-in harness")
	assert.Equal(t, "alpha\nbeta\n", strings.SplitN(completion, ":", 2)[0], "the --harness completion offers the built-in harnesses")

	builtinHarnesses = func() []string { return nil }
	text = helpText(a.rootCommand())
	assert.Contains(t, text, "Built-in harnesses: none in this binary (build it with ./build.sh, or give a plugin with --plugin).")
	assert.Contains(t, text, "render --harness NAME --dry-run", "without plugins, the examples name none")
	_, starter, _ = runCLI(t, "", "init", "-")
	assert.NotContains(t, starter, `"harness"`, "without plugins, the starter request names no harness")
}

// TestBuiltinHarnessesAreTheEmbeddedOnes: the list the help shows is what host/builtin embeds.
func TestBuiltinHarnessesAreTheEmbeddedOnes(t *testing.T) {
	arts, err := builtin.Artifacts()
	require.NoError(t, err, "this test binary embeds the built-in plugins (./build.sh)")
	assert.Equal(t, builtin.Harnesses(arts), builtinHarnesses())
	assert.Subset(t, pluginHarnesses(t), builtinHarnesses(), "every built-in harness has a profile in plugins/")
}
