package materialize_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/materialize"
	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
)

const (
	secretKey  = "{{loadout.secret.1}}"
	secretAuth = "{{loadout.secret.2}}"
	blobOne    = "{{loadout.blob.1}}"
	keyValue   = "s3cr3t-key"
	authValue  = "tok\"en\\with\nescapes 'é' \u2028 {{loadout.root.run}}"
	blobValue  = "Use the tools. Not a placeholder: {{loadout.secret.1}}\n"
	notesValue = "- [ ] tests\n"
)

// checkInput is an ambient-auth run (the harness's own config home, which loadout does not
// write): Claude Code's skill is folded, its instructions into the prompt and its resource into
// the checkout's context directory.
func checkInput(harness string) plan.Input {
	return plan.Input{
		Manifest: abi.Manifest{Name: "render." + harness, ABIVersion: abi.Version, Harness: harness,
			Roots: []string{abi.RootConfig, abi.RootRun, abi.RootCheckout}},
		Profile: profiles[harness],
		Request: abi.Request{ABIVersion: abi.Version, Harness: harness, Run: abi.Run{AmbientAuth: true}, Servers: []abi.Server{
			{ID: "alpha", Transport: abi.TransportStdio, Command: "/usr/bin/alpha", Args: []string{"serve"},
				Env: []abi.Pair{{Name: "API_KEY", Value: secretKey, Secret: true}, {Name: "MODE", Value: "test"}}, Enabled: true},
			{ID: "beta", Transport: abi.TransportHTTP, URL: "https://mcp.example.com/mcp",
				Headers: []abi.Pair{{Name: "Authorization", Value: "Bearer " + secretAuth, Secret: true}}, Enabled: true},
		}, Skills: []abi.Skill{{Name: "demo", Description: "d", Instructions: blobOne,
			Resources: []abi.Resource{{Path: "notes.md", Content: notesValue}}}}},
		Secrets: []plan.Secret{
			{Placeholder: secretKey, Value: keyValue, Server: "alpha", Field: plan.FieldEnv, Key: "API_KEY"},
			{Placeholder: secretAuth, Value: authValue, Server: "beta", Field: plan.FieldHeaders, Key: "Authorization"},
		},
		Blobs: []plan.Blob{{Placeholder: blobOne, Value: blobValue}},
	}
}

const claudeConfig = `{"mcpServers":{` +
	`"alpha":{"type":"stdio","command":"/usr/bin/env","args":["-i","-S","API_KEY=${LOADOUT_SPAWN_DOLLAR:-$}{LOADOUT_SPAWN_1} MODE=${LOADOUT_SPAWN_DOLLAR:-$}{LOADOUT_SPAWN_2}",` +
	`"/usr/bin/alpha","serve"],"env":{"LOADOUT_SPAWN_1":"{{loadout.secret.1}}","LOADOUT_SPAWN_2":"test"}},` +
	`"beta":{"type":"http","url":"https://mcp.example.com/mcp","headers":{"Authorization":"Bearer {{loadout.secret.2}}"}}}}`

func claudePlan() *abi.Plan {
	return &abi.Plan{
		Files: []abi.File{
			{Root: abi.RootRun, Path: "mcp-servers.json", Mode: "0600", Format: abi.FormatJSON, Content: claudeConfig, Secret: true},
			{Root: abi.RootCheckout, Path: ".cat-context/skill/demo/notes.md", Mode: "0644", Format: abi.FormatText, Content: notesValue},
		},
		Args:       []string{"--mcp-config", "{{loadout.root.run}}/mcp-servers.json", "--strict-mcp-config"},
		Env:        []abi.Pair{},
		Prompt:     foldedPrompt(blobOne),
		GitExclude: []string{".cat-context/"},
	}
}

// foldedPrompt is the prompt of claudePlan, the skill's instructions being instructions (a
// placeholder or text without one): the servers and their tools, then the folded skill.
func foldedPrompt(instructions string) string {
	return foldedPromptOf(abi.Skill{Name: "demo", Description: "d", Instructions: instructions,
		Resources: []abi.Resource{{Path: "notes.md", Content: notesValue}}})
}

