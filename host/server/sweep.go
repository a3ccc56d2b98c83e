package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/internal/flock"
)

// A render under Config.Roots owns its request directory Roots/<id>/ from its creation until
// it answers: the directory holds pendingFile, which the serving process keeps locked (flock)
// the whole time. A render that succeeds removes the file; one that fails removes the whole
// directory. A process killed mid-render (kill -9) leaves the file unlocked, and the directory
// with whatever it held: staged copies of secrets, minted tokens' configs. The server sweeps
// such orphans at start and every SweepInterval: a directory whose pendingFile no process holds
// and that is older than SweepMinAge is removed whole; a finished request directory is only
// swept of the stages a killed render left (host.Sweep). A directory in use is never touched.

const (
	pendingFile = ".loadout-request"
	// SweepInterval is how often Serve sweeps Config.Roots for orphaned request directories.
	SweepInterval = 5 * time.Minute
	// SweepMinAge is how old an unlocked pending file must be before its directory is removed,
	// so that a directory whose render has not locked it yet is never taken for an orphan.
	SweepMinAge = time.Minute
)

// claimRoots creates the pending file of request directory dir and locks it; release with
// finishRoots (success) or by closing the file after removing dir (failure).
func claimRoots(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, pendingFile), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if err := flock.TryLock(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// finishRoots marks request directory dir finished: its pending file goes, then its lock.
func finishRoots(dir string, pending *os.File) error {
	err := os.Remove(filepath.Join(dir, pendingFile))
	pending.Close()
	return err
}

// sweepRoots removes the orphaned request directories under base (see above) whose pending
// file is older than minAge at now, and sweeps the stages killed renders left in the finished
// ones. It returns how many directories it removed.
func sweepRoots(base string, minAge time.Duration, now time.Time) (int, error) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return 0, err
	}
	removed := 0
	var errs []error
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(base, e.Name())
		fi, err := os.Lstat(filepath.Join(dir, pendingFile))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			roots := host.Roots{Config: filepath.Join(dir, "config"), Run: filepath.Join(dir, "run"), Checkout: filepath.Join(dir, "checkout")}
			if err := host.Sweep(roots); err != nil {
				errs = append(errs, fmt.Errorf("request %s: %w", e.Name(), err))
			}
			continue
		case err != nil:
			errs = append(errs, err)
			continue
		case !fi.Mode().IsRegular() || now.Sub(fi.ModTime()) < minAge:
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, pendingFile), os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if flock.TryLock(f) != nil {
			f.Close()
			continue // its render is running
		}
		err = os.RemoveAll(dir)
		f.Close()
		if err != nil {
			errs = append(errs, fmt.Errorf("request %s: %w", e.Name(), err))
			continue
		}
		removed++
	}
	return removed, errors.Join(errs...)
}

// sweepLoop sweeps Config.Roots now and every SweepInterval until ctx ends.
func (s *Server) sweepLoop(ctx context.Context) {
	t := time.NewTicker(SweepInterval)
	defer t.Stop()
	for {
		n, err := sweepRoots(s.cfg.Roots, SweepMinAge, time.Now())
		if n > 0 {
			s.log.Info("removed orphaned request directories", "roots", s.cfg.Roots, "count", n)
		}
		if err != nil {
			s.log.Error("sweep request directories", "roots", s.cfg.Roots, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
