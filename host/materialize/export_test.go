package materialize

// SetAfterStaged sets the hook Write runs once every file is staged (tests only).
func SetAfterStaged(f func()) { afterStaged = f }
