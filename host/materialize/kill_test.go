package materialize_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/materialize"
)

// killedWriteEnv names the roots file of a Write the test binary runs in a child process and
// kills itself in, right after staging every file.
const killedWriteEnv = "LOADOUT_TEST_KILLED_WRITE"

func init() {
	dir := os.Getenv(killedWriteEnv)
	if dir == "" {
		return
	}
	roots := materialize.Roots{Config: filepath.Join(dir, "home", "config"), Run: filepath.Join(dir, "run"), Checkout: filepath.Join(dir, "repo")}
	materialize.SetAfterStaged(func() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL) })
	_, _ = write(context.Background(), claudePlan(), input{Roots: roots, Plan: checkInput("claude")})
	os.Exit(3) // not reached: the hook kills the process
}

// TestKilledWriteLeavesNothingBehind kills a Write with kill -9 once its files are staged (a
// 0600 copy of the secret config among them), then runs a second Write into the same roots: it
// must clean the dead render's stage and directories, so the roots hold exactly what one
// render writes and no temp file, stage or secret copy.
func TestKilledWriteLeavesNothingBehind(t *testing.T) {
	roots := newRoots(t)
	base := filepath.Dir(roots.Run)
	require.Equal(t, filepath.Join(base, "repo"), roots.Checkout, "newRoots layout")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), killedWriteEnv+"="+base)
	err := cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "the child Write")
	ws, ok := ee.Sys().(syscall.WaitStatus)
	require.True(t, ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL, "the child was killed by SIGKILL: %v", err)
	var debris []string
	for _, p := range tree(t, base) {
		if strings.Contains(p, ".loadout-stage-") {
			debris = append(debris, p)
		}
	}
	require.NotEmpty(t, debris, "the killed Write left its stage behind (the test must kill it mid-way)")

	_, err = write(context.Background(), claudePlan(), input{Roots: roots, Plan: checkInput("claude")})
	require.NoError(t, err, "the second Write")
	clean := newRoots(t)
	_, err = write(context.Background(), claudePlan(), input{Roots: clean, Plan: checkInput("claude")})
	require.NoError(t, err, "a Write into fresh roots")
	assert.Equal(t, tree(t, filepath.Dir(clean.Run)), tree(t, base), "roots after a killed and a second Write = roots after one Write")
}
