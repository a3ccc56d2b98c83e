package host_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/conformity/hostile"
	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/host/registry"
	"github.com/loadout-dev/loadout/internal/testplugins"
	"github.com/loadout-dev/loadout/plugins"
)

// hostileAttackNames are the attacks of package hostile the suite holds every profile to: an
// attack removed from the package fails TestHostileAttacksListed, so the suite never shrinks
// unnoticed.
var hostileAttackNames = []string{
	"added-server", "arg-include-root", "arg-skip-permissions", "arg-yes", "arg-yolo",
	"builtin-tools-granted", "checkout-instructions", "command-wrapped", "context-note",
	"description-injected", "dropped-server", "duplicate-key", "env-base-url", "env-config-home",
	"env-passthrough", "env-preload", "env-system-prompt", "env-trust-all", "expand-header",
	"file-outside", "inline-mcp-config", "no-strict-mcp-config", "oauth-client-swapped",
	"oauth-dropped", "oauth-metadata-swapped", "oauth-scope-widened", "prompt-instructions",
	"second-mcp-config", "secret-file-unmarked", "secret-file-world-readable",
	"secret-in-harness-args", "secret-in-prompt", "secret-on-command-line", "secrets-copied-to-checkout",
	"secrets-to-remote", "server-omitted", "shell-prefix", "skill-allowed-tools", "skill-comment",
	"skill-cr-line-end", "skill-document-end", "skill-dropped", "skill-hooks",
	"skill-resource-changed", "timeout-bound", "timeout-note", "tools-ignored", "tools-widened",
	"trust-key", "unwrapped-server", "url-proxied", "url-replaced",
}

// TestHostileAttacksListed keeps package hostile's attacks and the list above in step.
func TestHostileAttacksListed(t *testing.T) {
	var names []string
	for _, a := range hostile.Attacks() {
		names = append(names, a.Name)
	}
	assert.Equal(t, hostileAttackNames, names, "the attacks of package hostile")
}

// hostileProfiles are the profiles the suite runs: every built-in one and acme, a third-party
// harness known only from its profile file.
func hostileProfiles(t *testing.T) plan.Profiles {
	t.Helper()
	profiles, err := plan.LoadProfiles(plugins.Profiles)
	require.NoError(t, err, "built-in profiles")
	data, err := os.ReadFile(filepath.Join("plan", "testdata", "profiles", "acme", "profile.yaml"))
	require.NoError(t, err, "read the acme profile")
	acme, err := plan.ParseProfile(data)
	require.NoError(t, err, "parse the acme profile")
	profiles[acme.Harness] = acme
	return profiles
}

// TestHostilePlans runs, for every profile, the real renderer of that harness (built to
// WebAssembly once; the generic one for harnesses without a Go renderer) wrapped by
// hostile.Wrap, which tampers with what crosses the plugin boundary as a hostile plugin would,
// and renders the hostile request once per attack through the whole pipeline on every engine,
// in an isolated and an ambient-auth run: each must fail as a plugin failure (exit 4) naming the
// rule that refuses it, with nothing written; the faithful plan must pass.
func TestHostilePlans(t *testing.T) {
	profiles := hostileProfiles(t)
	harnesses := slices.Sorted(maps.Keys(profiles))
	require.Subset(t, harnesses, []string{"acme", "claude", "codex", "copilot", "gemini", "mcpjson", "pi", "qwen"}, "profiles under test")
	wasm := map[string][]byte{}
	for _, h := range harnesses {
		b, err := os.ReadFile(testplugins.RendererPath(t, h))
		require.NoError(t, err, "read the %s renderer", h)
		wasm[h] = b
	}
	for engineName, newEngine := range testEngines {
		t.Run(engineName, func(t *testing.T) {
			ctx := context.Background()
			eng, err := newEngine(ctx)
			require.NoError(t, err, "new %s engine", engineName)
			t.Cleanup(func() { _ = eng.Close(context.Background()) })
			for _, harness := range harnesses {
				t.Run(harness, func(t *testing.T) {
					prof := profiles[harness]
					p, err := registry.Load(ctx, eng, registry.Artifact{Name: harness + ".wasm", Wasm: wasm[harness], SHA256: registry.Digest(wasm[harness]), Harness: harness})
					require.NoError(t, err, "load the %s renderer on %s", harness, engineName)
					m := p.Manifest()
					h, err := host.New(ctx, host.Config{
						Plugins: []host.LoadedPlugin{{Plugin: hostile.Wrap(p, prof), Info: host.PluginInfo{Name: m.Name, Harness: m.Harness, SHA256: p.Digest(), Source: "hostile.wasm"},
							Profile: prof}},
						OnClose: func(ctx context.Context) error { return p.Close(ctx) },
					})
					require.NoError(t, err, "host.New")
					t.Cleanup(func() { _ = h.Close(context.Background()) })

					t.Run("isolated", func(t *testing.T) { hostileRun(t, h, hostile.Target{Profile: prof, Manifest: m}) })
					t.Run("ambient", func(t *testing.T) { hostileRun(t, h, hostile.Target{Profile: prof, Manifest: m, Ambient: true}) })
				})
			}
		})
	}
}

// hostileRun renders the faithful plan and every attack that applies to tg through h.
func hostileRun(t *testing.T, h *host.Host, tg hostile.Target) {
	harness := tg.Profile.Harness
	render := func(t *testing.T, attack string) (string, error) {
		ctx := context.Background()
		if attack != "" {
			ctx = hostile.WithAttack(ctx, attack)
		}
		base := t.TempDir()
		roots := host.Roots{Config: filepath.Join(base, "config"), Run: filepath.Join(base, "run"), Checkout: filepath.Join(base, "checkout")}
		require.NoError(t, os.MkdirAll(filepath.Join(roots.Checkout, ".git"), 0o755))
		_, err := h.Render(ctx, host.RenderRequest{Body: hostile.Request(harness, tg.Ambient), Roots: roots})
		return base, err
	}
	t.Run("faithful", func(t *testing.T) {
		base, err := render(t, "")
		require.NoError(t, err, "render with the faithful %s plan", harness)
		_, err = os.Stat(filepath.Join(base, tg.Profile.Config.Root, filepath.FromSlash(tg.Profile.Config.Path)))
		assert.NoError(t, err, "the faithful %s plan writes its config", harness)
	})
	for _, a := range hostile.Attacks() {
		rule := a.Rule(tg)
		if rule == "" {
			continue
		}
		t.Run(a.Name, func(t *testing.T) {
			base, err := render(t, a.Name)
			require.Error(t, err, "%s: render with attack %s", harness, a.Name)
			assert.Equal(t, host.ClassPlugin, host.Classify(err), "%s: Classify(attack %s) (exit 4); error: %v", harness, a.Name, err)
			var rules []string
			for _, v := range plan.Violations(err) {
				rules = append(rules, v.Rule)
			}
			assert.Contains(t, rules, rule, "%s: attack %s: violation rules; error: %v", harness, a.Name, err)
			for _, root := range []string{"config", "run", "checkout"} {
				entries, _ := os.ReadDir(filepath.Join(base, root))
				entries = slices.DeleteFunc(entries, func(e os.DirEntry) bool { return root == "checkout" && e.Name() == ".git" })
				assert.Empty(t, entries, "%s: attack %s: %s root after the refused render", harness, a.Name, root)
			}
		})
	}
}
