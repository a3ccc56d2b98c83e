package main

import "runtime/debug"

const (
	// oneShotMemoryLimit is the Go memory a one-shot command may reach before its first
	// garbage collection: a warm render of one harness stays below it.
	oneShotMemoryLimit = 64 << 20
	// perExtraPlugin raises the limit for each plugin a wazero render loads beyond the first.
	// A loaded wazero module keeps about 10 MiB of Go heap (its decoded functions and data),
	// so five harnesses under 64 MiB collected again and again as the live heap neared the
	// limit (25 to 50 collections, a third of the render's CPU; docs/PERFORMANCE.md).
	// Wasmtime's modules live outside the Go heap and gain nothing from it.
	perExtraPlugin = 8 << 20
)

// collectNearLimit is set by main and called, with the number of plugins it loads, by a
// command that runs once and exits (render): nil in tests, whose process outlives the command.
var collectNearLimit func(plugins int)

// oneShotLimit is the memory limit of a one-shot command that loads plugins plugins.
func oneShotLimit(plugins int) int64 {
	return oneShotMemoryLimit + int64(max(plugins-1, 0))*perExtraPlugin
}

// collectOnlyNearLimit turns the collector's pacing from "when the heap doubles" to "when the
// process nears oneShotLimit(plugins)": a render allocates most of its heap while loading its
// plugins and exits right after, so the collections the default pacing runs on the way are
// work nobody needs (docs/PERFORMANCE.md gives what it saves). A process that outgrows the
// limit is collected as usual. GOGC or GOMEMLIMIT in the environment win.
func collectOnlyNearLimit(getenv func(string) string, plugins int) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(oneShotLimit(plugins))
	debug.SetGCPercent(-1)
}