// foldedPromptOf is the prompt of claudePlan with sk as its one folded skill.
func foldedPromptOf(sk abi.Skill) string {
	skills, _, err := format.PrepareSkills([]abi.Skill{sk})
	if err != nil {
		panic(err)
	}
	_, folded, _ := format.FoldSkills(skills)
	return "## MCP servers\n\nThese MCP servers are configured for this run, each with the tools you may use:\n" +
		"- alpha: all tools\n- beta: all tools\n\n" + folded
}

// isolatedInput is checkInput for an isolated run, whose config home loadout writes, and
// isolatedPlan its Claude Code plan: the skill installed under the config root.
func isolatedInput() plan.Input {
	in := checkInput("claude")
	in.Request.Run.AmbientAuth = false
	return in
}

func isolatedPlan() *abi.Plan {
	p := claudePlan()
	p.Files = []abi.File{p.Files[0],
		{Root: abi.RootConfig, Path: "skills/demo/SKILL.md", Mode: "0644", Format: abi.FormatMarkdown,
			Content: "---\nname: demo\ndescription: d\n---\n" + blobOne},
		{Root: abi.RootConfig, Path: "skills/demo/notes.md", Mode: "0644", Format: abi.FormatText, Content: notesValue}}
	p.Env = []abi.Pair{{Name: "CLAUDE_CONFIG_DIR", Value: "{{loadout.root.config}}"}}
	p.Prompt, p.GitExclude = "", nil
	return p
}

// newRoots returns roots in a fresh directory: a checkout with a .git directory, and config and
// run directories that do not exist yet.
func newRoots(t *testing.T) materialize.Roots {
	t.Helper()
	base := t.TempDir()
	r := materialize.Roots{
		Config:   filepath.Join(base, "home", "config"),
		Run:      filepath.Join(base, "run"),
		Checkout: filepath.Join(base, "repo"),
	}
	require.NoError(t, os.MkdirAll(filepath.Join(r.Checkout, ".git", "info"), 0o755), "create checkout")
	return r
}

// tree lists every path under dir with its type, for before/after comparisons.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel+" "+d.Type().String())
		return nil
	})
	require.NoError(t, err, "walk %s", dir)
	sort.Strings(out)
	return out
}

func mode(t *testing.T, p string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(p)
	require.NoError(t, err, "stat %s", p)
	return fi.Mode().Perm()
}

