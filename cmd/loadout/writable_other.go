//go:build !unix

package main

// writableDir cannot tell without access(2): the write itself reports a directory it cannot
// write to.
func writableDir(string) bool { return true }
