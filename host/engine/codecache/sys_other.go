//go:build !unix

package codecache

import "io/fs"

const noFollow, noBlock = 0, 0

// owner cannot read a file's owner here, so Open refuses every directory: nothing compiled is
// kept on disk.
func owner(fs.FileInfo) (int, bool) { return 0, false }

func isLoop(error) bool { return false }
