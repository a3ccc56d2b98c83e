package plan_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// pluginRoots are the roots each built-in renderer's manifest declares (plugins/*/render.go).
var pluginRoots = map[string][]string{
	"claude": {abi.RootConfig, abi.RootRun, abi.RootCheckout},
	"codex":  {abi.RootConfig, abi.RootCheckout},
	"pi":     {abi.RootConfig},
	"gemini": {abi.RootConfig},
}

// readArchive reads a plan back from the txtar form sdk/format/formattest.Archive writes for
// the plugins' golden files.
func readArchive(t *testing.T, path string) *abi.Plan {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err, "read golden plan %s", path)
	p := &abi.Plan{Files: []abi.File{}, Args: []string{}, Env: []abi.Pair{}, GitExclude: []string{}, Warnings: []abi.Warning{}}
	unquote := func(s string) (string, string) {
		q, err := strconv.QuotedPrefix(s)
		require.NoError(t, err, "%s: quoted string expected at %q", path, s)
		v, err := strconv.Unquote(q)
		require.NoError(t, err, "%s: unquote %q", path, q)
		return v, s[len(q):]
	}
	section := ""
	var body []string
	flush := func() {
		switch {
		case section == "args" || section == "gitexclude":
			for _, l := range body {
				v, _ := unquote(l)
				if section == "args" {
					p.Args = append(p.Args, v)
				} else {
					p.GitExclude = append(p.GitExclude, v)
				}
			}
		case section == "env":
			for _, l := range body {
				name, rest := unquote(l)
				value, rest := unquote(strings.TrimPrefix(rest, "="))
				p.Env = append(p.Env, abi.Pair{Name: name, Value: value, Secret: rest == " secret"})
			}
		case section == "prompt":
			p.Prompt = strings.Join(body, "")
		case section == "warnings":
			for _, l := range body {
				code, rest, _ := strings.Cut(strings.TrimSuffix(l, "\n"), " server=")
				server, rest := unquote(rest)
				skill, rest := unquote(strings.TrimPrefix(rest, " skill="))
				msg, _ := unquote(strings.TrimPrefix(rest, " "))
				p.Warnings = append(p.Warnings, abi.Warning{Code: code, Server: server, Skill: skill, Message: msg})
			}
		case strings.HasPrefix(section, "file "):
			var f abi.File
			fields := strings.Fields(strings.TrimPrefix(section, "file "))
			f.Root, f.Path, _ = strings.Cut(fields[0], "/")
			content := strings.Join(body, "")
			for _, kv := range fields[1:] {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "mode":
					f.Mode = v
				case "format":
					f.Format = v
				case "secret":
					f.Secret = v == "true"
				case "eol":
					content = strings.TrimSuffix(content, "\n")
				}
			}
			f.Content = content
			p.Files = append(p.Files, f)
		}
		body = nil
	}
	r := bufio.NewReader(strings.NewReader(string(data)))
	for {
		line, err := r.ReadString('\n')
		if line == "" && err != nil {
			break
		}
		if strings.HasPrefix(line, "-- ") && strings.HasSuffix(line, " --\n") {
			flush()
			section = strings.TrimSuffix(strings.TrimPrefix(line, "-- "), " --\n")
			continue
		}
		if section == "args" || section == "gitexclude" || section == "env" || section == "warnings" {
			line = strings.TrimSuffix(line, "\n")
		}
		body = append(body, line)
	}
	flush()
	return p
}

// goldenInput is the Check input of a plugin's golden request: every secret placeholder at the
// server, field and key the request gives it, every blob placeholder the request holds.
func goldenInput(t *testing.T, harness, path string) plan.Input {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err, "read golden request %s", path)
	var req abi.Request
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&req), "decode golden request %s", path)
	in := plan.Input{
		Manifest: abi.Manifest{Name: "render." + harness, ABIVersion: abi.Version, Harness: harness, Roots: pluginRoots[harness]},
		Profile:  profileOf(harness),
		Request:  req,
	}
	for _, s := range req.Servers {
		for field, pairs := range map[string][]abi.Pair{plan.FieldEnv: s.Env, plan.FieldHeaders: s.Headers} {
			for _, p := range pairs {
				for _, o := range plan.Scan(p.Value) {
					if o.Kind == plan.KindSecret {
						in.Secrets = append(in.Secrets, plan.Secret{Placeholder: o.Text, Value: "v" + o.ID, Server: s.ID, Field: field, Key: p.Name})
					}
				}
			}
		}
	}
	seen := map[string]bool{}
	for _, o := range plan.Scan(string(data)) {
		if o.Kind == plan.KindBlob && !seen[o.Text] {
			seen[o.Text] = true
			in.Blobs = append(in.Blobs, plan.Blob{Placeholder: o.Text, Value: "blob " + o.ID})
		}
	}
	return in
}

