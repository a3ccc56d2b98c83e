//go:build unix

package codecache

import (
	"errors"
	"io/fs"
	"syscall"
)

const (
	noFollow = syscall.O_NOFOLLOW // an entry or key that is a symbolic link is not opened
	noBlock  = syscall.O_NONBLOCK // nor does a FIFO planted as an entry block the open
)

// owner returns the uid that owns fi.
func owner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// isLoop reports whether err is an open refused because the path is a symbolic link.
func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }
