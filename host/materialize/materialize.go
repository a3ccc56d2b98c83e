// Package materialize writes a checked plan: it substitutes the placeholders (secret values,
// root directories, content by reference) with format-aware escaping — and, in a built-in
// harness's MCP config, with each secret spelled so that the harness reads it back unchanged
// (plan.SecretSpelling: Claude Code expands ${NAME}, Pi resolves "$" and "!", each at the
// secret's field as many times as the harness does) — verifies every json,
// toml and markdown file reads back as its template with the values in place, and writes the
// files all-or-nothing through os.Root, so that no write can leave its root.
//
// Write and DryRun take a *plan.Checked, which only plan.Check makes: a plan that was not
// checked cannot be written, and the host checks each plan once. Both are safe to call from several goroutines for
// different roots; two concurrent Writes into the same roots race as any two writers would.
package materialize

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/host/redact"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// Roots are the absolute directories the plan's named roots resolve to. Config and Run are
// created (mode 0700) when missing; Checkout must exist unless MakeCheckout. A root no file or
// placeholder uses may be empty.
type Roots struct {
	Config   string
	Run      string
	Checkout string
	// MakeCheckout: Checkout is a directory loadout makes for the run (render --out), created
	// (mode 0755) by Write when missing, only once every check passed.
	MakeCheckout bool
}

func (r Roots) dir(name string) string {
	switch name {
	case abi.RootConfig:
		return r.Config
	case abi.RootRun:
		return r.Run
	case abi.RootCheckout:
		return r.Checkout
	}
	return ""
}

// input is what a render is written from: the roots, and the plan.Input the plan was checked
// against, whose Secrets and Blobs carry the values to substitute.
type input struct {
	Roots Roots
	Plan  plan.Input
}

// Result describes what was (or, for DryRun, would be) written. It never holds a secret value.
type Result struct {
	Files []FileResult `json:"files"`
	// Args and Env are the plan's, with root placeholders replaced by the root directories.
	Args []string   `json:"args"`
	Env  []abi.Pair `json:"env"`
	// Prompt is the plan's prompt with roots and content by reference filled in.
	Prompt string `json:"prompt"`
	// GitExclude lists the entries appended to the checkout's .git/info/exclude (for DryRun,
	// the plan's entries).
	GitExclude []string      `json:"gitExclude"`
	Warnings   []abi.Warning `json:"warnings"`
}

// FileResult is one file of the plan.
type FileResult struct {
	Root   string `json:"root"`
	Path   string `json:"path"`
	Mode   string `json:"mode"`
	Bytes  int    `json:"bytes"`
	Secret bool   `json:"secret"`
	// SHA256 is the hex digest of the bytes written; for DryRun, of Content.
	SHA256 string `json:"sha256"`
	// Written is the absolute path written; empty for DryRun.
	Written string `json:"written,omitempty"`
	// Content is set by DryRun only: the content with every secret replaced by redact.Mask.
	Content string `json:"content,omitempty"`
}

// Warning codes Write adds to the plan's warnings.
const (
	// WarnGitExcludeUnsupported: the checkout's .git is a file or a symlink (a linked worktree
	// or a submodule). Its exclude file lies outside the checkout root, which loadout never
	// writes, so the entries were not added.
	WarnGitExcludeUnsupported = "git_exclude_unsupported"
)

// prepared is one file ready to be written.
type prepared struct {
	f       abi.File
	content string
	mode    os.FileMode
}

// values maps every placeholder to its raw value. Secrets take redact.Mask instead when masked.
func values(in input, masked bool) (vals, secrets map[string]string) {
	vals = map[string]string{}
	secrets = map[string]string{}
	for _, s := range in.Plan.Secrets {
		if masked {
			vals[s.Placeholder] = redact.Mask
		} else {
			vals[s.Placeholder] = s.Value
			secrets[s.Placeholder] = s.Value
		}
	}
	for _, b := range in.Plan.Blobs {
		vals[b.Placeholder] = b.Value
	}
	for _, name := range []string{abi.RootConfig, abi.RootRun, abi.RootCheckout} {
		if d := in.Roots.dir(name); d != "" {
			vals[plan.RootPlaceholder(name)] = d
		}
	}
	return vals, secrets
}

