//go:build !linux

package policy

import "time"

// threadCPU is not measured outside Linux: the cpu-ns/op metric then reads 0.
func threadCPU() time.Duration { return 0 }
