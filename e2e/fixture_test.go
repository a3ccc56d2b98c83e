package e2e

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fixturePlan is testdata/fixtures/<harness>/plan.json: the hand-written counterpart of a render
// result, following docs/FORMATS.md and docs/SPAWN-ENV.md.
type fixturePlan struct {
	Args       []string `json:"args"`
	Env        []envVar `json:"env"`
	Servers    []string `json:"servers"`
	SkillsRoot string   `json:"skillsRoot"`
}

// jsonText escapes s for the inside of a JSON string (also valid inside a TOML basic string for
// the paths the fixtures hold).
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// materializeFixture writes testdata/fixtures/<harness> into the scenario's roots, replacing the
// @NAME@ tokens, and returns what a render would have returned.
func materializeFixture(t *testing.T, sc *scenario, canary string, c clis) rendered {
	t.Helper()
	path, _ := lookupEnv(sc.RenderEnv, "PATH")
	repl := strings.NewReplacer(
		"@CANARY_OUT@", jsonText(sc.CanaryOut),
		"@CANARY@", jsonText(canary),
		"@EVERYTHING@", jsonText(c.Everything),
		"@PORT@", sc.Port,
		"@SRVCWD@", jsonText(sc.ServerCwd),
		"@PATH@", jsonText(path),
		"@HOME@", jsonText(sc.Render),
		"@RUN@", jsonText(sc.Run),
		"@CONFIG@", jsonText(sc.Config),
	)
	src := filepath.Join("testdata", "fixtures", sc.Harness)
	raw, err := os.ReadFile(filepath.Join(src, "plan.json"))
	require.NoError(t, err, "read %s/plan.json", src)
	var plan fixturePlan
	require.NoError(t, json.Unmarshal([]byte(repl.Replace(string(raw))), &plan), "decode %s/plan.json", src)

	roots := map[string]string{"config": sc.Config, "run": sc.Run, "checkout": sc.Checkout}
	files := filepath.Join(src, "files")
	err = filepath.WalkDir(files, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(files, p)
		if err != nil {
			return err
		}
		root, sub, _ := strings.Cut(filepath.ToSlash(rel), "/")
		dir, ok := roots[root]
		require.True(t, ok, "fixture file %s is under no root", rel)
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(sub))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return err
		}
		return os.WriteFile(dst, []byte(repl.Replace(string(body))), 0o600)
	})
	require.NoError(t, err, "write the %s fixture", sc.Harness)

	root, sub, _ := strings.Cut(plan.SkillsRoot, "/")
	skillsDst := filepath.Join(roots[root], filepath.FromSlash(sub))
	require.NoError(t, os.CopyFS(skillsDst, os.DirFS(filepath.Join("testdata", "fixtures", "skills"))), "copy the fixture skills to %s", skillsDst)
	return rendered{Args: plan.Args, Env: plan.Env, Servers: plan.Servers}
}

// TestFixtures loads hand-written configs in the shape docs/SPAWN-ENV.md recommends into each
// real CLI: it pins what the renderers must produce, independently of them, and proves that the
// recommended wrapper gives a stdio server exactly its spawn environment.
func TestFixtures(t *testing.T) {
	t.Parallel()
	c := findCLIs(t)
	canary := canaryBinary(t)
	for _, h := range []string{"claude", "codex", "pi", "gemini", "copilot"} {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			sc := newScenario(t, h, c)
			r := materializeFixture(t, sc, canary, c)
			checkHarness(t, sc, r, c)
		})
	}
}
