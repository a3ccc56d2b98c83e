package conformity_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/conformity"
	"github.com/loadout-dev/loadout/conformity/corpus"
	"github.com/loadout-dev/loadout/host/engine/wazero"
	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/internal/testplugins"
	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
)

// TestCorpusCanaries keeps the project's corpus searchable: in every accepted case, each
// non-blank server command, each url with a host (less its scheme: conformity.URLMarker), each skill's instructions and each redaction
// string is at least conformity.MinCanary bytes, so the invariants check it instead of skipping it.
func TestCorpusCanaries(t *testing.T) {
	t.Parallel()
	cases, err := corpus.Load(*casesDir)
	require.NoError(t, err, "corpus.Load(%s)", *casesDir)
	for _, c := range cases {
		if c.Expect.Rejected {
			continue
		}
		var in struct {
			Servers     []map[string]any `json:"mcpServers"`
			UserServers []map[string]any `json:"userServers"`
			Skills      []map[string]any `json:"skills"`
		}
		if json.Unmarshal(c.Body(), &in) != nil {
			continue // a raw body with entries of other shapes; its servers are checked by value below
		}
		short := func(what, s string) {
			assert.GreaterOrEqual(t, len(s), conformity.MinCanary, "case %s: %s %q is too short to search the output for", c.File, what, s)
		}
		for _, s := range append(in.Servers, in.UserServers...) {
			if cmd, ok := s["command"].(string); ok && strings.TrimSpace(cmd) != "" {
				short("command", cmd)
			}
			if u, ok := s["url"].(string); ok {
				if pu, err := url.Parse(u); err == nil && pu.Host != "" {
					short("url without its scheme", conformity.URLMarker(u))
				}
			}
		}
		for _, sk := range in.Skills {
			if ins, ok := sk["instructions"].(string); ok && strings.TrimSpace(ins) != "" {
				short("instructions", ins)
			}
		}
		for _, r := range c.Expect.Redact {
			short("redaction string", r)
		}
	}
}

func TestParseExceptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     []conformity.Exception
		wantErr  bool
	}{
		{"empty", "", nil, false},
		{"comments and blanks", "# x\n\n  # y\n", nil, false},
		{"one", "codex/codex-skips-http: renders http\n", []conformity.Exception{{Harness: "codex", Case: "codex-skips-http", Reason: "renders http"}}, false},
		{"no reason", "codex/codex-skips-http:\n", nil, true},
		{"no harness", "codex-skips-http: x\n", nil, true},
		{"case with number prefix file name", "codex/070-codex-skips-http.json: x\n", nil, true},
		{"duplicate", "a/b: x\na/b: y\n", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := conformity.ParseExceptions(strings.NewReader(tc.in))
			if tc.wantErr {
				assert.Error(t, err, "ParseExceptions(%q): want an error", tc.in)
				return
			}
			require.NoError(t, err, "ParseExceptions(%q)", tc.in)
			assert.Equal(t, tc.want, got, "ParseExceptions(%q)", tc.in)
		})
	}
}

// toy is a renderer for a made-up harness that writes one text file naming every server and
// skill. Its knobs turn it into the faulty plugins the suite must catch.
type toy struct {
	nondeterministic bool // the file carries a counter
	dropHTTPSilently bool // the manifest lists stdio only, and http servers vanish without a warning
	hideSkills       bool // skill names are left out
	leakCommandOf    string
	// mentionURL is text of the plugin's own with a url in it, as a renderer may write in a
	// prompt or a warning.
	mentionURL string
	calls      atomic.Int64
}

func (ty *toy) manifest() abi.Manifest {
	tr := []string{abi.TransportStdio, abi.TransportHTTP}
	if ty.dropHTTPSilently {
		tr = tr[:1]
	}
	return abi.Manifest{Name: "render.toy", Version: "0.0.1", Harness: "toy", Transports: tr, Roots: []string{abi.RootRun}}
}

