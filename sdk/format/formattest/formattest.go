// Package formattest holds the test helpers the renderer plugins share: a deterministic txtar
// serialization of a plan for golden files, the golden comparison itself, and the plan
// properties every renderer must keep (secret placement, modes, roots, parseable files).
//
// It is for tests only: unlike sdk/format it reads configs back (sdk/profile/readback, the
// host's own reader, with its JSON and TOML parsers), and depends on go.yaml.in/yaml/v3 and on
// testify. Its functions are safe for concurrent use.
package formattest

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/loadout-dev/loadout/sdk"
	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
	"github.com/loadout-dev/loadout/sdk/profile"
	"github.com/loadout-dev/loadout/sdk/profile/profileyaml"
	"github.com/loadout-dev/loadout/sdk/profile/readback"
	"github.com/loadout-dev/loadout/sdk/sdktest"
)

// SecretPrefix starts every secret placeholder.
const SecretPrefix = "{{loadout.secret."

// AnyHoldsSecret reports whether one of strs holds a secret placeholder's prefix, each string
// on its own: a prefix split across two strings is none (a fuzzer finds such pairs).
func AnyHoldsSecret(strs ...string) bool {
	for _, s := range strs {
		if strings.Contains(s, SecretPrefix) {
			return true
		}
	}
	return false
}

// Archive serializes p as a txtar archive, deterministically: sections "args", "env", "prompt",
// "gitexclude" and "warnings" (list entries one per line, Go-quoted so that any byte survives),
// then one section per file in plan order, named "file <root>/<path>" with its mode, format and
// secret flag, holding the content byte for byte (a content without a final newline gets one,
// and the header says "eol=none").
func Archive(p abi.Plan) []byte {
	var b bytes.Buffer
	section := func(name string) { fmt.Fprintf(&b, "-- %s --\n", name) }
	section("args")
	for _, a := range p.Args {
		b.WriteString(strconv.Quote(a) + "\n")
	}
	section("env")
	for _, e := range p.Env {
		b.WriteString(strconv.Quote(e.Name) + "=" + strconv.Quote(e.Value))
		if e.Secret {
			b.WriteString(" secret")
		}
		b.WriteString("\n")
	}
	section("prompt")
	b.WriteString(p.Prompt)
	if p.Prompt != "" && !strings.HasSuffix(p.Prompt, "\n") {
		b.WriteString("\n")
	}
	section("gitexclude")
	for _, g := range p.GitExclude {
		b.WriteString(strconv.Quote(g) + "\n")
	}
	section("warnings")
	for _, w := range p.Warnings {
		fmt.Fprintf(&b, "%s server=%q skill=%q %s\n", w.Code, w.Server, w.Skill, strconv.Quote(w.Message))
	}
	for _, f := range p.Files {
		eol := ""
		if f.Content != "" && !strings.HasSuffix(f.Content, "\n") {
			eol = " eol=none"
		}
		fmt.Fprintf(&b, "-- file %s/%s mode=%s format=%s secret=%t%s --\n", f.Root, f.Path, f.Mode, f.Format, f.Secret, eol)
		b.WriteString(f.Content)
		if eol != "" {
			b.WriteString("\n")
		}
	}
	return b.Bytes()
}

// CheckGoldens runs one subtest per name: it renders the request <dir>/requests/<name>.json
// with render (sdktest), checks the plan (CheckPlan, then CheckServers through prof, then each
// of checks), renders it again for the same bytes, and compares it with the golden
// <dir>/<name>.txtar (rewritten when update is set).
func CheckGoldens(t *testing.T, dir string, names []string, m abi.Manifest, render sdk.RenderFunc, prof *profile.Profile, update bool, checks ...func(*testing.T, abi.Plan)) {
	t.Helper()
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			req := sdktest.LoadRequest(t, filepath.Join(dir, "requests", name+".json"))
			plan := sdktest.Render(t, m, render, req)
			CheckPlan(t, m, plan)
			CheckServers(t, prof, req, plan)
			for _, check := range checks {
				check(t, plan)
			}
			got := Archive(plan)
			assert.Equal(t, string(got), string(Archive(sdktest.Render(t, m, render, req))), "render(%s) twice must give identical bytes", name)
			Golden(t, filepath.Join(dir, name+".txtar"), got, update)
		})
	}
}

// Golden compares got with the golden file at name, or rewrites the file when update is set.
func Golden(tb testing.TB, name string, got []byte, update bool) {
	tb.Helper()
	if update {
		require.NoError(tb, os.MkdirAll(filepath.Dir(name), 0o755), "create the golden directory of %s", name)
		require.NoError(tb, os.WriteFile(name, got, 0o644), "write golden %s", name)
		return
	}
	want, err := os.ReadFile(name)
	require.NoError(tb, err, "read golden %s (run the test with -update to create it)", name)
	assert.Equal(tb, string(want), string(got), "rendered plan differs from golden %s (run with -update after checking the diff)", name)
}