// spellSecrets returns vals and secrets with every secret value spelled the way the harness
// reads file f at the secret's field (plan.SecretSpelling: Claude Code expands ${NAME} in its
// MCP config, headers twice; Pi resolves "$" and "!"), so that the harness hands the server
// the secret itself; for any other file, vals and secrets unchanged. The read-back check then
// expects the spelled value.
func spellSecrets(in input, f abi.File, vals, secrets map[string]string) (map[string]string, map[string]string) {
	if len(secrets) == 0 || in.Plan.Profile.SecretSpelling(f.Root, f.Path, plan.FieldEnv) == nil &&
		in.Plan.Profile.SecretSpelling(f.Root, f.Path, plan.FieldHeaders) == nil {
		return vals, secrets
	}
	v := make(map[string]string, len(vals))
	for k, x := range vals {
		v[k] = x
	}
	s := make(map[string]string, len(secrets))
	for _, sec := range in.Plan.Secrets {
		x, ok := secrets[sec.Placeholder]
		if !ok {
			continue
		}
		if spell := in.Plan.Profile.SecretSpelling(f.Root, f.Path, sec.Field); spell != nil {
			x = spell(x)
		}
		v[sec.Placeholder], s[sec.Placeholder] = x, x
	}
	return v, s
}

// validRoot reports why dir cannot be a root, or "".
func validRoot(dir string) string {
	switch {
	case dir == "":
		return "not set"
	case !filepath.IsAbs(dir):
		return "not absolute"
	case filepath.Clean(dir) != dir:
		return "not clean"
	}
	for _, r := range dir {
		if unicode.IsControl(r) || r == '"' || r == '\\' {
			return "holds a control character, quote or backslash"
		}
	}
	return ""
}

// prepare substitutes every file and string of a checked plan.
func prepare(p *abi.Plan, in input, masked bool) ([]prepared, *Result, error) {
	vals, secrets := values(in, masked)
	for _, name := range []string{abi.RootConfig, abi.RootRun, abi.RootCheckout} {
		if d := in.Roots.dir(name); d != "" {
			if why := validRoot(d); why != "" {
				return nil, nil, fmt.Errorf("root %s %q: %s", name, d, why)
			}
		}
	}
	var files []prepared
	for _, f := range p.Files {
		if !masked && in.Roots.dir(f.Root) == "" {
			return nil, nil, fmt.Errorf("file %s:%s: root %s is not set", f.Root, f.Path, f.Root)
		}
		fvals, fsecrets := spellSecrets(in, f, vals, secrets)
		content, err := substitute(f.Content, fvals, escaperFor(f.Format))
		if err != nil {
			if masked {
				content = f.Content // a dry run without roots shows the placeholders
			} else {
				return nil, nil, fmt.Errorf("file %s:%s: %w", f.Root, f.Path, err)
			}
		} else if err := verifyRoundTrip(f.Format, f.Content, content, fvals, fsecrets); err != nil {
			return nil, nil, fmt.Errorf("file %s:%s: %w", f.Root, f.Path, err)
		}
		mode, _ := strconv.ParseUint(f.Mode, 8, 32) // checked: 0600 or 0644
		files = append(files, prepared{f: f, content: content, mode: os.FileMode(mode)})
	}
	res := &Result{
		Files: []FileResult{}, Args: []string{}, Env: []abi.Pair{},
		GitExclude: []string{}, Warnings: append([]abi.Warning{}, p.Warnings...),
	}
	// Args, env and prompt hold no secret (plan.Check keeps secret placeholders in secret
	// files); should one get there all the same, the Result masks it with redact's model.
	var set redact.Set
	for _, sec := range in.Plan.Secrets {
		set.Add(plan.SecretSpellings(sec.Value)...)
	}
	mask := redact.New(set.List())
	fill := func(s string) (string, error) {
		out, err := substitute(s, vals, raw)
		if err != nil && masked {
			return s, nil
		}
		return mask.String(out), err
	}
	for i, a := range p.Args {
		s, err := fill(a)
		if err != nil {
			return nil, nil, fmt.Errorf("args[%d]: %w", i, err)
		}
		res.Args = append(res.Args, s)
	}
	for _, e := range p.Env {
		s, err := fill(e.Value)
		if err != nil {
			return nil, nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		res.Env = append(res.Env, abi.Pair{Name: e.Name, Value: s})
	}
	prompt, err := fill(p.Prompt)
	if err != nil {
		return nil, nil, fmt.Errorf("prompt: %w", err)
	}
	res.Prompt = prompt
	return files, res, nil
}

// DryRun substitutes the checked plan like Write and returns the same Result without touching
// the file system. Secrets are replaced by redact.Mask in every file's Content; a root that is
// not set (roots may be zero) leaves its placeholder in place.
func DryRun(ctx context.Context, c *plan.Checked, roots Roots) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if c == nil {
		return nil, errors.New("dry run: no checked plan")
	}
	pl, in := c.Plan(), input{Roots: roots, Plan: c.Input()}
	p := &pl
	files, res, err := prepare(p, in, true)
	if err != nil {
		return nil, fmt.Errorf("dry run: %w", err)
	}
	for _, pf := range files {
		sum := sha256.Sum256([]byte(pf.content))
		res.Files = append(res.Files, FileResult{
			Root: pf.f.Root, Path: pf.f.Path, Mode: pf.f.Mode, Bytes: len(pf.content), Secret: pf.f.Secret,
			SHA256: hex.EncodeToString(sum[:]), Content: pf.content,
		})
	}
	res.GitExclude = append(res.GitExclude, p.GitExclude...)
	return res, nil
}