// toyProfiles is the reviewed profile of the toy harness: one text file under the run root
// and no MCP config, so what the conformity mechanism itself catches is what is tested.
var toyProfiles = func() plan.Profiles {
	p, err := plan.ParseProfile([]byte("harness: toy\npaths: [{root: run, path: toy.txt}]\nvalueSyntax: literal\ntools: {in: none}\n"))
	if err != nil {
		panic(err)
	}
	return plan.Profiles{"toy": p}
}()

func (ty *toy) render(req abi.Request) (abi.Plan, error) {
	var b strings.Builder
	for _, s := range req.Servers {
		if ty.dropHTTPSilently && s.Transport == abi.TransportHTTP {
			continue
		}
		fmt.Fprintf(&b, "server %s %s %s\n", s.ID, s.Command, s.URL)
	}
	if !ty.hideSkills {
		for _, sk := range req.Skills {
			fmt.Fprintf(&b, "skill %s\n", sk.Name)
		}
	}
	b.WriteString(ty.leakCommandOf)
	b.WriteString(ty.mentionURL)
	if ty.nondeterministic {
		fmt.Fprintf(&b, "call %d\n", ty.calls.Add(1))
	}
	return abi.Plan{Files: []abi.File{{Root: abi.RootRun, Path: "toy.txt", Mode: "0600", Format: abi.FormatText, Content: b.String()}}}, nil
}

// writeCase writes one case file into dir.
func writeCase(t *testing.T, dir, file string, c map[string]any) {
	t.Helper()
	b, err := json.MarshalIndent(c, "", "  ")
	require.NoError(t, err, "encode case %s", file)
	require.NoError(t, os.WriteFile(filepath.Join(dir, file), b, 0o644), "write case %s", file)
}

// TestRunCatchesFaultyPlugins runs small cases on a toy plugin, healthy and broken in one way
// at a time, and checks that each fault fails the run with a reason that names it.
func TestRunCatchesFaultyPlugins(t *testing.T) {
	dir := t.TempDir()
	writeCase(t, dir, "001-mixed.json", map[string]any{
		"name": "mixed", "area": "toy", "description": "a kept stdio and http server, a dropped server, a skill",
		"input": map[string]any{
			"skills": []any{map[string]any{"name": "deploy-toy", "instructions": "Deploy the toy carefully."}},
			"mcpServers": []any{
				map[string]any{"id": "keep", "command": "/opt/canary/toy/kept-server"},
				map[string]any{"id": "web", "transport": "http", "url": "https://toy.example/mcp"},
				map[string]any{"id": "Bad Id", "command": "/opt/canary/toy/dropped-server"},
			},
		},
		"expect": map[string]any{"servers": []string{"keep", "web"}, "skills": []string{"deploy-toy"}, "resources": map[string]any{}, "redact": []string{}},
	})
	tests := []struct {
		name string
		toy  *toy
		want string // a substring of the first failure; "" means the run passes
	}{
		{"healthy", &toy{}, ""},
		{"nondeterministic", &toy{nondeterministic: true}, "not deterministic"},
		{"unsupported transport without warning", &toy{dropHTTPSilently: true}, `server "web" uses transport "http"`},
		{"kept skill missing", &toy{hideSkills: true}, `kept skill "deploy-toy" appears nowhere`},
		{"dropped server leaks", &toy{leakCommandOf: "/opt/canary/toy/dropped-server"}, "from a dropped server or skill"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := conformity.Native(tc.toy.manifest(), tc.toy.render)
			require.NoError(t, err, "conformity.Native(toy)")
			rep, err := conformity.Run(context.Background(), conformity.Config{CaseDirs: []string{dir}, Targets: []conformity.Target{tg}, TempDir: t.TempDir(), Profiles: toyProfiles})
			require.NoError(t, err, "conformity.Run(toy %s)", tc.name)
			require.Len(t, rep.Results, 1, "conformity.Run(toy %s): one case, one target", tc.name)
			res := rep.Results[0]
			if tc.want == "" {
				assert.True(t, res.OK, "conformity.Run(toy %s): want a pass, got %q", tc.name, res.Failures)
				return
			}
			assert.False(t, res.OK, "conformity.Run(toy %s): want a failure", tc.name)
			assert.Contains(t, strings.Join(res.Failures, "\n"), tc.want, "conformity.Run(toy %s): failures", tc.name)
		})
	}
}

