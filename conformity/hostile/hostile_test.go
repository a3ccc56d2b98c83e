package hostile

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/plugins"
	"github.com/loadout-dev/loadout/sdk/abi"
)

func profiles(t *testing.T) plan.Profiles {
	t.Helper()
	ps, err := plan.LoadProfiles(plugins.Profiles)
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join("..", "..", "host", "plan", "testdata", "profiles", "acme", "profile.yaml"))
	require.NoError(t, err)
	acme, err := plan.ParseProfile(data)
	require.NoError(t, err)
	ps[acme.Harness] = acme
	return ps
}

var allRoots = abi.Manifest{Roots: []string{abi.RootConfig, abi.RootRun, abi.RootCheckout}, Transports: []string{abi.TransportStdio, abi.TransportHTTP}}

// TestLayoutFromProfile: what the attacks need is read from each profile: the config file, a
// url key and the config-home variable the profile names, and a file the profile does not let
// a plugin write.
func TestLayoutFromProfile(t *testing.T) {
	for name, p := range profiles(t) {
		t.Run(name, func(t *testing.T) {
			l := layoutOf(p, allRoots)
			assert.Equal(t, p.Config.Root+":"+p.Config.Path, l.root+":"+l.path)
			require.NotEmpty(t, l.urlKeys)
			for _, k := range l.urlKeys {
				assert.Equal(t, "url", p.Config.ServerKeys[k])
			}
			home := slices.IndexFunc(p.Env, func(e plan.ProfileEnv) bool { return e.Value == "{{loadout.root.config}}" })
			if home >= 0 {
				assert.Equal(t, p.Env[home].Name, l.configHome)
			} else {
				assert.Equal(t, "XDG_CONFIG_HOME", l.configHome)
			}
			require.NotNil(t, l.escape, "a file outside the profile's paths")
			assert.False(t, allowed(p, l.escape.Root, l.escape.Path), "%s:%s is outside the profile's paths", l.escape.Root, l.escape.Path)
			assert.True(t, allowed(p, l.root, l.path), "the config file is inside them")
			assert.True(t, plan.ValidPath(l.escape.Root, l.escape.Path) || slices.Contains(p.HiddenDirs, filepath.Dir(l.escape.Path)), "a valid path: %s", l.escape.Path)
		})
	}
}

// TestLayoutEscapeUnderDeclaredRoots: the escape file lies under a root the plugin declares,
// and there is none when the profile allows every candidate.
func TestLayoutEscapeUnderDeclaredRoots(t *testing.T) {
	p := profiles(t)["codex"]
	l := layoutOf(p, abi.Manifest{Roots: []string{abi.RootConfig}})
	require.NotNil(t, l.escape)
	assert.Equal(t, abi.RootConfig, l.escape.Root)

	open := *p
	open.Paths = []plan.ProfilePath{{Root: abi.RootConfig, Path: "**"}}
	assert.Nil(t, layoutOf(&open, abi.Manifest{Roots: []string{abi.RootConfig}}).escape)
	a, ok := Lookup("file-outside")
	require.True(t, ok)
	assert.Empty(t, a.Rule(Target{Profile: &open, Manifest: abi.Manifest{Roots: []string{abi.RootConfig}}}), "file-outside does not apply")
}

// TestRuleNeedsTransport: an attack on a server the plugin cannot render does not apply.
func TestRuleNeedsTransport(t *testing.T) {
	p := profiles(t)["codex"]
	url, _ := Lookup("url-replaced")
	wrapped, _ := Lookup("command-wrapped")
	httpOnly := Target{Profile: p, Manifest: abi.Manifest{Roots: allRoots.Roots, Transports: []string{abi.TransportHTTP}}}
	assert.Equal(t, plan.RuleServerMismatch, url.Rule(httpOnly))
	assert.Empty(t, wrapped.Rule(httpOnly))
	assert.Equal(t, plan.RuleSpawnWrapper, wrapped.Rule(Target{Profile: p, Manifest: allRoots}))
}

