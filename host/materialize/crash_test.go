package materialize_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/materialize"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// crashStepEnv makes the test binary, run as a child, Write the second render (render(2)) into
// the roots under crashDirEnv and kill itself with SIGKILL right before the numbered step that
// changes the file system.
const (
	crashStepEnv = "LOADOUT_TEST_CRASH_STEP"
	crashDirEnv  = "LOADOUT_TEST_CRASH_DIR"
)

func init() {
	n, err := strconv.Atoi(os.Getenv(crashStepEnv))
	if err != nil {
		return
	}
	materialize.SetFaultHook(func(step int) {
		if step == n {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	})
	p, in := render(2)
	in.Roots = rootsUnder(os.Getenv(crashDirEnv))
	if _, err := write(context.Background(), p, in); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(0) // fewer steps than n: the Write finished
}

// rootsUnder is newRoots' layout under base.
func rootsUnder(base string) materialize.Roots {
	return materialize.Roots{Config: filepath.Join(base, "home", "config"), Run: filepath.Join(base, "run"), Checkout: filepath.Join(base, "repo")}
}

// render returns the plan and input of generation gen of a claude render: each generation has
// its own skill, checkout file and secret value, so that one render's files are told apart
// from the other's.
func render(gen int) (*abi.Plan, input) {
	in := checkInput("claude")
	p := claudePlan()
	if gen == 2 {
		sk := &in.Request.Skills[0]
		sk.Name = "other"
		sk.Resources = []abi.Resource{{Path: "notes-2.md", Content: "notes 2"}}
		in.Secrets[0].Value = "n3w-s3cr3t-key"
		p.Files[1].Path = ".cat-context/skill/other/notes-2.md"
		p.Files[1].Content = "notes 2"
		p.Prompt = foldedPromptOf(*sk)
	}
	return p, input{Plan: in}
}

// files lists every file and symlink under dir with its mode and the digest of its content;
// directories count through what they hold, so an empty one is not listed.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		var data []byte
		if d.Type().IsRegular() {
			data, err = os.ReadFile(p)
		} else {
			var target string
			target, err = os.Readlink(p)
			data = []byte(target)
		}
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		out = append(out, fmt.Sprintf("%s %s %s", rel, fi.Mode(), hex.EncodeToString(sum[:8])))
		return nil
	})
	require.NoError(t, err, "walk %s", dir)
	sort.Strings(out)
	return out
}

// TestCrashAtEveryStepLeavesOldOrNew kills a Write with SIGKILL before each of its steps that
// change the file system, one child process per step, into fresh roots and into roots holding
// an earlier render. After the next start's Sweep, the roots hold exactly the earlier render's
// files or exactly the new render's, never a mix, and no stage or copy of a secret.
func TestCrashAtEveryStepLeavesOldOrNew(t *testing.T) {
	for _, earlier := range []bool{false, true} {
		t.Run(map[bool]string{false: "fresh", true: "earlier"}[earlier], func(t *testing.T) {
			setup := func(base string) {
				r := rootsUnder(base)
				require.NoError(t, os.MkdirAll(filepath.Join(r.Checkout, ".git", "info"), 0o755), "create checkout")
				if earlier {
					p, in := render(1)
					in.Roots = r
					_, err := write(context.Background(), p, in)
					require.NoError(t, err, "the earlier render")
				}
			}
			old := t.TempDir()
			setup(old)
			want := t.TempDir()
			setup(want)
			p, in := render(2)
			in.Roots = rootsUnder(want)
			_, err := write(context.Background(), p, in)
			require.NoError(t, err, "the new render, uninterrupted")
			oldFiles, newFiles := files(t, old), files(t, want)
			require.NotEqual(t, oldFiles, newFiles, "the two renders must differ")

			sawOld, sawNew := 0, 0
			for step := 1; ; step++ {
				require.Less(t, step, 1000, "the Write never finished")
				base := t.TempDir()
				setup(base)
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), crashStepEnv+"="+strconv.Itoa(step), crashDirEnv+"="+base)
				out, err := cmd.CombinedOutput()
				if err == nil {
					require.Greater(t, step, 10, "a Write has more steps than that")
					assert.Equal(t, newFiles, files(t, base), "a Write that finished")
					break
				}
				ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
				require.True(t, ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL, "step %d: the child was not killed: %v\n%s", step, err, out)

				require.NoError(t, materialize.Sweep(rootsUnder(base)), "step %d: the next start's sweep", step)
				got := files(t, base)
				switch {
				case assert.ObjectsAreEqual(oldFiles, got):
					sawOld++
				case assert.ObjectsAreEqual(newFiles, got):
					sawNew++
				default:
					t.Fatalf("killed before step %d: the roots hold neither render:\n got %q\n old %q\n new %q", step, got, oldFiles, newFiles)
				}
				for _, f := range tree(t, base) {
					require.NotContains(t, f, ".loadout-stage-", "killed before step %d: a stage is left after the sweep", step)
				}
			}
			assert.Positive(t, sawOld, "no kill left the old render")
			assert.Positive(t, sawNew, "no kill left the new render (rolled forward)")
			t.Logf("%d kills left the old render, %d the new one", sawOld, sawNew)
		})
	}
}

