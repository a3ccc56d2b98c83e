package materialize

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"
)

// A Write stages its files in one private directory per root, <root>/.loadout-stage-<random>/,
// and renames them into place only when every file is staged. The stage holds a lock file that
// the writing process keeps locked (flock) while it runs, and a journal of the directories it
// created on the way. A process killed mid-way (kill -9) releases its lock: the next Write into
// the same root finds the stage unlocked, removes the directories its journal names (when they
// are still empty) and the stage itself, so no temp file, no copy of a secret and no empty
// directory stays behind.

const (
	stagePrefix = ".loadout-stage-"
	stageLock   = "lock"
	stageDirs   = "dirs" // the journal: one created directory per line, in creation order
)

// stage is one root's staging directory, owned by one Write.
type stage struct {
	root    *os.Root
	dir     string   // its name in the root
	lock    *os.File // locked while the Write runs
	journal *os.File
	n       int // files staged so far
}

// openStage removes the stale stages of r, then creates and locks a new one.
func openStage(r *os.Root) (*stage, error) {
	cleanStale(r)
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	dir := stagePrefix + hex.EncodeToString(rnd[:])
	if err := r.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	st := &stage{root: r, dir: dir}
	var err error
	if st.lock, err = r.OpenFile(dir+"/"+stageLock, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		err = tryLock(st.lock)
	}
	if err == nil {
		st.journal, err = r.OpenFile(dir+"/"+stageDirs, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	}
	if err != nil {
		st.remove()
		return nil, err
	}
	return st, nil
}

// created records a directory the Write created, before anything is put into it.
func (st *stage) created(dir string) error {
	if _, err := st.journal.WriteString(dir + "\n"); err != nil {
		return err
	}
	return st.journal.Sync()
}

// tempName returns the name of the next staged file.
func (st *stage) tempName() string {
	st.n++
	return st.dir + "/f" + strconv.Itoa(st.n)
}

// remove deletes the stage (its staged files are renamed or abandoned by then) and unlocks it.
func (st *stage) remove() {
	if st.journal != nil {
		st.journal.Close()
	}
	_ = st.root.RemoveAll(st.dir)
	if st.lock != nil {
		st.lock.Close()
	}
}

// cleanStale removes every stage of r whose owner is gone: one whose lock file can be locked.
// A stage a running Write holds is left alone. Errors are ignored: cleaning is best effort and
// never stops a render.
func cleanStale(r *os.Root) {
	f, err := r.Open(".")
	if err != nil {
		return
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	for _, name := range names {
		if !strings.HasPrefix(name, stagePrefix) {
			continue
		}
		if fi, err := r.Lstat(name); err != nil || !fi.IsDir() {
			continue
		}
		lock, err := r.OpenFile(name+"/"+stageLock, os.O_RDWR, 0)
		if err == nil {
			if tryLock(lock) != nil {
				lock.Close()
				continue // its Write is still running
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		removeJournalDirs(r, name+"/"+stageDirs)
		_ = r.RemoveAll(name)
		if lock != nil {
			lock.Close()
		}
	}
}

// removeJournalDirs removes the directories a journal names, deepest first, where they are
// empty: a killed Write created them and put nothing into them that was renamed into place.
func removeJournalDirs(r *os.Root, journal string) {
	f, err := r.Open(journal)
	if err != nil {
		return
	}
	defer f.Close()
	var dirs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if d := sc.Text(); d != "" {
			dirs = append(dirs, d)
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		if fi, err := r.Lstat(d); err == nil && fi.IsDir() {
			_ = r.Remove(d) // fails, and keeps it, when it is not empty
		}
	}
}