func TestWriteClaudePlan(t *testing.T) {
	roots := newRoots(t)
	in := input{Roots: roots, Plan: checkInput("claude")}
	res, err := write(context.Background(), claudePlan(), in)
	require.NoError(t, err, "Write(claude plan)")

	cfg := filepath.Join(roots.Run, "mcp-servers.json")
	assert.Equal(t, fs.FileMode(0o600), mode(t, cfg), "mode of %s", cfg)
	assert.Equal(t, fs.FileMode(0o644), mode(t, filepath.Join(roots.Checkout, ".cat-context/skill/demo/notes.md")), "mode of the skill's resource")
	assert.Equal(t, fs.FileMode(0o700), mode(t, roots.Run), "mode of the created run root")
	assert.Equal(t, fs.FileMode(0o755), mode(t, filepath.Join(roots.Checkout, ".cat-context/skill")), "mode of a directory created under the checkout")

	data, err := os.ReadFile(cfg)
	require.NoError(t, err, "read %s", cfg)
	var parsed struct {
		MCPServers map[string]struct {
			Env     map[string]string `json:"env"`
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	}
	require.NoError(t, json.Unmarshal(data, &parsed), "parse written %s: %s", cfg, data)
	assert.Equal(t, keyValue, parsed.MCPServers["alpha"].Env["LOADOUT_SPAWN_1"], "alpha env alias of API_KEY read back")
	assert.Equal(t, "Bearer "+authValue, parsed.MCPServers["beta"].Headers["Authorization"], "beta Authorization read back")

	notes, err := os.ReadFile(filepath.Join(roots.Checkout, ".cat-context/skill/demo/notes.md"))
	require.NoError(t, err, "read notes.md")
	assert.Equal(t, notesValue, string(notes), "the skill's resource")

	assert.Equal(t, []string{"--mcp-config", roots.Run + "/mcp-servers.json", "--strict-mcp-config"}, res.Args, "Result.Args")
	assert.Equal(t, []abi.Pair{}, res.Env, "Result.Env")
	assert.Equal(t, strings.Replace(foldedPrompt(blobOne), blobOne, blobValue, 1), res.Prompt, "Result.Prompt: the blob filled in (and not rescanned)")
	require.Len(t, res.Files, 2, "Result.Files")
	assert.Equal(t, cfg, res.Files[0].Written, "Result.Files[0].Written")
	assert.Equal(t, len(data), res.Files[0].Bytes, "Result.Files[0].Bytes")
	assert.Len(t, res.Files[0].SHA256, 64, "Result.Files[0].SHA256")
	assert.Equal(t, []string{".cat-context/"}, res.GitExclude, "Result.GitExclude on the first write")

	out, err := json.Marshal(res)
	require.NoError(t, err, "marshal Result")
	assert.NotContains(t, string(out), keyValue, "Result JSON holds a secret value")

	// A second write is idempotent on the exclude file.
	res2, err := write(context.Background(), claudePlan(), in)
	require.NoError(t, err, "second Write(claude plan)")
	assert.Empty(t, res2.GitExclude, "Result.GitExclude on the second write")
	exclude, err := os.ReadFile(filepath.Join(roots.Checkout, ".git/info/exclude"))
	require.NoError(t, err, "read exclude")
	assert.Equal(t, ".cat-context/\n", string(exclude), ".git/info/exclude after two writes")
	assert.Equal(t, tree(t, filepath.Dir(roots.Run)), tree(t, filepath.Dir(roots.Run)), "tree is stable")
	for _, e := range tree(t, filepath.Dir(roots.Run)) {
		assert.NotContains(t, e, ".loadout-", "temp file left behind: %s", e)
	}
}

func TestWriteGitExcludeAppends(t *testing.T) {
	roots := newRoots(t)
	excl := filepath.Join(roots.Checkout, ".git/info/exclude")
	require.NoError(t, os.WriteFile(excl, []byte("# local\n*.log"), 0o644), "seed exclude")
	_, err := write(context.Background(), claudePlan(), input{Roots: roots, Plan: checkInput("claude")})
	require.NoError(t, err, "Write(claude plan)")
	got, err := os.ReadFile(excl)
	require.NoError(t, err, "read exclude")
	assert.Equal(t, "# local\n*.log\n.cat-context/\n", string(got), "exclude keeps its lines and gains the entry once")
}

func TestWriteGitFileIsRefusedPolitely(t *testing.T) {
	roots := newRoots(t)
	require.NoError(t, os.RemoveAll(filepath.Join(roots.Checkout, ".git")), "remove .git")
	require.NoError(t, os.WriteFile(filepath.Join(roots.Checkout, ".git"), []byte("gitdir: /elsewhere/.git/worktrees/x\n"), 0o644), "write .git file")
	res, err := write(context.Background(), claudePlan(), input{Roots: roots, Plan: checkInput("claude")})
	require.NoError(t, err, "Write(claude plan) into a linked worktree")
	require.NotEmpty(t, res.Warnings, "Result.Warnings for a .git file")
	assert.Equal(t, materialize.WarnGitExcludeUnsupported, res.Warnings[len(res.Warnings)-1].Code, "last warning code")
	assert.Empty(t, res.GitExclude, "Result.GitExclude for a .git file")
}

func TestWriteAllOrNothing(t *testing.T) {
	roots := newRoots(t)
	// A directory stands where the skill's resource must go.
	require.NoError(t, os.MkdirAll(filepath.Join(roots.Checkout, ".cat-context/skill/demo/notes.md"), 0o755), "create blocking directory")
	base := filepath.Dir(roots.Run)
	before := tree(t, base)
	_, err := write(context.Background(), claudePlan(), input{Roots: roots, Plan: checkInput("claude")})
	require.Error(t, err, "Write(claude plan) with a directory where a file goes = nil error")
	t.Logf("blocked: %v", err)
	assert.Equal(t, before, tree(t, base), "the roots changed although Write failed")
	_, err = os.Lstat(roots.Run)
	assert.True(t, errors.Is(err, fs.ErrNotExist), "run root created by the failed Write is still there (lstat err %v)", err)
}

func TestWriteNotFollowingSymlinksOut(t *testing.T) {
	roots := newRoots(t)
	outside := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(roots.Checkout, ".cat-context")), "plant symlink")
	base := filepath.Dir(roots.Run)
	before := tree(t, base)
	_, err := write(context.Background(), claudePlan(), input{Roots: roots, Plan: checkInput("claude")})
	require.Error(t, err, "Write(plan) through a symlink leaving the checkout = nil error")
	t.Logf("symlink: %v", err)
	assert.Empty(t, tree(t, outside)[1:], "files written outside the checkout through a symlink")
	assert.Equal(t, before, tree(t, base), "the roots changed although Write failed")
}

