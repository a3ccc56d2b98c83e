package server

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// orphanEnv makes the test binary, run as a child, start renders under Roots as the server
// does (makeRoots), put a staged copy of a secret in each, and die by SIGKILL mid-render.
const orphanEnv = "LOADOUT_TEST_ORPHAN_ROOTS"

const orphanSecret = "s3cr3t-run-token"

func init() {
	base := os.Getenv(orphanEnv)
	if base == "" {
		return
	}
	for i := range 3 {
		_, roots, _, err := makeRoots(base, "killed-"+strconv.Itoa(i))
		if err != nil {
			os.Exit(2)
		}
		stage := filepath.Join(roots.Run, ".loadout-stage-0123456789abcdef")
		if os.Mkdir(stage, 0o700) != nil || os.WriteFile(filepath.Join(stage, "f1"), []byte(orphanSecret), 0o600) != nil {
			os.Exit(2)
		}
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
}

// killedRenders runs the child of orphanEnv over base and returns the directories it left.
func killedRenders(t *testing.T, base string) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), orphanEnv+"="+base)
	err := cmd.Run()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	require.True(t, ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL, "the child was killed by SIGKILL: %v", err)
	var dirs []string
	for i := range 3 {
		d := filepath.Join(base, "killed-"+strconv.Itoa(i))
		require.DirExists(t, d, "the killed render's directory")
		dirs = append(dirs, d)
	}
	return dirs
}

// age sets the mtime of dir's pending file d back.
func age(t *testing.T, dir string, d time.Duration) {
	t.Helper()
	old := time.Now().Add(-d)
	require.NoError(t, os.Chtimes(filepath.Join(dir, pendingFile), old, old), "age %s", dir)
}

// TestSweepRemovesOrphanedRequests: the request directories of renders a killed server left
// (with staged secrets in them) are removed once old enough; a render in progress (its pending
// file locked), a young orphan and a finished render's directory are kept, the latter swept of
// a dead render's stage.
func TestSweepRemovesOrphanedRequests(t *testing.T) {
	base := t.TempDir()
	orphans := killedRenders(t, base)
	for _, d := range orphans[:2] {
		age(t, d, time.Hour)
	}
	young := orphans[2]
	busy, _, pending, err := makeRoots(base, "busy")
	require.NoError(t, err, "a render in progress")
	defer pending.Close()
	age(t, busy, time.Hour)
	done, roots, p2, err := makeRoots(base, "done")
	require.NoError(t, err, "a finished render")
	require.NoError(t, os.WriteFile(filepath.Join(roots.Config, "settings.json"), []byte("{}"), 0o600))
	require.NoError(t, finishRoots(done, p2), "finish")
	deadStage := filepath.Join(roots.Config, ".loadout-stage-00000000000000ff")
	require.NoError(t, os.Mkdir(deadStage, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(deadStage, "f1"), []byte(orphanSecret), 0o600))

	n, err := sweepRoots(base, SweepMinAge, time.Now())
	require.NoError(t, err, "sweep")
	assert.Equal(t, 2, n, "orphans removed")
	for _, d := range orphans[:2] {
		assert.NoDirExists(t, d, "an old orphan")
	}
	assert.DirExists(t, young, "an orphan younger than SweepMinAge")
	assert.DirExists(t, busy, "a render in progress, however old")
	assert.FileExists(t, filepath.Join(roots.Config, "settings.json"), "a finished render's file")
	assert.NoDirExists(t, deadStage, "a dead render's stage in a finished request directory")

	n, err = sweepRoots(base, SweepMinAge, time.Now().Add(2*SweepMinAge))
	require.NoError(t, err, "second sweep")
	assert.Equal(t, 1, n, "the young orphan, once old enough")
	assert.NoDirExists(t, young, "the young orphan")
	assert.DirExists(t, busy, "a render in progress")
}

// TestServeSweepsAtStart: a server started over Roots where a killed one left request
// directories removes them before long, without any request.
func TestServeSweepsAtStart(t *testing.T) {
	base := t.TempDir()
	orphans := killedRenders(t, base)
	for _, d := range orphans {
		age(t, d, time.Hour)
	}
	s, _ := newTestServer(t, Config{Roots: base}, fixedLoader(newFake("a")))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	defer func() {
		cancel()
		<-served
	}()
	require.Eventually(t, func() bool {
		entries, err := os.ReadDir(base)
		return err == nil && len(entries) == 0
	}, 30*time.Second, 20*time.Millisecond, "the orphaned request directories are removed at start")
}
