package testenv

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// recorder is a testing.TB that records what Missing asks of it instead of stopping.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Skipf(format string, args ...any)  { r.skipped = fmt.Sprintf(format, args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestMissingSkipsOrFails(t *testing.T) {
	t.Setenv(RequireAllEnv, "")
	r := &recorder{TB: t}
	Missing(r, "wat2wasm on PATH", InstallDeps)
	assert.Contains(t, r.skipped, "missing wat2wasm on PATH", "the skip names the missing piece")
	assert.Contains(t, r.skipped, "scripts/deps.sh", "the skip names the command that installs it")
	assert.Empty(t, r.failed, "without %s a missing piece skips", RequireAllEnv)

	t.Setenv(RequireAllEnv, "1")
	r = &recorder{TB: t}
	Missing(r, "the agent CLIs", InstallCLIs)
	assert.Contains(t, r.failed, "missing the agent CLIs", "the failure names the missing piece")
	assert.Contains(t, r.failed, "scripts/clis.sh", "the failure names the command that installs it")
	assert.Empty(t, r.skipped, "under %s=1 a missing piece fails", RequireAllEnv)
}

func TestCommandFindsWhatIsThere(t *testing.T) {
	r := &recorder{TB: t}
	assert.NotEmpty(t, Command(r, "go", InstallDeps), "go is on PATH while go test runs")
	assert.Empty(t, r.skipped+r.failed, "nothing is missing")
	Command(r, "loadout-no-such-program", InstallBuild)
	assert.Contains(t, r.skipped+r.failed, "loadout-no-such-program on PATH")
}