func TestWriteRejectsPlanFailingCheck(t *testing.T) {
	roots := newRoots(t)
	p := claudePlan()
	p.Files = append(p.Files, abi.File{Root: abi.RootConfig, Path: "../escape", Mode: "0644", Format: abi.FormatText})
	_, err := write(context.Background(), p, input{Roots: roots, Plan: checkInput("claude")})
	var v *plan.Violation
	require.True(t, errors.As(err, &v), "Write(plan with ../escape) = %v, want a *plan.Violation", err)
	assert.Equal(t, plan.RulePath, v.Rule, "violation rule")
	_, err = os.Lstat(roots.Run)
	assert.True(t, errors.Is(err, fs.ErrNotExist), "Write created the run root for a rejected plan")
}

func TestWriteRejectsBadRoots(t *testing.T) {
	tests := []struct {
		name  string
		roots materialize.Roots
	}{
		{"relative", materialize.Roots{Config: "config", Run: "/tmp/run", Checkout: "/tmp/repo"}},
		{"unclean", materialize.Roots{Config: "/tmp/a/../config", Run: "/tmp/run", Checkout: "/tmp/repo"}},
		{"control", materialize.Roots{Config: "/tmp/con\nfig", Run: "/tmp/run", Checkout: "/tmp/repo"}},
		{"missing", materialize.Roots{Run: "/tmp/run", Checkout: "/tmp/repo"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := write(context.Background(), claudePlan(), input{Roots: tc.roots, Plan: checkInput("claude")})
			require.Error(t, err, "Write(plan, roots %+v) = nil error", tc.roots)
			t.Logf("%v", err)
		})
	}
}

func TestWriteTOMLEscaping(t *testing.T) {
	roots := newRoots(t)
	in := checkInput("acme")
	p := &abi.Plan{Files: []abi.File{{Root: abi.RootConfig, Path: "agent.toml", Mode: "0600", Format: abi.FormatTOML, Secret: true,
		Content: acmeConfig(`"`)}}}
	_, err := write(context.Background(), p, input{Roots: roots, Plan: in})
	require.NoError(t, err, "Write(toml plan)")
	var got struct {
		Servers map[string]struct {
			Env     map[string]string
			Headers map[string]string
		}
	}
	_, err = toml.DecodeFile(filepath.Join(roots.Config, "agent.toml"), &got)
	require.NoError(t, err, "decode written toml")
	assert.Equal(t, "Bearer "+authValue, got.Servers["beta"].Headers["Authorization"], "secret read back from toml")
	assert.Equal(t, keyValue, got.Servers["alpha"].Env["API_KEY"], "secret read back from toml")
}

func TestWriteRefusesValueBreakingOut(t *testing.T) {
	tests := []struct {
		name, format, content string
	}{
		{"toml literal string", abi.FormatTOML, "auth = 'Bearer " + secretAuth + "'\n"},
		{"toml multi-line literal", abi.FormatTOML, "auth = '''" + secretAuth + "'''\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			roots := newRoots(t)
			p := &abi.Plan{Files: []abi.File{{Root: abi.RootConfig, Path: "agent.toml", Mode: "0600", Format: tc.format, Secret: true, Content: tc.content}}}
			_, err := write(context.Background(), p, input{Roots: roots, Plan: checkInput("acme")})
			require.Error(t, err, "Write(%q with a secret that cannot round-trip) = nil error", tc.content)
			t.Logf("%v", err)
			_, err = os.Lstat(filepath.Join(roots.Config, "agent.toml"))
			assert.True(t, errors.Is(err, fs.ErrNotExist), "file written although its secret did not round-trip")
		})
	}
}

