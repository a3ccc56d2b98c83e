package materialize

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/loadout-dev/loadout/sdk/abi"
)

// OwnMarker is the file loadout keeps at the top of every config and run root it writes to. A
// root that already exists may be used only when it is empty or holds this marker: then it is
// loadout's own, made for a run (an empty directory a platform created for it, or one an
// earlier render wrote). It is the root's manifest too (manifest.go): the files the last render
// wrote there, which the next one removes when it does not write them. Plan paths can never
// name it (hidden segments are refused), so no plugin can write or remove it.
const OwnMarker = ".loadout"

// RootError is a root loadout refuses to write to: Root is config, run or checkout, Dir the
// directory, Rule the broken rule (stable: disjoint, owner, mode, not_own, not_directory).
type RootError struct {
	Root, Dir, Rule, Msg string
}

func (e *RootError) Error() string {
	return fmt.Sprintf("root %s %q: %s: %s", e.Root, e.Dir, e.Rule, e.Msg)
}

// Root rules of a RootError.
const (
	RootRuleDisjoint = "disjoint"      // a root is, holds, or lies inside another root
	RootRuleOwner    = "owner"         // an existing config or run root is not the caller's
	RootRuleMode     = "mode"          // an existing config or run root is group- or other-writable
	RootRuleNotOwn   = "not_own"       // an existing config or run root is neither empty nor loadout's
	RootRuleNotDir   = "not_directory" // a root exists but is not a directory
)

// checkRoots enforces what makes a root safe to write a secret into, before anything is
// written: the config and run roots are disjoint from the checkout and from each other (after
// resolving symlinks), so a secret config never lands in the repository; and each config or
// run root the plan writes to, when it exists, is a directory owned by the caller, not group-
// or other-writable (no other user can swap a file between write and use). checkOwn completes
// it after the sweep.
func checkRoots(r Roots, writes map[string]bool) error {
	resolved := map[string]string{}
	for _, name := range []string{abi.RootConfig, abi.RootRun, abi.RootCheckout} {
		if d := r.dir(name); d != "" {
			resolved[name] = resolve(d)
		}
	}
	pairs := [][2]string{{abi.RootConfig, abi.RootRun}, {abi.RootConfig, abi.RootCheckout}, {abi.RootRun, abi.RootCheckout}}
	for _, p := range pairs {
		a, okA := resolved[p[0]]
		b, okB := resolved[p[1]]
		if okA && okB && (within(a, b) || within(b, a)) {
			return &RootError{Root: p[0], Dir: r.dir(p[0]), Rule: RootRuleDisjoint,
				Msg: fmt.Sprintf("overlaps the %s root %q: the config and run roots must be separate directories outside the checkout", p[1], r.dir(p[1]))}
		}
	}
	for _, name := range []string{abi.RootConfig, abi.RootRun} {
		d := r.dir(name)
		if d == "" || !writes[name] {
			continue
		}
		fi, err := os.Lstat(d)
		if errors.Is(err, fs.ErrNotExist) {
			continue // created by Write, mode 0700
		}
		if err != nil {
			return err
		}
		if err := privacyProblem(name, d, fi); err != nil {
			return err
		}
	}
	return nil
}

// checkOwn enforces, after Sweep, that each existing config or run root the render writes to is
// empty or loadout's own (OwnMarker), so that loadout never writes into a directory it did not
// make for a run.
func checkOwn(r Roots, writes map[string]bool) error {
	for _, name := range []string{abi.RootConfig, abi.RootRun} {
		d := r.dir(name)
		if d == "" || !writes[name] {
			continue
		}
		entries, err := os.ReadDir(d)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		// A stage another running Write holds is loadout's own too.
		entries = slices.DeleteFunc(entries, func(e fs.DirEntry) bool { return strings.HasPrefix(e.Name(), stagePrefix) })
		if len(entries) > 0 {
			if m, err := os.Lstat(filepath.Join(d, OwnMarker)); err != nil || !m.Mode().IsRegular() {
				return &RootError{Root: name, Dir: d, Rule: RootRuleNotOwn,
					Msg: fmt.Sprintf("is not empty and was not made by loadout (no %s): give an empty directory, or one loadout wrote before", OwnMarker)}
			}
		}
	}
	return nil
}

// resolve returns dir with every symlink of its longest existing prefix resolved.
func resolve(dir string) string {
	rest := ""
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.Join(real, rest)
		}
		if filepath.Dir(d) == d {
			return filepath.Clean(dir)
		}
		rest = filepath.Join(filepath.Base(d), rest)
	}
}

// within reports whether a is b or lies inside it.
func within(a, b string) bool {
	return a == b || strings.HasPrefix(a, strings.TrimSuffix(b, string(filepath.Separator))+string(filepath.Separator))
}

// privacyProblem returns why the existing config or run root d (fi its Lstat) is not safe to
// write a secret into: not a directory, not the caller's, or group- or other-writable.
func privacyProblem(name, d string, fi fs.FileInfo) *RootError {
	if !fi.IsDir() {
		return &RootError{Root: name, Dir: d, Rule: RootRuleNotDir, Msg: "is not a directory (a symlink is not followed)"}
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return &RootError{Root: name, Dir: d, Rule: RootRuleOwner, Msg: fmt.Sprintf("is owned by uid %d, not by this process's uid %d", st.Uid, os.Getuid())}
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return &RootError{Root: name, Dir: d, Rule: RootRuleMode, Msg: fmt.Sprintf("has mode %04o: another user could replace what loadout writes", fi.Mode().Perm())}
	}
	return nil
}
