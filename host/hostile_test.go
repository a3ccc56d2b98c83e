package host_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/host/registry"
	"github.com/loadout-dev/loadout/internal/testplugins"
	"github.com/loadout-dev/loadout/internal/testplugins/hostile/tamper"
	"github.com/loadout-dev/loadout/plugins"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// hostileRequest has a restricted http server with a secret header and a header full of
// dollars, a stdio server with a secret env entry, a description and a timeout, a server the
// policy drops (plain http to a remote host), and a skill with a resource, so that every attack
// has something to tamper with. The run's user names the attack.
func hostileRequest(harness, user string, ambient bool) []byte {
	return []byte(`{"harness":"` + harness + `","run":{"ambientAuth":` + strconv.FormatBool(ambient) + `,"user":"` + user + `"},` +
		`"skills":[{"name":"repo-review","description":"Review the repository","instructions":"Read the diff and report.",` +
		`"resources":[{"relPath":"checklist.md","content":"- [ ] tests"}]}],` +
		`"mcpServers":[` +
		`{"id":"docs","transport":"http","url":"https://mcp.example.com/mcp",` +
		`"headers":{"Authorization":"Bearer s3cr3t-hostile-9d1e","X-Trace":"t-${GEMINI_API_KEY}-$OPENAI_API_KEY"},` +
		`"secretKeys":["Authorization"],"allowedTools":["search"],` +
		`"oauth":{"clientId":"loadout-hostile","callbackPort":8765,"scopes":["docs:read"],"authServerMetadataUrl":"https://auth.example.com/meta"}},` +
		`{"id":"fs","command":"/usr/bin/mcp-fs","args":["--root","."],"env":{"FS_TOKEN":"fs-tok-hostile-77aa"},` +
		`"secretKeys":["FS_TOKEN"],"description":"Local files","timeout":30},` +
		`{"id":"plain-http","transport":"http","url":"http://mcp.evil.example/mcp"}]}`)
}

// target is what an attack is tried on: a profile, the hostile plugin's manifest, and whether
// the run uses ambient auth.
type target struct {
	p       *plan.Profile
	m       abi.Manifest
	ambient bool
}

// expectation is the rule an attack must be refused by on a target, or "" when the attack does
// not apply to it (the harness has no such thing to tamper with).
type expectation func(t target) string

func always(rule string) expectation { return func(target) string { return rule } }

func when(cond func(t target) bool, rule string) expectation {
	return func(t target) string {
		if cond(t) {
			return rule
		}
		return ""
	}
}

// either is rule a on a target that meets cond, rule b on any other.
func either(cond func(t target) bool, a, b string) expectation {
	return func(t target) string {
		if cond(t) {
			return a
		}
		return b
	}
}

// inCheckout is rule on a plugin that declares the checkout root; one that does not may not
// write there at all.
func inCheckout(rule string) expectation {
	return either(func(t target) bool { return slices.Contains(t.m.Roots, abi.RootCheckout) }, rule, plan.RuleRoot)
}

// contextFile is the rule a file under the checkout's context directory breaks: a plugin
// without the checkout root may not write there at all, a profile without checkout paths lists
// no such file, and any other refuses every file there but a folded skill's.
func contextFile(t target) string {
	switch {
	case !slices.Contains(t.m.Roots, abi.RootCheckout):
		return plan.RuleRoot
	case !slices.ContainsFunc(t.p.Paths, func(r plan.ProfilePath) bool { return r.Root == abi.RootCheckout }):
		return plan.RulePathNotAllowed
	}
	return plan.RuleSkill
}

func spawns(t target) bool    { return t.p.Spawn != "" }
func hasSkills(t target) bool { return t.p.Skills != nil }
func expands(t target) bool   { return t.p.Expands() }

// skillMD: the run installs SKILL.md files (it does not fold the skills into the prompt).
func skillMD(t target) bool { return hasSkills(t) && !(t.p.Skills.Folds && t.ambient) }

func hasKey(meaning string) func(t target) bool {
	return func(t target) bool {
		for _, m := range t.p.Config.ServerKeys {
			if m == meaning {
				return true
			}
		}
		return false
	}
}

// oauthKey: the harness's OAuth object has a key meaning meaning.
func oauthKey(meaning string) func(t target) bool {
	return func(t target) bool {
		for _, m := range t.p.Config.OAuthKeys {
			if m == meaning {
				return true
			}
		}
		return false
	}
}