// afterStaged, when set (by tests only), runs once every file is staged, before the commit.
var afterStaged func()

// staged is one temp file waiting to be renamed into place.
type staged struct {
	root       *os.Root
	tmp, final string
}

// tx records what Write created, so that a failure before the commit can undo it, and its
// staging directory in each root (stage.go), so that a killed Write's can be finished later.
type tx struct {
	staged  []staged
	dirs    []dirEntry // created directories, in creation order
	mkRoots []string   // root directories created
	kinds   map[*os.Root]string
	stages  map[*os.Root]*stage
}

// stageOf returns r's staging directory, created on first use.
func (t *tx) stageOf(r *os.Root) (*stage, error) {
	if st, ok := t.stages[r]; ok {
		return st, nil
	}
	st, err := openStage(r, t.kinds[r])
	if err != nil {
		return nil, err
	}
	if t.stages == nil {
		t.stages = map[*os.Root]*stage{}
	}
	t.stages[r] = st
	return st, nil
}

// closeStages removes every staging directory (after the commit, or after a rollback).
func (t *tx) closeStages() {
	for _, st := range t.stages {
		st.remove()
	}
}

type dirEntry struct {
	root *os.Root
	path string
}

func (t *tx) rollback() {
	for _, s := range t.staged {
		fault()
		_ = s.root.Remove(s.tmp)
	}
	t.closeStages()
	for i := len(t.dirs) - 1; i >= 0; i-- {
		fault()
		_ = t.dirs[i].root.Remove(t.dirs[i].path)
	}
	for i := len(t.mkRoots) - 1; i >= 0; i-- {
		fault()
		_ = os.Remove(t.mkRoots[i])
	}
}

