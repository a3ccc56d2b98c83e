package main

import (
	"strings"
	"sync"

	"github.com/loadout-dev/loadout/host/builtin"
)

// builtinHarnesses lists the harnesses the embedded plugins render (host/builtin's pins),
// sorted; nil in a binary built without them. Help texts, the starter request and completions
// name harnesses only through it, so that no text here knows a harness by name and a new
// plugin needs no change here. Read once; safe for concurrent use.
var builtinHarnesses = sync.OnceValue(func() []string {
	arts, err := builtin.Artifacts()
	if err != nil {
		return nil
	}
	return builtin.Harnesses(arts)
})

// harnessesText is hs for a help text: "a, b, c", or, when the binary embeds no plugin, what
// to do about it.
func harnessesText(hs []string) string {
	if len(hs) == 0 {
		return "none in this binary (build it with ./build.sh, or give a plugin with --plugin)"
	}
	return strings.Join(hs, ", ")
}

// everyHarness is hs as one --harness value, "a,b,c" (NAME when hs is empty): a render for
// every built-in harness at once.
func everyHarness(hs []string) string {
	if len(hs) == 0 {
		return "NAME"
	}
	return strings.Join(hs, ",")
}

// firstHarness is the first built-in harness, or "" in a binary without plugins.
func firstHarness() string {
	if hs := builtinHarnesses(); len(hs) > 0 {
		return hs[0]
	}
	return ""
}

// exampleHarness is the harness the help's examples render for: the first built-in one, or
// NAME in a binary without plugins.
func exampleHarness(hs []string) string {
	if len(hs) == 0 {
		return "NAME"
	}
	return hs[0]
}
