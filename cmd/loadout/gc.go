package main

import "runtime/debug"

// oneShotMemoryLimit is the Go memory a one-shot command may reach before its first garbage
// collection: a warm render of one harness stays below it.
const oneShotMemoryLimit = 64 << 20

// collectNearLimit is set by main and called by a command that runs once and exits (render):
// nil in tests, whose process outlives the command.
var collectNearLimit func()

// collectOnlyNearLimit turns the collector's pacing from "when the heap doubles" to "when the
// process nears oneShotMemoryLimit": a render allocates most of its heap while loading a
// plugin and exits right after, so the collections the default pacing runs on the way are
// work nobody needs (docs/PERFORMANCE.md gives what it saves). A process that outgrows the
// limit is collected as usual. GOGC or GOMEMLIMIT in the environment win.
func collectOnlyNearLimit(getenv func(string) string) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(oneShotMemoryLimit)
	debug.SetGCPercent(-1)
}