// Write substitutes the placeholders of a checked plan (only plan.Check makes a *plan.Checked:
// an unchecked plan cannot be written) and writes its files under roots, all or nothing: every file goes to a stage directory in its root (stage.go),
// is synced and given its mode; only when every file of every root (and the git exclude update)
// is staged does Write prepare each root (its record of renames and removals) and commit the
// render (a mark in each root's stage; the first one is the commit point), then publish it:
// rename the staged files into place and remove the files the root's previous render wrote
// (its manifest, manifest.go) that this plan does not. If anything fails before the commit
// point, every staged file and every directory Write created is removed and the roots are as
// they were. From the commit point on, the render is published into every root whatever
// happens: by this Write, or, if it is killed or the file system fails under it, by the next
// Sweep of the roots (every Write and `loadout render` start with one).
//
// Writes go through os.Root and never through a symlink: a symlink on the path of a written
// file (a directory of it, or the file itself) is an error even when it points inside the
// root. An existing directory or special file where a plan file must go is an error; an
// existing regular file is replaced.
//
// gitExclude: when the checkout's .git is a directory, each entry not already a line of
// .git/info/exclude is appended once. When .git is a file or symlink (a linked worktree or a
// submodule) the exclude file lives outside the checkout: nothing is written there and the
// result carries a WarnGitExcludeUnsupported warning. Without .git nothing is done.
func Write(ctx context.Context, c *plan.Checked, rs Roots) (res *Result, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if c == nil {
		return nil, errors.New("materialize: no checked plan")
	}
	pl, in := c.Plan(), input{Roots: rs, Plan: c.Input()}
	p := &pl
	files, res, err := prepare(p, in, false)
	if err != nil {
		return nil, fmt.Errorf("materialize: %w", err)
	}
	if len(p.GitExclude) > 0 && in.Roots.Checkout == "" {
		return nil, fmt.Errorf("materialize: gitExclude needs the checkout root")
	}
	// The roots this render touches: those it writes to, the checkout it makes, and those
	// holding the manifest of an earlier render, whose files it replaces.
	touch := map[string]bool{}
	newPaths := map[string][]string{}
	for _, pf := range files {
		touch[pf.f.Root] = true
		newPaths[pf.f.Root] = append(newPaths[pf.f.Root], pf.f.Path)
	}
	if len(p.GitExclude) > 0 || (in.Roots.MakeCheckout && in.Roots.Checkout != "") {
		touch[abi.RootCheckout] = true
	}
	for _, kind := range rootKinds {
		if d := in.Roots.dir(kind); d != "" && !touch[kind] && hasManifest(d, kind) {
			touch[kind] = true
		}
	}
	if err := checkRoots(in.Roots, touch); err != nil {
		return nil, fmt.Errorf("materialize: %w", err)
	}
	// What a killed render left goes first: it is rolled forward or back.
	if err := Sweep(in.Roots); err != nil {
		return nil, fmt.Errorf("materialize: %w", err)
	}
	if err := checkOwn(in.Roots, touch); err != nil {
		return nil, fmt.Errorf("materialize: %w", err)
	}
	rid := renderID(files, p.GitExclude)
	t := &tx{kinds: map[*os.Root]string{}}
	roots := map[string]*os.Root{}
	defer func() {
		for _, r := range roots {
			r.Close()
		}
	}()
	committed := false
	defer func() {
		if !committed {
			t.rollback()
		}
	}()
	open := func(name string) (*os.Root, error) {
		if r, ok := roots[name]; ok {
			return r, nil
		}
		dir := in.Roots.dir(name)
		switch {
		case name != abi.RootCheckout:
			if err := t.mkRoot(dir, 0o700); err != nil {
				return nil, fmt.Errorf("create root %s: %w", name, err)
			}
		case in.Roots.MakeCheckout:
			if err := t.mkRoot(dir, 0o755); err != nil {
				return nil, fmt.Errorf("create root %s: %w", name, err)
			}
		}
		r, err := os.OpenRoot(dir)
		if err != nil {
			return nil, fmt.Errorf("open root %s: %w", name, err)
		}
		roots[name] = r
		t.kinds[r] = name
		return r, nil
	}
	for _, kind := range rootKinds {
		if touch[kind] {
			if _, err := open(kind); err != nil {
				return nil, fmt.Errorf("materialize: %w", err)
			}
		}
	}
	for _, pf := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r, err := open(pf.f.Root)
		if err != nil {
			return nil, fmt.Errorf("materialize: %w", err)
		}
		dirMode := os.FileMode(0o700)
		if pf.f.Root == abi.RootCheckout {
			dirMode = 0o755
		}
		if err := t.stage(r, pf.f.Path, []byte(pf.content), pf.mode, dirMode); err != nil {
			return nil, fmt.Errorf("materialize %s:%s: %w", pf.f.Root, pf.f.Path, err)
		}
		sum := sha256.Sum256([]byte(pf.content))
		res.Files = append(res.Files, FileResult{
			Root: pf.f.Root, Path: pf.f.Path, Mode: pf.f.Mode, Bytes: len(pf.content), Secret: pf.f.Secret,
			SHA256: hex.EncodeToString(sum[:]), Written: filepath.Join(in.Roots.dir(pf.f.Root), filepath.FromSlash(pf.f.Path)),
		})
	}
	if len(p.GitExclude) > 0 {
		r, err := open(abi.RootCheckout)
		if err != nil {
			return nil, fmt.Errorf("materialize: %w", err)
		}
		added, warn, err := t.stageGitExclude(r, p.GitExclude)
		if err != nil {
			return nil, fmt.Errorf("materialize git exclude: %w", err)
		}
		res.GitExclude = append(res.GitExclude, added...)
		if warn != nil {
			res.Warnings = append(res.Warnings, *warn)
		}
	}
	// Each touched root gets its new manifest and the removals of what its previous render
	// wrote and this one does not.
	removes := map[string][]string{}
	for _, kind := range rootKinds {
		if !touch[kind] {
			continue
		}
		r := roots[kind]
		old, err := readManifest(r, kind)
		if err != nil {
			return nil, fmt.Errorf("materialize: read the manifest of root %s: %w", kind, err)
		}
		keep := map[string]bool{}
		for _, p := range newPaths[kind] {
			keep[p] = true
		}
		for _, p := range old {
			if !keep[p] {
				keep[p] = true
				removes[kind] = append(removes[kind], p)
			}
		}
		mp := manifestPath(kind)
		switch {
		case kind != abi.RootCheckout || len(newPaths[kind]) > 0:
			if err := t.stage(r, mp, manifestContent(kind, rid, newPaths[kind]), 0o600, 0o755); err != nil {
				return nil, fmt.Errorf("materialize: manifest of root %s: %w", kind, err)
			}
		case hasManifest(in.Roots.dir(kind), kind):
			removes[kind] = append(removes[kind], mp)
		}
		if _, err := t.stageOf(r); err != nil {
			return nil, fmt.Errorf("materialize: stage in root %s: %w", kind, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if afterStaged != nil {
		afterStaged()
	}
	// Prepare every root, then commit: the first mark is the render's commit point. A failure
	// before it still rolls everything back.
	recs := map[string]commitRecord{}
	for _, kind := range rootKinds {
		r, ok := roots[kind]
		if !ok || t.stages[r] == nil {
			continue
		}
		rec := commitRecord{Tx: rid, Renames: [][2]string{}, Removes: removes[kind]}
		if rec.Removes == nil {
			rec.Removes = []string{}
		}
		for _, s := range t.staged {
			if s.root == r {
				rec.Renames = append(rec.Renames, [2]string{s.tmp, s.final})
			}
		}
		if err := t.stages[r].prepare(rec); err != nil {
			return nil, fmt.Errorf("materialize: prepare root %s: %w", kind, err)
		}
		recs[kind] = rec
	}
	for _, kind := range rootKinds {
		if _, ok := recs[kind]; !ok {
			continue
		}
		if err := t.stages[roots[kind]].commit(); err != nil {
			if !committed {
				return nil, fmt.Errorf("materialize: commit root %s: %w", kind, err)
			}
			break // committed: the publish below or the next sweep completes it
		}
		committed = true
	}
	for _, kind := range rootKinds {
		rec, ok := recs[kind]
		if !ok {
			continue
		}
		r := roots[kind]
		if err := apply(r, kind, t.stages[r].dir, rec); err != nil {
			for _, st := range t.stages {
				st.release()
			}
			return nil, fmt.Errorf("materialize: publish root %s (the next render or sweep of the roots completes it): %w", kind, err)
		}
	}
	t.closeStages()
	return res, nil
}

// renderID identifies a render by what it writes: a digest of every file (root, path, mode,
// content) and git-exclude entry, so that the same render always gets the same id and the
// manifests stay deterministic.
func renderID(files []prepared, exclude []string) string {
	h := sha256.New()
	for _, pf := range files {
		fmt.Fprintf(h, "%s\x00%s\x00%o\x00%d\x00", pf.f.Root, pf.f.Path, pf.mode, len(pf.content))
		h.Write([]byte(pf.content))
	}
	for _, e := range exclude {
		fmt.Fprintf(h, "exclude\x00%s\x00", e)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// rootKinds are the roots in the order Write commits and publishes them.
var rootKinds = []string{abi.RootConfig, abi.RootRun, abi.RootCheckout}

// hasManifest reports whether root directory dir of kind holds a manifest (a regular file).
func hasManifest(dir, kind string) bool {
	fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(manifestPath(kind))))
	return err == nil && fi.Mode().IsRegular()
}

// mkRoot creates dir and its missing parents (mode perm), recording each one it creates.
func (t *tx) mkRoot(dir string, perm os.FileMode) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		fault()
		if err := os.Mkdir(missing[i], perm); err != nil {
			return err
		}
		t.mkRoots = append(t.mkRoots, missing[i])
	}
	return nil
}

