//go:build unix

package main

import "syscall"

// writableDir reports whether this process may create files in dir.
func writableDir(dir string) bool {
	const wOK, xOK = 0x2, 0x1
	return syscall.Access(dir, wOK|xOK) == nil
}