// CheckPlan asserts the properties every renderer's plan must have, whatever its format:
//   - every file is under a root the manifest declares, at a clean, local, slash-separated path,
//     and no two files share a root and path;
//   - a file holding a secret placeholder is Secret, and every Secret file has mode 0600 and is
//     not under the checkout root;
//   - no secret placeholder appears in args, env, the prompt or gitExclude;
//   - json files parse as one strict JSON value (no duplicate names), toml files parse as TOML, markdown files named SKILL.md
//     open with a YAML front matter holding a non-empty name and description;
//   - every warning has a code.
func CheckPlan(tb testing.TB, m abi.Manifest, p abi.Plan) {
	tb.Helper()
	roots := map[string]bool{}
	for _, r := range m.Roots {
		roots[r] = true
	}
	seen := map[string]bool{}
	for _, f := range p.Files {
		where := f.Root + "/" + f.Path
		assert.True(tb, roots[f.Root], "file %s: root %q is not declared by manifest %s", where, f.Root, m.Name)
		assert.True(tb, isCleanLocal(f.Path), "file %s: path must be clean, local and slash-separated", where)
		assert.False(tb, seen[where], "file %s appears twice in the plan", where)
		seen[where] = true
		if strings.Contains(f.Content, SecretPrefix) {
			assert.True(tb, f.Secret, "file %s holds a secret placeholder but is not marked Secret", where)
		}
		if f.Secret {
			assert.Equal(tb, "0600", f.Mode, "secret file %s must have mode 0600", where)
			assert.NotEqual(tb, abi.RootCheckout, f.Root, "secret file %s must not be under the checkout", where)
		}
		switch f.Format {
		case abi.FormatJSON:
			_, err := readback.ParseJSON([]byte(f.Content))
			assert.NoError(tb, err, "file %s: json must parse strictly, as one value:\n%s", where, f.Content)
		case abi.FormatTOML:
			_, err := readback.ParseTOML(f.Content)
			assert.NoError(tb, err, "file %s: toml must parse:\n%s", where, f.Content)
		case abi.FormatMarkdown:
			if path.Base(f.Path) == "SKILL.md" {
				fm := FrontMatter(tb, f.Content)
				assert.NotEmpty(tb, fm["name"], "file %s: front matter needs a name", where)
				assert.NotEmpty(tb, fm["description"], "file %s: front matter needs a description", where)
			}
		case abi.FormatText:
		default:
			assert.Fail(tb, "unknown format", "file %s: format %q", where, f.Format)
		}
	}
	for _, a := range p.Args {
		assert.NotContains(tb, a, SecretPrefix, "arg %q holds a secret placeholder", a)
	}
	for _, e := range p.Env {
		assert.NotContains(tb, e.Value, SecretPrefix, "env %s holds a secret placeholder", e.Name)
	}
	assert.NotContains(tb, p.Prompt, SecretPrefix, "the prompt holds a secret placeholder")
	for _, g := range p.GitExclude {
		assert.NotContains(tb, g, SecretPrefix, "gitExclude %q holds a secret placeholder", g)
	}
	for _, w := range p.Warnings {
		assert.NotEmpty(tb, w.Code, "warning %q has no code", w.Message)
	}
}

// FrontMatter parses the YAML front matter of a markdown document and returns it.
func FrontMatter(tb testing.TB, doc string) map[string]any {
	tb.Helper()
	require.True(tb, strings.HasPrefix(doc, "---\n"), "document must open with a --- line:\n%s", doc)
	end := strings.Index(doc[4:], "\n---\n")
	require.GreaterOrEqual(tb, end, 0, "document must close its front matter with a --- line:\n%s", doc)
	var m map[string]any
	require.NoError(tb, yaml.Unmarshal([]byte(doc[4:4+end+1]), &m), "front matter must be YAML:\n%s", doc)
	return m
}

func isCleanLocal(p string) bool {
	if p == "" || strings.ContainsAny(p, "\\\x00") || path.IsAbs(p) || path.Clean(p) != p {
		return false
	}
	return filepath.IsLocal(filepath.FromSlash(p))
}

// ConfigFile returns the harness's config file of p (the profile's config root and path),
// failing tb when the plan has none.
func ConfigFile(tb testing.TB, prof *profile.Profile, p abi.Plan) abi.File {
	tb.Helper()
	cf := prof.Config
	for _, f := range p.Files {
		if f.Root == cf.Root && f.Path == cf.Path {
			return f
		}
	}
	require.FailNow(tb, "the plan has no config file", "want %s:%s", cf.Root, cf.Path)
	return abi.File{}
}

