package materialize

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/loadout-dev/loadout/internal/flock"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// A Write stages its files in one private directory per root, <root>/.loadout-stage-<random>/,
// and publishes them only when every file of every root is staged. The stage holds a lock file
// that the writing process keeps locked (flock) while it runs, and a journal of the directories
// it created on the way. Once everything is staged, Write prepares each root: it writes the
// root's record (the renames, staged file → final path, and the removals, files of the previous
// render the new one does not write, that publish the render there), under the render's id, a
// digest of everything it writes. Then it commits: it marks each root's stage committed (an
// empty file "commit"). The first mark is the render's commit point: from it on, every root is
// published, by this Write or, if it dies, by the next sweep. Then each root is published and
// its stage removed.
//
// A process killed mid-way (kill -9) releases its locks. The next Sweep of the render's roots
// (every Write, and `loadout render` before anything else) finds the stages unlocked and rolls
// them all forward when the render committed (a stage of its id carries the mark, or a root's
// manifest names the id: that root was published) and all back when it did not (the
// directories the journals name are removed when still empty), then removes the stages: no
// temp file, no copy of a secret and no empty directory stays behind, and the roots hold the
// old render or the new one.

const (
	stagePrefix = ".loadout-stage-"
	stageLock   = "lock"
	stageDirs   = "dirs"   // the journal: one created directory per line, in creation order
	stageRecord = "record" // the root's commitRecord, as JSON
	stageCommit = "commit" // the mark: the render committed
)

// faultHook, when set (by tests only), runs before every step of a Write or a sweep that changes
// the file system, with the step's number counting from 1 (faultSteps).
var (
	faultHook  func(step int)
	faultSteps atomic.Int64
)

func fault() {
	if faultHook != nil {
		faultHook(int(faultSteps.Add(1)))
	}
}

// stage is one root's staging directory, owned by one Write.
type stage struct {
	root    *os.Root
	kind    string   // config, run or checkout
	dir     string   // its name in the root
	lock    *os.File // locked while the Write runs
	journal *os.File
	n       int // files staged so far
}

// commitRecord publishes render Tx into one root: Renames (staged name, final path) first, in
// order, then Removes.
type commitRecord struct {
	Tx      string      `json:"tx"`
	Renames [][2]string `json:"renames"`
	Removes []string    `json:"removes"`
}

