// Package materialize writes a checked plan: it substitutes the placeholders (secret values,
// root directories, content by reference) with format-aware escaping — and, in a built-in
// harness's MCP config, with each secret spelled so that the harness reads it back unchanged
// (plan.SecretSpelling: Claude Code expands ${NAME}, Pi resolves "$" and "!", each at the
// secret's field as many times as the harness does) — verifies every json,
// toml and markdown file reads back as its template with the values in place, and writes the
// files all-or-nothing through os.Root, so that no write can leave its root.
//
// Write and DryRun check the plan themselves (plan.Check) before anything else: a plan that
// was not checked cannot be written. Both are safe to call from several goroutines for
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
	"github.com/loadout-dev/loadout/sdk/abi"
)

// Mask replaces a secret value wherever a Result would otherwise show it.
const Mask = "********"

// Roots are the absolute directories the plan's named roots resolve to. Config and Run are
// created (mode 0700) when missing; Checkout must exist. A root no file or placeholder uses
// may be empty.
type Roots struct {
	Config   string
	Run      string
	Checkout string
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

// Input is what Write needs besides the plan: the roots, and the plan.Input the plan is checked
// against, whose Secrets and Blobs carry the values to substitute.
type Input struct {
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
	// Content is set by DryRun only: the content with every secret replaced by Mask.
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

// values maps every placeholder to its raw value. Secrets take mask instead when masked.
func values(in Input, masked bool) (vals, secrets map[string]string) {
	vals = map[string]string{}
	secrets = map[string]string{}
	for _, s := range in.Plan.Secrets {
		if masked {
			vals[s.Placeholder] = Mask
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
func spellSecrets(in Input, f abi.File, vals, secrets map[string]string) (map[string]string, map[string]string) {
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

// prepare checks the plan and substitutes every file and string.
func prepare(p *abi.Plan, in Input, masked bool) ([]prepared, *Result, error) {
	if err := plan.Check(p, in.Plan); err != nil {
		return nil, nil, fmt.Errorf("check plan: %w", err)
	}
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
	mask := func(s string) string {
		for _, sec := range in.Plan.Secrets {
			if len(sec.Value) >= 4 {
				s = strings.ReplaceAll(s, sec.Value, Mask)
			}
		}
		return s
	}
	fill := func(s string) (string, error) {
		out, err := substitute(s, vals, raw)
		if err != nil && masked {
			return s, nil
		}
		return mask(out), err
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

// DryRun checks and substitutes the plan like Write and returns the same Result without
// touching the file system. Secrets are replaced by Mask in every file's Content; a root that
// is not set leaves its placeholder in place.
func DryRun(ctx context.Context, p *abi.Plan, in Input) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
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

// afterStaged, when set (by tests only), runs once every file is staged, before the renames.
var afterStaged func()

// staged is one temp file waiting to be renamed into place.
type staged struct {
	root       *os.Root
	tmp, final string
}

// tx records what Write created, so that a failure before the renames can undo it, and its
// staging directory in each root (stage.go), so that a killed Write's can be cleaned later.
type tx struct {
	staged  []staged
	dirs    []dirEntry // created directories, in creation order
	mkRoots []string   // root directories created
	stages  map[*os.Root]*stage
}

// stageOf returns r's staging directory, created on first use.
func (t *tx) stageOf(r *os.Root) (*stage, error) {
	if st, ok := t.stages[r]; ok {
		return st, nil
	}
	st, err := openStage(r)
	if err != nil {
		return nil, err
	}
	if t.stages == nil {
		t.stages = map[*os.Root]*stage{}
	}
	t.stages[r] = st
	return st, nil
}

// closeStages removes every staging directory (after the renames, or after a rollback).
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
		_ = s.root.Remove(s.tmp)
	}
	t.closeStages()
	for i := len(t.dirs) - 1; i >= 0; i-- {
		_ = t.dirs[i].root.Remove(t.dirs[i].path)
	}
	for i := len(t.mkRoots) - 1; i >= 0; i-- {
		_ = os.Remove(t.mkRoots[i])
	}
}

// Write checks p (plan.Check with in.Plan), substitutes its placeholders and writes its files
// under in.Roots, all or nothing: every file goes to a temp name in its target directory, is
// synced and given its mode, and only when every file (and the git exclude update) is staged are
// they renamed into place. If anything fails before the renames, every temp file and every
// directory Write created is removed and the roots are as they were. A rename failing midway
// (the file system failing under us) is reported; the files renamed so far stay.
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
func Write(ctx context.Context, p *abi.Plan, in Input) (res *Result, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	files, res, err := prepare(p, in, false)
	if err != nil {
		return nil, fmt.Errorf("materialize: %w", err)
	}
	writes := map[string]bool{}
	for _, pf := range files {
		writes[pf.f.Root] = true
	}
	if err := checkRoots(in.Roots, writes); err != nil {
		return nil, fmt.Errorf("materialize: %w", err)
	}
	t := &tx{}
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
		if name != abi.RootCheckout {
			if err := t.mkRoot(dir); err != nil {
				return nil, fmt.Errorf("create root %s: %w", name, err)
			}
		}
		r, err := os.OpenRoot(dir)
		if err != nil {
			return nil, fmt.Errorf("open root %s: %w", name, err)
		}
		roots[name] = r
		if name != abi.RootCheckout {
			if _, err := r.Lstat(OwnMarker); errors.Is(err, fs.ErrNotExist) {
				if err := t.stage(r, OwnMarker, []byte("made by loadout for one run's "+name+" files\n"), 0o600, 0o700); err != nil {
					return nil, fmt.Errorf("mark root %s: %w", name, err)
				}
			}
		}
		return r, nil
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
		if in.Roots.Checkout == "" {
			return nil, fmt.Errorf("materialize: gitExclude needs the checkout root")
		}
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
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if afterStaged != nil {
		afterStaged()
	}
	committed = true
	synced := map[*os.Root]map[string]bool{}
	for i, s := range t.staged {
		if err := s.root.Rename(s.tmp, s.final); err != nil {
			for _, rest := range t.staged[i:] {
				_ = rest.root.Remove(rest.tmp)
			}
			t.closeStages()
			return nil, fmt.Errorf("materialize: rename %s (after %d of %d files): %w", s.final, i, len(t.staged), err)
		}
		if synced[s.root] == nil {
			synced[s.root] = map[string]bool{}
		}
		synced[s.root][path.Dir(s.final)] = true
	}
	t.closeStages()
	for r, dirs := range synced {
		for d := range dirs {
			if f, err := r.Open(d); err == nil {
				_ = f.Sync()
				f.Close()
			}
		}
	}
	return res, nil
}

// mkRoot creates dir and its missing parents (mode 0700), recording each one it creates.
func (t *tx) mkRoot(dir string) error {
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
		if err := os.Mkdir(missing[i], 0o700); err != nil {
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
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	t.staged = append(t.staged, staged{root: r, tmp: tmp, final: p})
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return r.Chmod(tmp, mode)
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