// TestSweepRefusesPlantedRecords: a checkout is the user's repository, whose content anyone may
// have committed. A stage planted there, committed, whose record moves a file out of the
// context directory (into .git/hooks, over a source file), or replaces .git/info/exclude, is
// refused and moves nothing; a planted manifest listing a source file never makes a render
// remove it.
func TestSweepRefusesPlantedRecords(t *testing.T) {
	for _, target := range []string{".git/hooks/post-checkout", "main.go", ".loadout-stage-x/../main.go", ".git/info/exclude"} {
		t.Run(target, func(t *testing.T) {
			roots := newRoots(t)
			co := roots.Checkout
			require.NoError(t, os.MkdirAll(filepath.Join(co, ".git", "hooks"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(co, "main.go"), []byte("package main\n"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(co, ".git/info/exclude"), []byte("keep\n"), 0o644))
			stage := filepath.Join(co, ".loadout-stage-x")
			require.NoError(t, os.Mkdir(stage, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(stage, "f1"), []byte("#!/bin/sh\necho pwned\n"), 0o755))
			rec := fmt.Sprintf(`{"tx":"t","renames":[[".loadout-stage-x/f1",%q]],"removes":[]}`, target)
			require.NoError(t, os.WriteFile(filepath.Join(stage, "record"), []byte(rec), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(stage, "commit"), nil, 0o644))
			before := files(t, co)

			err := materialize.Sweep(roots)
			require.Error(t, err, "a sweep applying a record that moves a file to %s", target)
			assert.Contains(t, err.Error(), "commit record", "the error says why")
			assert.Equal(t, before, files(t, co), "the sweep changed the checkout")
		})
	}
	t.Run("manifest", func(t *testing.T) {
		roots := newRoots(t)
		co := roots.Checkout
		require.NoError(t, os.WriteFile(filepath.Join(co, "main.go"), []byte("package main\n"), 0o644))
		require.NoError(t, os.MkdirAll(filepath.Join(co, ".cat-context", "sub"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(co, ".cat-context", "sub", "main.go"), []byte("package sub\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(co, ".cat-context/.loadout"),
			[]byte("header\nmain.go\n.cat-context/../main.go\n.git/info/exclude\n.cat-context/sub/main.go\n"), 0o644))
		p, in := render(1)
		in.Roots = roots
		_, err := write(context.Background(), p, in)
		require.NoError(t, err, "Write")
		data, err := os.ReadFile(filepath.Join(co, "main.go"))
		require.NoError(t, err, "main.go is still there")
		assert.Equal(t, "package main\n", string(data))
		_, err = os.Stat(filepath.Join(co, ".git/info/exclude"))
		assert.NoError(t, err, "the exclude file is still there")
		_, err = os.Stat(filepath.Join(co, ".cat-context", "sub", "main.go"))
		assert.ErrorIs(t, err, fs.ErrNotExist, "a file the manifest lists under .cat-context is the render's to remove")
	})
}

// TestWriteReplacesTheEarlierRender: a Write into roots an earlier render wrote leaves exactly
// what a Write into fresh roots leaves, plus what the harness itself put there: the earlier
// render's files the new plan does not write are removed (their emptied directories too).
func TestWriteReplacesTheEarlierRender(t *testing.T) {
	roots := newRoots(t)
	p1, in1 := render(1)
	in1.Roots = roots
	_, err := write(context.Background(), p1, in1)
	require.NoError(t, err, "the earlier render")
	harnessFile := filepath.Join(roots.Run, "history.jsonl")
	require.NoError(t, os.WriteFile(harnessFile, []byte("{}\n"), 0o600), "a file the harness wrote")

	p2, in2 := render(2)
	in2.Roots = roots
	_, err = write(context.Background(), p2, in2)
	require.NoError(t, err, "the new render")
	require.NoError(t, os.Remove(harnessFile))

	fresh := newRoots(t)
	p2, in2 = render(2)
	in2.Roots = fresh
	_, err = write(context.Background(), p2, in2)
	require.NoError(t, err, "the new render into fresh roots")
	base := filepath.Dir(roots.Run)
	assert.Equal(t, files(t, filepath.Dir(fresh.Run)), files(t, base), "files after a re-render = files of one render")
	assert.NoDirExists(t, filepath.Join(roots.Checkout, ".cat-context", "skill", "demo"), "the earlier render's skill directory")
}

// TestWriteMakesTheCheckoutLast: with MakeCheckout, a missing checkout is created by the Write,
// and not at all by one that fails its checks.
func TestWriteMakesTheCheckoutLast(t *testing.T) {
	base := t.TempDir()
	roots := rootsUnder(base)
	roots.MakeCheckout = true
	bad := claudePlan()
	bad.Files = append(bad.Files, abi.File{Root: abi.RootConfig, Path: "../escape", Mode: "0644", Format: abi.FormatText})
	_, err := write(context.Background(), bad, input{Roots: roots, Plan: checkInput("claude")})
	require.Error(t, err, "a plan failing its check")
	assert.Empty(t, tree(t, base)[1:], "nothing is created for a refused plan")

	_, err = write(context.Background(), claudePlan(), input{Roots: roots, Plan: checkInput("claude")})
	require.NoError(t, err, "Write with MakeCheckout")
	assert.FileExists(t, filepath.Join(roots.Checkout, ".cat-context", "skill", "demo", "notes.md"), "a file in the made checkout")
}
