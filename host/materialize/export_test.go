package materialize

// SetAfterStaged sets the hook Write runs once every file is staged (tests only).
func SetAfterStaged(f func()) { afterStaged = f }

// SetFaultHook sets the hook Write and Sweep run before every step that changes the file
// system, with the step's number, and restarts the count (tests only).
func SetFaultHook(f func(step int)) {
	faultHook = f
	faultSteps.Store(0)
}