// TestURLMarkers: a dropped server's url is searched for without its scheme, so a renderer's
// own mention of any https:// url passes a case that drops a url that is nothing but a scheme,
// while a leaked url is caught whatever scheme it is written with.
func TestURLMarkers(t *testing.T) {
	dir := t.TempDir()
	writeCase(t, dir, "001-schemes.json", map[string]any{
		"name": "schemes", "area": "toy", "description": "two dropped urls: one with no host, one with userinfo and no host",
		"input": map[string]any{"mcpServers": []any{
			map[string]any{"id": "keep", "command": "/opt/canary/toy/kept-server"},
			map[string]any{"id": "d", "transport": "http", "url": "https://"},
			map[string]any{"id": "b", "transport": "http", "url": "http://evil.example@/"},
		}},
		"expect": map[string]any{"servers": []string{"keep"}, "skills": []string{}, "resources": map[string]any{}, "redact": []string{}},
	})
	tests := []struct {
		name string
		toy  *toy
		want string
	}{
		{"a url of the plugin's own", &toy{mentionURL: "docs: https://docs.toy.example/mcp\n"}, ""},
		{"the dropped url", &toy{leakCommandOf: "http://evil.example@/"}, `"evil.example@/", from a dropped server`},
		{"the dropped url with another scheme", &toy{leakCommandOf: "https://evil.example@/"}, `"evil.example@/", from a dropped server`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := conformity.Native(tc.toy.manifest(), tc.toy.render)
			require.NoError(t, err, "conformity.Native(toy)")
			rep, err := conformity.Run(context.Background(), conformity.Config{CaseDirs: []string{dir}, Targets: []conformity.Target{tg}, TempDir: t.TempDir(), Profiles: toyProfiles})
			require.NoError(t, err, "conformity.Run(toy %s)", tc.name)
			require.Len(t, rep.Results, 1)
			res := rep.Results[0]
			if tc.want == "" {
				assert.True(t, res.OK, "conformity.Run(toy %s): want a pass, got %q", tc.name, res.Failures)
				return
			}
			assert.False(t, res.OK, "conformity.Run(toy %s): want a failure", tc.name)
			assert.Contains(t, strings.Join(res.Failures, "\n"), tc.want, "conformity.Run(toy %s): failures", tc.name)
		})
	}
	assert.Equal(t, "", conformity.URLMarker("https://"), "URLMarker(https://)")
	assert.Equal(t, "mcp.example.com/x?q=$a", conformity.URLMarker("HTTPS://mcp.example.com/x?q=$a"), "URLMarker of an upper-case scheme")
	assert.Equal(t, "no scheme here", conformity.URLMarker("no scheme here"), "URLMarker without a scheme")
}

