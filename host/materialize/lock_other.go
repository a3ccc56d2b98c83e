//go:build !unix

package materialize

import (
	"errors"
	"os"
)

// tryLock needs flock, which loadout's staging relies on to tell a dead render's stage from a
// running one; without it a stage is never taken for stale and Write fails to stage.
func tryLock(*os.File) error {
	return errors.New("materialize: staging needs flock, which this platform lacks")
}
