package policy

import (
	"syscall"
	"time"
)

// rusageThread is RUSAGE_THREAD: the calling thread's usage.
const rusageThread = 1

// threadCPU is the CPU time the calling OS thread has used.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