// mkdirs creates the missing directories of dir under r, recording each one it creates.
func (t *tx) mkdirs(r *os.Root, dir string, mode os.FileMode) error {
	if dir == "." {
		return nil
	}
	segs := strings.Split(dir, "/")
	for i := range segs {
		p := strings.Join(segs[:i+1], "/")
		// Lstat: a symlink on the way is refused even when it stays inside the root, so
		// that a checkout's .cat-context -> src (or -> .git) cannot turn a plan file into a
		// write over a tracked file.
		fi, err := r.Lstat(p)
		switch {
		case err == nil && fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symlink; loadout does not write through symlinks", p)
		case err == nil && fi.IsDir():
			continue
		case err == nil:
			return fmt.Errorf("%s is in the way of a directory", p)
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
		st, err := t.stageOf(r)
		if err != nil {
			return err
		}
		if err := st.created(p); err != nil {
			return err
		}
		fault()
		if err := r.Mkdir(p, mode); err != nil {
			return err
		}
		t.dirs = append(t.dirs, dirEntry{root: r, path: p})
	}
	return nil
}

// stage writes data to a temp file next to p, synced and with its mode.
func (t *tx) stage(r *os.Root, p string, data []byte, mode, dirMode os.FileMode) error {
	// The stage first: opening it cleans what a killed render left, its empty directories
	// included, before this render looks at the directories it needs.
	if _, err := t.stageOf(r); err != nil {
		return err
	}
	if err := t.mkdirs(r, path.Dir(p), dirMode); err != nil {
		return err
	}
	if fi, err := r.Lstat(p); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("a %s is in the way", kindOf(fi.Mode()))
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	st, err := t.stageOf(r)
	if err != nil {
		return err
	}
	tmp := st.tempName()
	fault()
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	t.staged = append(t.staged, staged{root: r, tmp: tmp, final: p})
	if err := writeSynced(f, data); err != nil {
		return err
	}
	fault()
	return r.Chmod(tmp, mode)
}

// writeSynced writes data to f, syncs it to disk and closes it: the bytes are durable before
// anything names the file as written.
func writeSynced(f *os.File, data []byte) error {
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "special file"
}

const excludePath = ".git/info/exclude"

// stageGitExclude stages .git/info/exclude with the entries it lacks appended.
func (t *tx) stageGitExclude(r *os.Root, entries []string) (added []string, warn *abi.Warning, err error) {
	fi, err := r.Lstat(".git")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, nil
	case err != nil:
		return nil, nil, err
	case !fi.IsDir():
		return nil, &abi.Warning{Code: WarnGitExcludeUnsupported,
			Message: "the checkout's .git is not a directory (a linked worktree or a submodule); add " +
				strings.Join(entries, ", ") + " to its exclude file yourself"}, nil
	}
	// Every component of the exclude file's path must be what it says, not a symlink (stage
	// checks the directories again; this keeps ReadFile from following one too).
	for _, p := range []string{".git/info", excludePath} {
		if fi, err := r.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, nil, fmt.Errorf("%s is a symlink; loadout does not write through symlinks", p)
		}
	}
	old, err := r.ReadFile(excludePath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	mode := os.FileMode(0o644)
	if fi, err := r.Lstat(excludePath); err == nil {
		mode = fi.Mode().Perm()
	}
	have := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(string(old)))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		have[strings.TrimSpace(sc.Text())] = true
	}
	var b strings.Builder
	b.Write(old)
	for _, e := range entries {
		if have[e] {
			continue
		}
		have[e] = true
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(e + "\n")
		added = append(added, e)
	}
	if len(added) == 0 {
		return []string{}, nil, nil
	}
	if err := t.stage(r, excludePath, []byte(b.String()), mode, 0o755); err != nil {
		return nil, nil, err
	}
	return added, nil, nil
}