// grantsBuiltins: the harness pre-approves its own tools in a tools argument (tools.builtin).
func grantsBuiltins(t target) bool { return len(t.p.Tools.Builtin) > 0 }

func claudeArgs(t target) bool {
	return slices.ContainsFunc(t.p.Args, func(a plan.ProfileArg) bool { return a.Flag == "--mcp-config" })
}

// hostileAttacks lists every attack of the tamper package with the rule that must refuse it.
var hostileAttacks = map[string]expectation{
	"added-server":               always(plan.RuleServerSet),
	"dropped-server":             always(plan.RuleServerSet),
	"server-omitted":             always(plan.RuleServerSet),
	"command-wrapped":            either(spawns, plan.RuleSpawnWrapper, plan.RuleServerMismatch),
	"url-replaced":               always(plan.RuleServerMismatch),
	"oauth-client-swapped":       when(func(t target) bool { return oauthKey("clientId")(t) || hasKey("oauthClientId")(t) }, plan.RuleServerMismatch),
	"oauth-metadata-swapped":     when(oauthKey("authServerMetadataUrl"), plan.RuleServerMismatch),
	"oauth-scope-widened":        when(func(t target) bool { return oauthKey("scopes")(t) || hasKey("oauthScopes")(t) }, plan.RuleServerMismatch),
	"oauth-dropped":              always(plan.RuleServerMismatch),
	"url-proxied":                always(plan.RuleServerMismatch),
	"secrets-to-remote":          always(plan.RuleSecretPlacement),
	"secret-on-command-line":     always(plan.RuleSecretPlacement),
	"secret-in-harness-args":     always(plan.RuleSecretPlacement),
	"secret-in-prompt":           always(plan.RuleSecretPlacement),
	"prompt-instructions":        always(plan.RulePrompt),
	"expand-header":              when(expands, plan.RuleServerMismatch),
	"description-injected":       when(hasKey("description"), plan.RuleServerMismatch),
	"timeout-note":               when(hasKey("timeout"), plan.RuleServerMismatch),
	"timeout-bound":              when(hasKey("timeout"), plan.RuleServerMismatch),
	"tools-widened":              always(plan.RuleToolRestrictions),
	"tools-ignored":              always(plan.RuleToolRestrictions),
	"builtin-tools-granted":      when(grantsBuiltins, plan.RuleToolRestrictions),
	"env-config-home":            always(plan.RuleEnv),
	"env-trust-all":              always(plan.RuleEnv),
	"env-base-url":               always(plan.RuleEnv),
	"env-system-prompt":          always(plan.RuleEnv),
	"env-preload":                always(plan.RuleEnv),
	"arg-yes":                    always(plan.RuleArg),
	"arg-yolo":                   always(plan.RuleArg),
	"arg-include-root":           always(plan.RuleArg),
	"arg-skip-permissions":       always(plan.RuleArg),
	"trust-key":                  always(plan.RuleConfigKey),
	"unwrapped-server":           when(spawns, plan.RuleSpawnWrapper),
	"env-passthrough":            when(hasKey("envPassthrough"), plan.RuleSpawnWrapper),
	"duplicate-key":              always(plan.RuleContent),
	"secret-file-world-readable": always(plan.RuleMode),
	"secret-file-unmarked":       always(plan.RuleSecretPlacement),
	"skill-allowed-tools":        when(skillMD, plan.RuleSkill),
	"skill-hooks":                when(skillMD, plan.RuleSkill),
	"skill-document-end":         when(skillMD, plan.RuleSkill),
	"skill-cr-line-end":          when(skillMD, plan.RuleSkill),
	"skill-comment":              when(skillMD, plan.RuleSkill),
	"skill-resource-changed":     when(hasSkills, plan.RuleSkill),
	"skill-dropped":              when(hasSkills, plan.RuleSkill),
	"secrets-copied-to-checkout": inCheckout(plan.RuleSecretFile),
	"checkout-instructions":      inCheckout(plan.RulePathNotAllowed),
	"context-note":               contextFile,
	"file-outside":               always(plan.RulePathNotAllowed),
	"second-mcp-config":          when(claudeArgs, plan.RuleArg),
	"inline-mcp-config":          when(claudeArgs, plan.RuleArg),
	"no-strict-mcp-config":       when(claudeArgs, plan.RuleArg),
	"shell-prefix":               always(plan.RuleEnv),
}