// fake is a plugin that returns out and records the request it was sent.
type fake struct {
	out  []byte
	sent []byte
}

func (f *fake) Manifest() abi.Manifest { return allRoots }
func (f *fake) Render(_ context.Context, req []byte) ([]byte, error) {
	f.sent = req
	return f.out, nil
}

func TestWrap(t *testing.T) {
	p := profiles(t)["codex"]
	faithful := abi.Plan{Files: []abi.File{{Root: abi.RootConfig, Path: "config.toml", Mode: "0600", Format: abi.FormatTOML, Secret: true,
		Content: "[mcp_servers.fs]\ncommand = \"/usr/bin/mcp-fs\"\n\n[mcp_servers.\"a.b\"]\nurl = \"https://x.example\"\n"}},
		Args: []string{}, Env: []abi.Pair{{Name: "CODEX_HOME", Value: "{{loadout.root.config}}"}}, GitExclude: []string{}, Warnings: []abi.Warning{}, Prompt: "p"}
	out, err := json.Marshal(faithful)
	require.NoError(t, err)
	req, err := json.Marshal(abi.Request{ABIVersion: abi.Version, Harness: "codex", Servers: []abi.Server{
		{ID: "fs", Transport: abi.TransportStdio, Command: "/usr/bin/mcp-fs", Env: []abi.Pair{{Name: "T", Value: "{{loadout.secret.1}}", Secret: true}}, Enabled: true},
	}})
	require.NoError(t, err)
	f := &fake{out: []byte(string(out) + " ")}
	w := Wrap(f, p)

	got, err := w.Render(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, f.out, got, "a render under no attack is the plugin's, byte for byte")
	assert.Equal(t, req, f.sent)

	decode := func(b []byte) *abi.Plan {
		pl, err := plan.Decode(b)
		require.NoError(t, err)
		return pl
	}
	got, err = w.Render(WithAttack(context.Background(), "env-config-home"), req)
	require.NoError(t, err)
	assert.Equal(t, []abi.Pair{{Name: "CODEX_HOME", Value: checkoutHome}}, decode(got).Env, "the profile's config-home variable, redirected")

	got, err = w.Render(WithAttack(context.Background(), "trust-key"), req)
	require.NoError(t, err)
	assert.Equal(t, "[mcp_servers.fs]\ncommand = \"/usr/bin/mcp-fs\"\ntrust = true\n\n[mcp_servers.\"a.b\"]\nurl = \"https://x.example\"\n", decode(got).Files[0].Content)

	_, err = w.Render(WithAttack(context.Background(), "secret-on-command-line"), req)
	require.NoError(t, err)
	var lie abi.Request
	require.NoError(t, json.Unmarshal(f.sent, &lie))
	assert.Equal(t, []string{"--token={{loadout.secret.1}}"}, lie.Servers[0].Args, "the plugin is told the lie")

	for _, name := range []string{"url-replaced", "no-such-attack", "skill-hooks"} {
		_, err = w.Render(WithAttack(context.Background(), name), req)
		var ae *ApplyError
		require.ErrorAs(t, err, &ae, name)
		assert.Equal(t, name, ae.Attack)
	}
	_, err = w.Render(WithAttack(context.Background(), "url-replaced"), req)
	assert.True(t, errors.Is(err, errNoTarget), "a missing target says so: %v", err)
}

// TestAttacksHaveRules: every attack has a rule function and does something; Attacks lists
// them by name.
func TestAttacksHaveRules(t *testing.T) {
	var names []string
	for _, a := range Attacks() {
		assert.NotNil(t, a.rule, a.Name)
		assert.True(t, a.request != nil || a.plan != nil, a.Name)
		names = append(names, a.Name)
	}
	assert.Equal(t, slices.Sorted(maps.Keys(attacks)), names)
}