// ReadServers reads the harness's config file out of p back through its profile with the
// plan check's own reader (sdk/profile/readback) and returns its server entries in file order,
// failing tb when the plan has no such file or the file breaks the profile's layout (a key the
// profile does not list, a value of the wrong type, a duplicate key).
func ReadServers(tb testing.TB, prof *profile.Profile, p abi.Plan) []readback.Server {
	tb.Helper()
	f := ConfigFile(tb, prof, p)
	cfg, err := readback.Read(prof, f.Content)
	require.NoError(tb, err, "%s:%s must read back through the profile of %s:\n%s", f.Root, f.Path, prof.Harness, f.Content)
	return cfg.Servers
}

// ServerByID returns the entry of servers named id, or nil.
func ServerByID(servers []readback.Server, id string) *readback.Server {
	for i := range servers {
		if servers[i].ID == id {
			return &servers[i]
		}
	}
	return nil
}

// CheckServers reads the plan's config back (ReadServers) and compares every rendered server
// with the vetted server of the same id in req: a stdio server must be the spawn wrapper
// (format.UnwrapSpawn) giving exactly the vetted command, args, cwd and spawn environment
// (HostEnv, then Env; names env -S cannot carry are left out); an http server must carry the
// vetted url and headers, literals decoded as the harness reads them. Every key and reading
// comes from the harness's profile (the same model and reader the host checks the plan
// through): the keys meaning command, args, env, cwd, url and headers, its spawn style, and
// its passes over urls and header values. It returns the servers read.
func CheckServers(tb testing.TB, prof *profile.Profile, req abi.Request, p abi.Plan) []readback.Server {
	tb.Helper()
	vetted := map[string]abi.Server{}
	for _, s := range req.Servers {
		vetted[s.ID] = s
	}
	_, hasCwd := keyMeaning(prof, "cwd")
	style := prof.SpawnStyle()
	servers := ReadServers(tb, prof, p)
	for _, s := range servers {
		id := s.ID
		v, ok := vetted[id]
		if !assert.True(tb, ok, "rendered server %q is not in the request", id) {
			continue
		}
		if v.Transport == abi.TransportStdio {
			var env []abi.Pair
			for _, e := range s.Env {
				env = append(env, abi.Pair{Name: e.Name, Value: e.Value, Secret: strings.Contains(e.Value, SecretPrefix)})
			}
			got, err := format.UnwrapSpawn(style, Deref(s.Command), s.Args, env)
			if !assert.NoError(tb, err, "server %s: the launch must be the spawn wrapper", id) {
				continue
			}
			want := format.NewObject()
			for _, p := range append(append([]abi.Pair(nil), v.HostEnv...), v.Env...) {
				if format.IsSpawnName(p.Name) {
					want.Set(p.Name, p.Value)
				}
			}
			var wantEnv []abi.Pair
			for _, k := range want.Keys() {
				val, _ := want.Get(k)
				wantEnv = append(wantEnv, abi.Pair{Name: k, Value: val.(string)})
			}
			assert.Equal(tb, wantEnv, got.Env, "server %s: the spawn environment", id)
			assert.Equal(tb, v.Command, got.Command, "server %s: command", id)
			assert.Equal(tb, append([]string{}, v.Args...), got.Args, "server %s: args", id)
			cwd := got.Cwd
			if hasCwd {
				cwd = Deref(s.Cwd)
			}
			assert.Equal(tb, v.Cwd, cwd, "server %s: cwd", id)
			continue
		}
		url, ok := prof.ReadURL(Deref(s.URL))
		assert.True(tb, ok, "server %s: the url must be a literal", id)
		assert.Equal(tb, v.URL, url, "server %s: url", id)
		got := map[string]string{}
		for _, h := range s.Headers {
			val := h.Value
			if !strings.Contains(val, SecretPrefix) {
				var ok bool
				val, ok = prof.ReadHeader(val)
				assert.True(tb, ok, "server %s: header %s must be a literal", id, h.Name)
			}
			got[h.Name] = val
		}
		want := map[string]string{}
		for _, p := range v.Headers {
			want[p.Name] = p.Value
		}
		assert.Equal(tb, want, got, "server %s: headers", id)
	}
	return servers
}

// keyMeaning returns a server key of prof's config meaning m, and whether there is one.
func keyMeaning(prof *profile.Profile, m string) (string, bool) {
	for k, meaning := range prof.Config.ServerKeys {
		if meaning == m {
			return k, true
		}
	}
	return "", false
}

// Deref is *s, or "" for nil: a string key of a server read back.
func Deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// CheckProfileGenerated fails tb when got, a plugin's generated profile literal (profile_gen.go),
// is not the profile at path as the host reads it: the profile.yaml was edited and go generate
// not run.
func CheckProfileGenerated(tb testing.TB, path string, got *profile.Profile) {
	tb.Helper()
	data, err := os.ReadFile(path)
	require.NoError(tb, err)
	want, err := profileyaml.Parse(data)
	require.NoError(tb, err)
	assert.Equal(tb, want, got, "profile_gen.go is out of date: run go generate ./plugins/...")
}

// ValidRunes replaces each invalid byte of s by U+FFFD, as encoding/json does: what the host
// sends a plugin is valid UTF-8.
func ValidRunes(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}