// openStage creates and locks a new stage in r (Write swept the stale ones first).
func openStage(r *os.Root, kind string) (*stage, error) {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	dir := stagePrefix + hex.EncodeToString(rnd[:])
	fault()
	if err := r.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	st := &stage{root: r, kind: kind, dir: dir}
	var err error
	fault()
	if st.lock, err = r.OpenFile(dir+"/"+stageLock, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		err = flock.TryLock(st.lock)
	}
	if err == nil {
		fault()
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
	fault()
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

// prepare writes the stage's record, synced, under its final name.
func (st *stage) prepare(rec commitRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	tmp := st.dir + "/" + stageRecord + ".tmp"
	fault()
	f, err := st.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if err := writeSynced(f, data); err != nil {
		return err
	}
	fault()
	if err := st.root.Rename(tmp, st.dir+"/"+stageRecord); err != nil {
		return err
	}
	return syncDir(st.root, st.dir)
}

// commit marks the stage committed.
func (st *stage) commit() error {
	fault()
	f, err := st.root.OpenFile(st.dir+"/"+stageCommit, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return syncDir(st.root, st.dir)
}

// remove deletes the stage (its staged files are renamed or abandoned by then) and unlocks it.
func (st *stage) remove() {
	if st.journal != nil {
		st.journal.Close()
	}
	fault()
	_ = st.root.RemoveAll(st.dir)
	if st.lock != nil {
		st.lock.Close()
	}
}

// release unlocks the stage and leaves it in place, for the next sweep to roll forward.
func (st *stage) release() {
	if st.journal != nil {
		st.journal.Close()
	}
	if st.lock != nil {
		st.lock.Close()
	}
}

// Sweep finishes what a killed render left in roots, which must be that render's roots: in
// each root that exists (a config or run root only when it is private to the caller, the rules
// of RootError), the stages whose owner is gone are rolled forward when their render committed
// and back when it did not, then removed. A stage a running Write holds is left alone. Write
// sweeps its roots first; a caller sweeps roots it will not write (a render refused before its
// write).
func Sweep(roots Roots) error {
	var open []*os.Root
	defer func() {
		for _, r := range open {
			r.Close()
		}
	}()
	var stale []*staleStage
	defer func() {
		for _, s := range stale {
			if s.lock != nil {
				s.lock.Close()
			}
		}
	}()
	manifests := map[string]bool{} // render ids the roots' manifests name
	for _, kind := range rootKinds {
		d := roots.dir(kind)
		if d == "" || validRoot(d) != "" {
			continue
		}
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() {
			continue
		}
		if kind != abi.RootCheckout && privacyProblem(kind, d, fi) != nil {
			continue // not loadout's to touch
		}
		r, err := os.OpenRoot(d)
		if err != nil {
			return err
		}
		open = append(open, r)
		if tx := manifestTx(r, kind); tx != "" {
			manifests[tx] = true
		}
		found, err := staleStages(r, kind)
		stale = append(stale, found...)
		if err != nil {
			return fmt.Errorf("root %s %q: %w", kind, d, err)
		}
	}
	committed := map[string]bool{}
	for _, s := range stale {
		if s.rec != nil && s.committed {
			committed[s.rec.Tx] = true
		}
	}
	for _, s := range stale {
		var err error
		if s.rec != nil && (committed[s.rec.Tx] || manifests[s.rec.Tx]) {
			err = apply(s.r, s.kind, s.name, *s.rec)
		} else {
			removeJournalDirs(s.r, s.name+"/"+stageDirs)
		}
		if err == nil {
			fault()
			err = s.r.RemoveAll(s.name)
		}
		if err != nil {
			// Kept: the root would otherwise keep a mix of two renders.
			return fmt.Errorf("root %s: finish the killed render of stage %s: %w", s.kind, s.name, err)
		}
	}
	return nil
}

// staleStage is a stage whose Write is gone, locked by the sweep.
type staleStage struct {
	r         *os.Root
	kind      string
	name      string
	lock      *os.File
	rec       *commitRecord // nil when the Write died before preparing the root
	committed bool          // the stage carries the commit mark
}

// staleStages locks and returns the stages of r whose owner is gone (whose lock file can be
// locked); a stage a running Write holds is left alone. A record that does not decode is an
// error: it was written whole or not at all.
func staleStages(r *os.Root, kind string) ([]*staleStage, error) {
	f, err := r.Open(".")
	if err != nil {
		return nil, err
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	sort.Strings(names)
	var out []*staleStage
	for _, name := range names {
		if !strings.HasPrefix(name, stagePrefix) {
			continue
		}
		if fi, err := r.Lstat(name); err != nil || !fi.IsDir() {
			continue
		}
		lock, err := r.OpenFile(name+"/"+stageLock, os.O_RDWR, 0)
		if err == nil {
			if flock.TryLock(lock) != nil {
				lock.Close()
				continue // its Write is still running
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			continue
		} else {
			lock = nil
		}
		s := &staleStage{r: r, kind: kind, name: name, lock: lock}
		out = append(out, s)
		data, err := r.ReadFile(name + "/" + stageRecord)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return out, err
		}
		var rec commitRecord
		if err := json.Unmarshal(data, &rec); err != nil {
			return out, fmt.Errorf("stage %s: record: %w", name, err)
		}
		s.rec = &rec
		_, err = r.Lstat(name + "/" + stageCommit)
		s.committed = err == nil
	}
	return out, nil
}

// apply publishes rec into r: every rename whose staged file is still there, then every
// removal, then syncs the directories it changed. It is idempotent, so a sweep repeats it
// after a kill at any step. Every path is checked first against what a render may write into a
// root of this kind (validFinal), so a stage planted in a checkout cannot move a file anywhere
// else.
func apply(r *os.Root, kind, stageDir string, rec commitRecord) error {
	for _, rn := range rec.Renames {
		tmp, final := rn[0], rn[1]
		if !strings.HasPrefix(tmp, stageDir+"/f") || strings.Contains(tmp[len(stageDir)+2:], "/") || !validFinal(kind, final) {
			return fmt.Errorf("commit record renames %q to %q, which a render never does", tmp, final)
		}
		if final == excludePath {
			if err := checkAppendOnly(r, tmp); err != nil {
				return err
			}
		}
	}
	for _, p := range rec.Removes {
		if !validFinal(kind, p) || p == excludePath {
			return fmt.Errorf("commit record removes %q, which a render never does", p)
		}
	}
	dirs := map[string]bool{}
	for _, rn := range rec.Renames {
		tmp, final := rn[0], rn[1]
		if _, err := r.Lstat(tmp); errors.Is(err, fs.ErrNotExist) {
			continue // renamed before
		}
		if err := noSymlinkAbove(r, final); err != nil {
			return err
		}
		fault()
		if err := r.Rename(tmp, final); err != nil {
			return fmt.Errorf("rename %s: %w", final, err)
		}
		dirs[path.Dir(final)] = true
	}
	for _, p := range rec.Removes {
		if err := noSymlinkAbove(r, p); errors.Is(err, fs.ErrNotExist) {
			continue // gone with its directory
		} else if err != nil {
			return err
		}
		fi, err := r.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			continue // not what loadout wrote there
		}
		fault()
		if err := r.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", p, err)
		}
		// The directories left empty go too: a render created them for what it wrote.
		d := path.Dir(p)
		for ; d != "."; d = path.Dir(d) {
			if fi, err := r.Lstat(d); err != nil || !fi.IsDir() {
				break
			}
			fault()
			if r.Remove(d) != nil {
				break // not empty: something else lives there
			}
		}
		dirs[d] = true
	}
	for d := range dirs {
		_ = syncDir(r, d)
	}
	return nil
}

// validFinal reports whether a render may write (or remove) p in a root of kind: a clean,
// local path outside loadout's own entries and .git, under the context directory in a
// checkout; the root's manifest and a checkout's .git/info/exclude too.
func validFinal(kind, p string) bool {
	if !fs.ValidPath(p) || p == "." {
		return false
	}
	if p == manifestPath(kind) || (kind == abi.RootCheckout && p == excludePath) {
		return true
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".git" || strings.HasPrefix(seg, OwnMarker) {
			return false
		}
	}
	return kind != abi.RootCheckout || strings.HasPrefix(p, checkoutContextDir+"/")
}

// checkAppendOnly accepts a staged .git/info/exclude only when it keeps the current one as its
// beginning: a render only appends entries.
func checkAppendOnly(r *os.Root, tmp string) error {
	staged, err := r.ReadFile(tmp)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // renamed before
	} else if err != nil {
		return err
	}
	cur, err := r.ReadFile(excludePath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if !strings.HasPrefix(string(staged), string(cur)) {
		return fmt.Errorf("commit record replaces %s instead of appending to it", excludePath)
	}
	return nil
}

// noSymlinkAbove refuses p when a directory on its way is a symlink (or not a directory).
func noSymlinkAbove(r *os.Root, p string) error {
	segs := strings.Split(p, "/")
	for i := 1; i < len(segs); i++ {
		d := strings.Join(segs[:i], "/")
		fi, err := r.Lstat(d)
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory; loadout does not write through symlinks", d)
		}
	}
	return nil
}

// syncDir makes the entries of directory d of r durable.
func syncDir(r *os.Root, d string) error {
	f, err := r.Open(d)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
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
			fault()
			_ = r.Remove(d) // fails, and keeps it, when it is not empty
		}
	}
}