func TestWriteHonoursCancellation(t *testing.T) {
	roots := newRoots(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := write(ctx, claudePlan(), input{Roots: roots, Plan: checkInput("claude")})
	require.ErrorIs(t, err, context.Canceled, "Write(cancelled ctx)")
}

func TestDryRun(t *testing.T) {
	roots := newRoots(t)
	base := filepath.Dir(roots.Run)
	before := tree(t, base)
	res, err := dryRun(context.Background(), claudePlan(), input{Roots: roots, Plan: checkInput("claude")})
	require.NoError(t, err, "DryRun(claude plan)")
	assert.Equal(t, before, tree(t, base), "DryRun touched the file system")
	require.Len(t, res.Files, 2, "DryRun Files")
	assert.Contains(t, res.Files[0].Content, "[REDACTED]", "DryRun masks the secret in the config")
	assert.Empty(t, res.Files[0].Written, "DryRun Files[0].Written")
	out, err := json.Marshal(res)
	require.NoError(t, err, "marshal DryRun result")
	assert.NotContains(t, string(out), keyValue, "DryRun result holds a secret value")
	assert.NotContains(t, string(out), "tok\\\"en", "DryRun result holds a secret value (escaped)")
	assert.Equal(t, []string{".cat-context/"}, res.GitExclude, "DryRun GitExclude")

	// Without roots the placeholders stay.
	res, err = dryRun(context.Background(), claudePlan(), input{Plan: checkInput("claude")})
	require.NoError(t, err, "DryRun(claude plan) without roots")
	assert.True(t, strings.Contains(res.Args[1], "{{loadout.root.run}}"), "DryRun without roots Args[1] = %q, want the placeholder", res.Args[1])
}

// TestWriteNotFollowingSymlinksInside: a symlink that stays inside the checkout is refused too
// (.cat-context -> src would overwrite tracked files; -> .git would write into the repository's
// internals), and nothing is written.
func TestWriteNotFollowingSymlinksInside(t *testing.T) {
	for _, tc := range []struct{ name, link, target string }{
		{"context dir to a source dir", ".cat-context", "src"},
		{"context dir to .git", ".cat-context", ".git"},
		{"exclude file to a tracked file", ".git/info", "../src"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			roots := newRoots(t)
			src := filepath.Join(roots.Checkout, "src")
			require.NoError(t, os.MkdirAll(src, 0o755))
			tracked := filepath.Join(src, "exclude")
			require.NoError(t, os.WriteFile(tracked, []byte("tracked\n"), 0o644))
			require.NoError(t, os.MkdirAll(filepath.Join(roots.Checkout, "src", "skill", "demo"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(roots.Checkout, "src", "skill", "demo", "notes.md"), []byte("tracked notes\n"), 0o644))
			link := filepath.Join(roots.Checkout, filepath.FromSlash(tc.link))
			require.NoError(t, os.RemoveAll(link))
			require.NoError(t, os.MkdirAll(filepath.Dir(link), 0o755))
			require.NoError(t, os.Symlink(tc.target, link), "plant symlink")
			before := tree(t, roots.Checkout)
			_, err := write(context.Background(), claudePlan(), input{Roots: roots, Plan: checkInput("claude")})
			require.Error(t, err, "Write(plan) through %s -> %s = nil error", tc.link, tc.target)
			assert.Contains(t, err.Error(), "symlink", "Write error names the symlink")
			assert.Equal(t, before, tree(t, roots.Checkout), "the checkout changed although Write failed")
			got, err := os.ReadFile(tracked)
			require.NoError(t, err)
			assert.Equal(t, "tracked\n", string(got), "tracked file content")
		})
	}
}

// TestWriteRefusesUnsafeRoots: the config and run roots must be disjoint from the checkout and
// from each other, and an existing one must be the caller's, not group- or other-writable, and
// empty or loadout's own; anything else is refused with its rule and nothing is written.
func TestWriteRefusesUnsafeRoots(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, r *materialize.Roots)
		rule  string
	}{
		{"run root is the checkout", func(t *testing.T, r *materialize.Roots) { r.Run = r.Checkout }, materialize.RootRuleDisjoint},
		{"run root inside the checkout", func(t *testing.T, r *materialize.Roots) { r.Run = filepath.Join(r.Checkout, "tmp") }, materialize.RootRuleDisjoint},
		{"config root holds the checkout", func(t *testing.T, r *materialize.Roots) { r.Config = filepath.Dir(r.Checkout) }, materialize.RootRuleDisjoint},
		{"config root is the run root", func(t *testing.T, r *materialize.Roots) { r.Config = r.Run }, materialize.RootRuleDisjoint},
		{"run root reaches the checkout through a symlink", func(t *testing.T, r *materialize.Roots) {
			link := filepath.Join(t.TempDir(), "link")
			require.NoError(t, os.Symlink(r.Checkout, link))
			r.Run = filepath.Join(link, "run")
		}, materialize.RootRuleDisjoint},
		{"run root writable by others", func(t *testing.T, r *materialize.Roots) {
			require.NoError(t, os.Mkdir(r.Run, 0o700))
			require.NoError(t, os.Chmod(r.Run, 0o777))
		}, materialize.RootRuleMode},
		{"config root not empty and not loadout's", func(t *testing.T, r *materialize.Roots) {
			require.NoError(t, os.MkdirAll(r.Config, 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(r.Config, "settings.json"), []byte("{}"), 0o600))
		}, materialize.RootRuleNotOwn},
		{"run root is a symlink", func(t *testing.T, r *materialize.Roots) {
			require.NoError(t, os.Symlink(t.TempDir(), r.Run))
		}, materialize.RootRuleNotDir},
	}
	if os.Getuid() == 0 {
		tests = append(tests, struct {
			name  string
			setup func(t *testing.T, r *materialize.Roots)
			rule  string
		}{"run root owned by another user", func(t *testing.T, r *materialize.Roots) {
			require.NoError(t, os.Mkdir(r.Run, 0o700))
			require.NoError(t, os.Chown(r.Run, 65534, 65534))
		}, materialize.RootRuleOwner})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			roots := newRoots(t)
			tc.setup(t, &roots)
			before := tree(t, filepath.Dir(roots.Checkout))
			_, err := write(context.Background(), isolatedPlan(), input{Roots: roots, Plan: isolatedInput()})
			var re *materialize.RootError
			require.True(t, errors.As(err, &re), "Write with %s: error %v, want a *RootError", tc.name, err)
			assert.Equal(t, tc.rule, re.Rule, "Write with %s: rule; error: %v", tc.name, err)
			assert.Equal(t, before, tree(t, filepath.Dir(roots.Checkout)), "Write with %s changed the tree", tc.name)
		})
	}
}