// TestExceptionsAndEngineDiff checks that an exception covers a failing case, that an
// exception for a passing case fails the run as stale, and that two engines' differing outputs
// for the same plugin fail both.
func TestExceptionsAndEngineDiff(t *testing.T) {
	dir := t.TempDir()
	writeCase(t, dir, "001-one.json", map[string]any{
		"name": "one", "area": "toy", "description": "one kept server",
		"input":  map[string]any{"mcpServers": []any{map[string]any{"id": "keep", "command": "/opt/canary/toy/kept-server"}}},
		"expect": map[string]any{"servers": []string{"keep"}, "skills": []string{}, "resources": map[string]any{}, "redact": []string{}},
	})
	run := func(ex []conformity.Exception, toys ...*toy) *conformity.Report {
		var targets []conformity.Target
		for i, ty := range toys {
			tg, err := conformity.Native(ty.manifest(), ty.render)
			require.NoError(t, err, "conformity.Native(toy)")
			tg.Engine = fmt.Sprintf("engine%d", i)
			targets = append(targets, tg)
		}
		rep, err := conformity.Run(context.Background(), conformity.Config{CaseDirs: []string{dir}, Targets: targets, Exceptions: ex, TempDir: t.TempDir(), Profiles: toyProfiles})
		require.NoError(t, err, "conformity.Run")
		return rep
	}
	ex := []conformity.Exception{{Harness: "toy", Case: "one", Reason: "known"}}

	stale := run(ex, &toy{})
	assert.False(t, stale.OK(), "an exception for a passing case: want the run to fail")
	assert.Contains(t, stale.Results[0].Reason(), "stale exception toy/one", "stale exception failure")

	covered := run(ex, &toy{hideSkills: true, nondeterministic: true})
	assert.True(t, covered.OK(), "an exception for a failing case: want the run to pass, got %q", covered.Results[0].Failures)
	assert.Equal(t, "known", covered.Results[0].Exception, "covered result's exception")

	diff := run(nil, &toy{}, &toy{leakCommandOf: "extra output"})
	require.Len(t, diff.Results, 2, "two engines")
	for _, r := range diff.Results {
		assert.False(t, r.OK, "engine %s: outputs differ between engines: want a failure", r.Engine)
		assert.Contains(t, strings.Join(r.Failures, "\n"), "output differs from the same plugin's", "engine %s failures", r.Engine)
	}
}

// mcpToy renders a plain JSON MCP config for the made-up harness toymcp, every server field
// the profile lists; its knobs leave out or change one field the plan check lets through, so
// that only the read-back can catch it.
type mcpToy struct {
	dropDescription, dropCwd, defaultExposure bool
	timeoutInSeconds                          bool // the profile says milliseconds
}

var mcpToyProfiles = func() plan.Profiles {
	p, err := plan.ParseProfile([]byte(`harness: toymcp
paths: [{root: run, path: mcp.json}]
config:
  root: run
  path: mcp.json
  format: json
  servers: servers
  serverKeys: {command: command, args: args, env: env, cwd: cwd, url: url, headers: headers,
    description: description, exposure: exposure, toolExposure: toolExposure, timeout: timeout}
  timeoutUnit: ms
valueSyntax: literal
tools: {in: exposure, names: {exact: true}}
`))
	if err != nil {
		panic(err)
	}
	return plan.Profiles{"toymcp": p}
}()

func (ty *mcpToy) render(req abi.Request) (abi.Plan, error) {
	servers := format.NewObject()
	for _, s := range req.Servers {
		e := format.NewObject()
		if s.Transport == abi.TransportStdio {
			e.Set("command", s.Command).Set("args", s.Args)
			if s.Cwd != "" && !ty.dropCwd {
				e.Set("cwd", s.Cwd)
			}
		} else {
			e.Set("url", s.URL)
		}
		if s.Description != "" && !ty.dropDescription {
			e.Set("description", s.Description)
		}
		if s.Exposure != "" && !ty.defaultExposure {
			e.Set("exposure", s.Exposure)
		}
		if s.Timeout > 0 {
			if ty.timeoutInSeconds {
				e.Set("timeout", s.Timeout)
			} else {
				e.Set("timeout", int64(s.Timeout*1000+0.5))
			}
		}
		servers.Set(s.ID, e)
	}
	b, err := format.MarshalJSON(format.NewObject().Set("servers", servers))
	return abi.Plan{Files: []abi.File{{Root: abi.RootRun, Path: "mcp.json", Mode: "0644", Format: abi.FormatJSON, Content: string(b)}}}, err
}

