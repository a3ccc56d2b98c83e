//go:build !unix

package wazero

// reserve is not available here: memory lives on the Go heap and grows by copying.
func (l *linearMemory) reserve() bool { return false }

func (l *linearMemory) release() {}
