package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watcher reloads the server when a watched policy directory (recursively) or plugin file
// changes, once changes have settled for Config.Debounce. It is owned by Serve.
type watcher struct {
	s     *Server
	w     *fsnotify.Watcher
	dirs  []string        // watched trees: any event under them counts
	files map[string]bool // watched files: only events naming them count
}

// newWatcher watches every Config.Watch path: a directory with all its subdirectories, a file
// through its parent directory (editors and deploys replace files by rename).
func (s *Server) newWatcher() (*watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	w := &watcher{s: s, w: fw, files: map[string]bool{}}
	for _, p := range s.cfg.Watch {
		p, err = filepath.Abs(p)
		if err == nil {
			err = w.add(p)
		}
		if err != nil {
			fw.Close()
			return nil, fmt.Errorf("watch %s: %w", p, err)
		}
	}
	return w, nil
}

func (w *watcher) add(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		w.files[p] = true
		return w.w.Add(filepath.Dir(p))
	}
	w.dirs = append(w.dirs, p)
	return w.addTree(p)
}

// addTree watches dir and every directory below it.
func (w *watcher) addTree(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return w.w.Add(path)
		}
		return nil
	})
}

// relevant reports whether an event concerns a watched tree or file.
func (w *watcher) relevant(name string) bool {
	if w.files[name] {
		return true
	}
	for _, d := range w.dirs {
		if name == d || (len(name) > len(d) && name[:len(d)] == d && name[len(d)] == filepath.Separator) {
			return true
		}
	}
	return false
}

// watchEvent is one thing the watcher did, as reported to Server.watchHook. The events come in
// the order the watcher handled them, and fsnotify delivers a directory's changes in the order
// they happened, so a test can write a file the watcher ignores and, once it is reported, know
// that every earlier change was handled — without sleeping to prove that nothing happened.
type watchEvent struct {
	kind     string // watchStarted, watchChange or watchReload
	path     string // the changed path (watchChange)
	relevant bool   // the change concerns a watched tree or file (watchChange)
	// pending: a reload is scheduled, the debounce timer running, once the event was handled.
	pending bool
}

// Kinds of watchEvent.
const (
	watchStarted = "started" // every path is watched; changes from now on are seen
	watchChange  = "change"  // an event was handled
	watchReload  = "reload"  // the debounce timer fired and Reload returned
)

// report tells Server.watchHook what the watcher did, when a hook is set.
func (w *watcher) report(ev watchEvent) {
	if w.s.watchHook != nil {
		w.s.watchHook(ev)
	}
}

// run handles events until ctx ends, then closes the fsnotify watcher.
func (w *watcher) run(ctx context.Context) {
	defer w.w.Close()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	pending := false // the timer is running
	w.report(watchEvent{kind: watchStarted})
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.w.Events:
			if !ok {
				return
			}
			if !w.relevant(ev.Name) {
				w.report(watchEvent{kind: watchChange, path: ev.Name, pending: pending})
				continue
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
					if err := w.addTree(ev.Name); err != nil {
						w.s.log.Warn("watch new directory", "path", ev.Name, "err", err)
					}
				}
			}
			w.s.log.Debug("change seen", "path", ev.Name, "op", ev.Op.String())
			timer.Reset(w.s.cfg.Debounce)
			pending = true
			w.report(watchEvent{kind: watchChange, path: ev.Name, relevant: true, pending: pending})
		case err, ok := <-w.w.Errors:
			if !ok {
				return
			}
			w.s.log.Warn("watch", "err", err)
		case <-timer.C:
			pending = false
			// Reload logs and counts its own failure; the last good set stays.
			if err := w.s.Reload(ctx); err != nil && !errors.Is(err, context.Canceled) {
				w.s.log.Debug("reload after change", "err", err)
			}
			w.report(watchEvent{kind: watchReload})
		}
	}
}

// randomHex returns n random bytes, hex-encoded.
func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