// TestReadBackComparesEveryField: a config that leaves out a server's description, cwd or
// exposure, or gives its timeout in another unit than the profile's, passes the plan check (none
// of them widens what the harness may do) but not the read-back, which compares every field the
// profile lists with the vetted server.
func TestReadBackComparesEveryField(t *testing.T) {
	dir := t.TempDir()
	writeCase(t, dir, "001-fields.json", map[string]any{
		"name": "fields", "area": "toy", "description": "a stdio server with a cwd, a description and an exposure",
		"input": map[string]any{"mcpServers": []any{map[string]any{"id": "local", "command": "/opt/canary/toy/local-server",
			"args": []string{"serve"}, "cwd": "/srv/local", "description": "Local files", "exposure": "deferred", "timeout": 2.5}}},
		"expect": map[string]any{"servers": []string{"local"}, "skills": []string{}, "resources": map[string]any{}, "redact": []string{}},
	})
	tests := []struct {
		name string
		toy  *mcpToy
		want string
	}{
		{"faithful", &mcpToy{}, ""},
		{"description left out", &mcpToy{dropDescription: true}, `description "", want "Local files"`},
		{"cwd left out", &mcpToy{dropCwd: true}, `cwd "", want "/srv/local"`},
		{"exposure left out", &mcpToy{defaultExposure: true}, `exposure "" differs from the vetted "deferred"`},
		{"timeout in the wrong unit", &mcpToy{timeoutInSeconds: true}, `the timeout is 2.5, the vetted one is 2500 ms`},
	}
	m := abi.Manifest{Name: "render.toymcp", Version: "0.0.1", ABIVersion: abi.Version, Harness: "toymcp",
		Transports: []string{abi.TransportStdio, abi.TransportHTTP}, Roots: []string{abi.RootRun}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := conformity.Native(m, tc.toy.render)
			require.NoError(t, err, "conformity.Native(toymcp)")
			rep, err := conformity.Run(context.Background(), conformity.Config{CaseDirs: []string{dir}, Targets: []conformity.Target{tg}, TempDir: t.TempDir(), Profiles: mcpToyProfiles})
			require.NoError(t, err, "conformity.Run(toymcp %s)", tc.name)
			require.Len(t, rep.Results, 1)
			res := rep.Results[0]
			if tc.want == "" {
				assert.True(t, res.OK, "conformity.Run(toymcp %s): want a pass, got %q", tc.name, res.Failures)
				return
			}
			assert.False(t, res.OK, "conformity.Run(toymcp %s): want a failure", tc.name)
			assert.Contains(t, strings.Join(res.Failures, "\n"), tc.want, "conformity.Run(toymcp %s): failures", tc.name)
		})
	}
}

// TestTOMLServersReadBack: a case's codexServers is compared with the servers the TOML config
// holds as the plan check reads them back through the profile, on the built-in TOML plugin.
func TestTOMLServersReadBack(t *testing.T) {
	ctx := context.Background()
	eng, err := wazero.New(ctx, wazero.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = eng.Close(ctx) })
	tg, p, err := conformity.Wasm(ctx, eng, "codex.wasm", testplugins.Read(t, "codex"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close(ctx) })
	for _, tc := range []struct {
		want []string
		fail string
	}{{[]string{"keep", "web"}, ""}, {[]string{"keep"}, `codexServers: got ["keep" "web"], want ["keep"]`}} {
		dir := t.TempDir()
		writeCase(t, dir, "001-toml.json", map[string]any{
			"name": "toml", "area": "toy", "description": "a stdio and an http server in a TOML config",
			"input": map[string]any{"mcpServers": []any{
				map[string]any{"id": "keep", "command": "/opt/canary/toml/kept-server"},
				map[string]any{"id": "web", "transport": "http", "url": "https://toml.example/mcp"},
			}},
			"expect": map[string]any{"servers": []string{"keep", "web"}, "codexServers": tc.want, "skills": []string{}, "resources": map[string]any{}, "redact": []string{}},
		})
		rep, err := conformity.Run(ctx, conformity.Config{CaseDirs: []string{dir}, Targets: []conformity.Target{tg}, TempDir: t.TempDir()})
		require.NoError(t, err)
		require.Len(t, rep.Results, 1)
		if tc.fail == "" {
			assert.True(t, rep.Results[0].OK, "want a pass: %q", rep.Results[0].Failures)
			continue
		}
		assert.Contains(t, strings.Join(rep.Results[0].Failures, "\n"), tc.fail)
	}
}