// TestCheckAcceptsPluginGoldenPlans checks every golden plan the built-in renderers commit
// (plugins/*/testdata/*.txtar, rendered from testdata/requests/*.json): what the renderers emit,
// the env wrapper of docs/SPAWN-ENV.md included, must pass Check.
func TestCheckAcceptsPluginGoldenPlans(t *testing.T) {
	t.Parallel()
	wrapped := 0
	for _, harness := range []string{"claude", "codex", "pi"} {
		dir := filepath.Join("..", "..", "plugins", harness, "testdata")
		archives, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
		require.NoError(t, err, "glob %s", dir)
		require.NotEmpty(t, archives, "plugin %s has no golden plans under %s", harness, dir)
		for _, a := range archives {
			name := strings.TrimSuffix(filepath.Base(a), ".txtar")
			p := readArchive(t, a)
			in := goldenInput(t, harness, filepath.Join(dir, "requests", name+".json"))
			for _, f := range p.Files {
				wrapped += strings.Count(f.Content, "/usr/bin/env")
			}
			t.Run(harness+"/"+name, func(t *testing.T) {
				t.Parallel()
				err := checkPlan(p, in)
				require.NoError(t, err, "Check(golden plan %s for request %s.json) = %v, want nil", a, name, err)
			})
		}
	}
	require.Positive(t, wrapped, "the golden plans must hold at least one env-wrapped stdio server")
}

// TestCheckPinnedSettings: a profile's pinned top-level settings (Gemini's
// security.auth.useExternal and advanced.ignoreLocalEnv, which keep the checkout's .env files
// out) must be in the config exactly: dropped, changed or widened, the plan is refused.
func TestCheckPinnedSettings(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "plugins", "gemini", "testdata")
	golden := readArchive(t, filepath.Join(dir, "rich.txtar"))
	in := goldenInput(t, "gemini", filepath.Join(dir, "requests", "rich.json"))
	require.NoError(t, checkPlan(golden, in), "the golden plan passes as rendered")
	const pinned = `"security": {
    "auth": {
      "useExternal": true
    }
  },`
	require.Contains(t, golden.Files[0].Content, pinned, "the golden config carries the pinned settings")
	for name, edit := range map[string]func(string) string{
		"dropped": func(s string) string { return strings.Replace(s, pinned, "", 1) },
		"changed": func(s string) string { return strings.Replace(s, `"useExternal": true`, `"useExternal": false`, 1) },
		"widened": func(s string) string {
			return strings.Replace(s, `"useExternal": true`, `"useExternal": true, "enforcedType": "x"`, 1)
		},
		"as text": func(s string) string {
			return strings.Replace(s, `"ignoreLocalEnv": true`, `"ignoreLocalEnv": "true"`, 1)
		},
		"doubled": func(s string) string {
			return strings.Replace(s, `"ignoreLocalEnv": true`, `"ignoreLocalEnv": true, "ignoreLocalEnv": false`, 1)
		},
	} {
		p := *golden
		p.Files = slices.Clone(golden.Files)
		p.Files[0].Content = edit(golden.Files[0].Content)
		require.NotEqual(t, golden.Files[0].Content, p.Files[0].Content, name)
		err := checkPlan(&p, in)
		require.Error(t, err, "a config with the pinned settings %s must be refused", name)
		want := plan.RuleConfigKey
		if name == "doubled" {
			want = "duplicate member name" // refused as it is parsed
		}
		assert.Contains(t, err.Error(), want, name)
	}
}