// TestWriteReusesItsOwnRoots: a second render into roots loadout wrote before is allowed (they
// carry its marker), and so is an empty directory a platform made for the run.
func TestWriteReusesItsOwnRoots(t *testing.T) {
	roots := newRoots(t)
	require.NoError(t, os.Mkdir(roots.Run, 0o700), "an empty run root made by the platform")
	for i := 0; i < 2; i++ {
		_, err := write(context.Background(), isolatedPlan(), input{Roots: roots, Plan: isolatedInput()})
		require.NoError(t, err, "Write #%d", i+1)
	}
	assert.Equal(t, fs.FileMode(0o700), mode(t, roots.Config), "mode of the created config root")
	assert.Equal(t, fs.FileMode(0o700), mode(t, filepath.Join(roots.Config, "skills")), "mode of a directory created under config")
	skill, err := os.ReadFile(filepath.Join(roots.Config, "skills/demo/SKILL.md"))
	require.NoError(t, err, "read SKILL.md")
	assert.Equal(t, "---\nname: demo\ndescription: d\n---\n"+blobValue, string(skill), "SKILL.md with its blob filled in (and the blob not rescanned)")
	for _, d := range []string{roots.Config, roots.Run} {
		fi, err := os.Lstat(filepath.Join(d, materialize.OwnMarker))
		require.NoError(t, err, "marker in %s", d)
		assert.True(t, fi.Mode().IsRegular(), "marker is a regular file")
	}
}
