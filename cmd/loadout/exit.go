package main

import (
	"errors"
	"fmt"
)

// Exit codes, as documented in the README and in --help.
const (
	exitOK       = 0 // success
	exitInternal = 1 // internal or I/O error
	exitUsage    = 2 // usage error, a missing or unreadable request file included
	exitRejected = 3 // the request is refused as a whole (a dropped server or skill is not)
	exitPlugin   = 4 // plugin failure: trap, timeout, ABI mismatch, or a plan that failed the check
)

// usageError is a command line the user must correct.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// rejectedError marks an error as "input rejected" (exit 3) when its type does not already say so.
type rejectedError struct{ err error }

func (e *rejectedError) Error() string { return e.err.Error() }
func (e *rejectedError) Unwrap() error { return e.err }

// pluginError marks an error as a plugin failure (exit 4).
type pluginError struct{ err error }

func (e *pluginError) Error() string { return e.err.Error() }
func (e *pluginError) Unwrap() error { return e.err }

// exitCode maps an error to the process exit code. It is the one place that does so.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ue *usageError
	var re *rejectedError
	var pe *pluginError
	switch {
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &re):
		return exitRejected
	case errors.As(err, &pe):
		return exitPlugin
	}
	return exitInternal
}
