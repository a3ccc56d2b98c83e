package host_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/host/registry"
	"github.com/loadout-dev/loadout/internal/testplugins"
	"github.com/loadout-dev/loadout/plugins"
)

// hostileRequest has a restricted http server with a secret header, a stdio server and a skill,
// so that every attack of the hostile plugin has something to tamper with. The run's user names
// the attack.
func hostileRequest(user string) []byte {
	return []byte(`{"harness":"claude","run":{"ambientAuth":false,"user":"` + user + `"},` +
		`"skills":[{"name":"repo-review","description":"Review the repository","instructions":"Read the diff and report."}],` +
		`"mcpServers":[` +
		`{"id":"docs","transport":"http","url":"https://mcp.example.com/mcp","headers":{"Authorization":"Bearer s3cr3t-hostile-9d1e"},` +
		`"secretKeys":["Authorization"],"allowedTools":["search"],` +
		`"oauth":{"clientId":"loadout-hostile","callbackPort":8765,"scopes":["docs:read"],"authServerMetadataUrl":"https://auth.example.com/meta"}},` +
		`{"id":"fs","command":"/usr/bin/mcp-fs","args":["--root","."]}]}`)
}

// TestHostilePlans pins the hostile test plugin as a third party would and renders one request
// per attack through the whole pipeline on every engine: each must fail as a plugin failure
// (exit 4) naming the plan rule, with nothing written; the faithful plan must pass.
func TestHostilePlans(t *testing.T) {
	wasm, err := os.ReadFile(testplugins.HostilePath(t))
	require.NoError(t, err, "read the hostile plugin")
	attacks := map[string]string{
		"second-mcp-config":      plan.RuleArg,
		"inline-mcp-config":      plan.RuleArg,
		"no-strict-mcp-config":   plan.RuleArg,
		"config-dir-in-checkout": plan.RuleEnv,
		"shell-prefix":           plan.RuleEnv,
		"unwrapped-server":       plan.RuleSpawnWrapper,
		"tools-widened":          plan.RuleToolRestrictions,
		"skill-hooks":            plan.RuleSkill,
		"skill-dropped":          plan.RuleSkill,
		"oauth-client-swapped":   plan.RuleServerMismatch,
		"oauth-metadata-swapped": plan.RuleServerMismatch,
		"oauth-scope-widened":    plan.RuleServerMismatch,
		"oauth-dropped":          plan.RuleServerMismatch,
	}
	names := make([]string, 0, len(attacks))
	for name := range attacks {
		names = append(names, name)
	}
	sort.Strings(names)
	for engineName, newEngine := range testEngines {
		t.Run(engineName, func(t *testing.T) {
			ctx := context.Background()
			eng, err := newEngine(ctx)
			require.NoError(t, err, "new %s engine", engineName)
			p, err := registry.Load(ctx, eng, registry.Artifact{Name: "hostile.wasm", Wasm: wasm, SHA256: registry.Digest(wasm), Harness: "claude"})
			require.NoError(t, err, "load the hostile plugin on %s", engineName)
			m := p.Manifest()
			profiles, err := plan.LoadProfiles(plugins.Profiles)
			require.NoError(t, err)
			h, err := host.New(ctx, host.Config{
				Plugins: []host.LoadedPlugin{{Plugin: p, Info: host.PluginInfo{Name: m.Name, Harness: m.Harness, SHA256: p.Digest(), Source: "hostile.wasm"},
					Profile: profiles[m.Harness]}},
				OnClose: func(ctx context.Context) error { return errors.Join(p.Close(ctx), eng.Close(ctx)) },
			})
			require.NoError(t, err, "host.New")
			t.Cleanup(func() { _ = h.Close(context.Background()) })

			render := func(t *testing.T, user string) (string, error) {
				base := t.TempDir()
				roots := host.Roots{Config: filepath.Join(base, "config"), Run: filepath.Join(base, "run"), Checkout: filepath.Join(base, "checkout")}
				require.NoError(t, os.MkdirAll(filepath.Join(roots.Checkout, ".git"), 0o755))
				_, err := h.Render(ctx, host.RenderRequest{Body: hostileRequest(user), Roots: roots})
				return base, err
			}
			t.Run("faithful", func(t *testing.T) {
				_, err := render(t, "alice")
				require.NoError(t, err, "render with the faithful plan on %s", engineName)
			})
			for _, name := range names {
				t.Run(name, func(t *testing.T) {
					base, err := render(t, "attack-"+name)
					require.Error(t, err, "render with attack %s on %s", name, engineName)
					assert.Equal(t, host.ClassPlugin, host.Classify(err), "Classify(attack %s) (exit 4); error: %v", name, err)
					var rules []string
					for _, v := range plan.Violations(err) {
						rules = append(rules, v.Rule)
					}
					assert.Contains(t, rules, attacks[name], "attack %s: violation rules; error: %v", name, err)
					for _, root := range []string{"config", "run"} {
						entries, _ := os.ReadDir(filepath.Join(base, root))
						assert.Empty(t, entries, "attack %s: %s root after the refused render", name, root)
					}
				})
			}
		})
	}
}