// TestHostileAttacksListed keeps the table above and the tamper package's attacks in step.
func TestHostileAttacksListed(t *testing.T) {
	for name := range tamper.Attacks {
		_, ok := hostileAttacks[name]
		assert.True(t, ok, "attack %s of package tamper has no expectation", name)
	}
	for name := range hostileAttacks {
		_, ok := tamper.Attacks[name]
		assert.True(t, ok, "expectation %s names no attack of package tamper", name)
	}
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

// TestHostilePlans pins, for every profile, a hostile plugin of that harness as a third party
// would (a real renderer wrapped by package tamper, built to WebAssembly once) and renders one
// request per attack through the whole pipeline on every engine, in an isolated and an
// ambient-auth run: each must fail as a plugin failure (exit 4) naming the rule that refuses it,
// with nothing written; the faithful plan must pass.
func TestHostilePlans(t *testing.T) {
	profiles := hostileProfiles(t)
	harnesses := slices.Sorted(maps.Keys(profiles))
	require.Subset(t, harnesses, []string{"acme", "claude", "codex", "copilot", "gemini", "mcpjson", "pi"}, "profiles under test")
	attacks := slices.Sorted(maps.Keys(hostileAttacks))
	wasm := map[string][]byte{}
	for _, h := range harnesses {
		b, err := os.ReadFile(testplugins.HostilePath(t, h))
		require.NoError(t, err, "read the hostile %s plugin", h)
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
					p, err := registry.Load(ctx, eng, registry.Artifact{Name: "hostile-" + harness + ".wasm", Wasm: wasm[harness], SHA256: registry.Digest(wasm[harness]), Harness: harness})
					require.NoError(t, err, "load the hostile %s plugin on %s", harness, engineName)
					m := p.Manifest()
					h, err := host.New(ctx, host.Config{
						Plugins: []host.LoadedPlugin{{Plugin: p, Info: host.PluginInfo{Name: m.Name, Harness: m.Harness, SHA256: p.Digest(), Source: "hostile.wasm"},
							Profile: prof}},
						OnClose: func(ctx context.Context) error { return p.Close(ctx) },
					})
					require.NoError(t, err, "host.New")
					t.Cleanup(func() { _ = h.Close(context.Background()) })

					t.Run("isolated", func(t *testing.T) { hostileRun(t, h, target{p: prof, m: m}, attacks) })
					t.Run("ambient", func(t *testing.T) { hostileRun(t, h, target{p: prof, m: m, ambient: true}, attacks) })
				})
			}
		})
	}
}

// hostileRun renders the faithful plan and every attack that applies to tg through h.
func hostileRun(t *testing.T, h *host.Host, tg target, attacks []string) {
	ctx := context.Background()
	harness := tg.p.Harness
	render := func(t *testing.T, user string) (string, error) {
		base := t.TempDir()
		roots := host.Roots{Config: filepath.Join(base, "config"), Run: filepath.Join(base, "run"), Checkout: filepath.Join(base, "checkout")}
		require.NoError(t, os.MkdirAll(filepath.Join(roots.Checkout, ".git"), 0o755))
		_, err := h.Render(ctx, host.RenderRequest{Body: hostileRequest(harness, user, tg.ambient), Roots: roots})
		return base, err
	}
	t.Run("faithful", func(t *testing.T) {
		base, err := render(t, "alice")
		require.NoError(t, err, "render with the faithful %s plan", harness)
		_, err = os.Stat(filepath.Join(base, tg.p.Config.Root, filepath.FromSlash(tg.p.Config.Path)))
		assert.NoError(t, err, "the faithful %s plan writes its config", harness)
	})
	for _, name := range attacks {
		rule := hostileAttacks[name](tg)
		if rule == "" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			base, err := render(t, "attack-"+name)
			require.Error(t, err, "%s: render with attack %s", harness, name)
			assert.Equal(t, host.ClassPlugin, host.Classify(err), "%s: Classify(attack %s) (exit 4); error: %v", harness, name, err)
			var rules []string
			for _, v := range plan.Violations(err) {
				rules = append(rules, v.Rule)
			}
			assert.Contains(t, rules, rule, "%s: attack %s: violation rules; error: %v", harness, name, err)
			for _, root := range []string{"config", "run", "checkout"} {
				entries, _ := os.ReadDir(filepath.Join(base, root))
				entries = slices.DeleteFunc(entries, func(e os.DirEntry) bool { return root == "checkout" && e.Name() == ".git" })
				assert.Empty(t, entries, "%s: attack %s: %s root after the refused render", harness, name, root)
			}
		})
	}
}
