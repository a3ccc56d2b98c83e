package plan_test

import (
	"encoding/json"
	"path"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/sdk/abi"
)

func FuzzDecode(f *testing.F) {
	for _, p := range []*abi.Plan{claudePlan(), codexPlan(), piPlan()} {
		data, err := json.Marshal(p)
		if err != nil {
			f.Fatalf("json.Marshal(seed plan): %v", err)
		}
		f.Add(data)
	}
	for _, s := range []string{`{"error":{"code":"internal","message":"panic"}}`, `{"files":[{"path":"a","path":"b"}]}`,
		`{"Files":null}`, "{\"prompt\":\"\xff\"}", `[[[[[[`, `{"args":["a"]} trailing`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := plan.Decode(data)
		if (p == nil) == (err == nil) {
			t.Fatalf("Decode(%q) = %v, %v: want exactly one of plan and error", data, p, err)
		}
		if err != nil {
			return
		}
		// A decoded plan re-encodes and decodes to itself.
		again, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("json.Marshal(Decode(%q)): %v", data, err)
		}
		if _, err := plan.Decode(again); err != nil {
			t.Fatalf("Decode(json.Marshal(Decode(%q))) = %v, want nil", data, err)
		}
	})
}

// escapes reports whether p, joined to a root directory, could name anything outside it.
func escapes(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, `\`) || strings.ContainsRune(p, 0) {
		return true
	}
	c := path.Clean(p)
	return c == ".." || strings.HasPrefix(c, "../") || c != p
}

func FuzzCheck(f *testing.F) {
	f.Add("config", "skills/demo/SKILL.md", "0644", "markdown", skillMD, false, "--strict-mcp-config", "")
	f.Add("run", "mcp-servers.json", "0600", "json", claudeConfig, true, "mcp__beta", "CLAUDE_CONFIG_DIR")
	f.Add("checkout", "../x", "0644", "text", "{{loadout.secret.1}}", false, "{{loadout.blob.1}}", "LD_PRELOAD")
	f.Add("checkout", ".cat-context/a/../../b", "0600", "toml", "a = \"{{loadout.root.run}}\"", true, "-c", "A=B")
	f.Add("config", "skills/x\\..\\..\\y", "0644", "json", `{"a":1,"a":2}`, false, "", "")
	f.Add("config", "skills/a.md", "0644", "text", claudeSpawnConfig, false, "", "LOADOUT_SPAWN_DOLLAR")
	f.Add("config", "skills/a.md", "0644", "text", codexSpawnConfig, false, "", "LOADOUT_SPAWN_1")
	f.Add("config", "skills/a.md", "0644", "text", piSpawnConfig, false, "", "")
	f.Add("config", "skills/a.md", "0644", "text", strings.Replace(codexSpawnConfig, "BANG=${LOADOUT_SPAWN_5}", "BANG=${LOADOUT_SPAWN_5} LD_PRELOAD=${LOADOUT_SPAWN_1}", 1), false, "", "")
	f.Fuzz(func(t *testing.T, root, p, mode, format, content string, secret bool, arg, envName string) {
		for _, h := range []string{"claude", "codex", "acme"} {
			pl := claudePlan()
			if h == "codex" {
				pl = codexPlan()
			}
			extra := abi.File{Root: root, Path: p, Mode: mode, Format: format, Content: content, Secret: secret}
			pl.Files = append(pl.Files, extra)
			pl.Args = append(pl.Args, arg)
			pl.Env = append(pl.Env, abi.Pair{Name: envName, Value: arg})
			pl.GitExclude = append(pl.GitExclude, p)
			err := checkPlan(pl, input(h))
			if err == nil && escapes(p) {
				t.Fatalf("Check(%s plan with file %q under %q) = nil, want a path violation", h, p, root)
			}
			if err == nil && !plan.ValidPath(root, p) {
				t.Fatalf("Check(%s plan with file %q under %q) = nil, but ValidPath is false", h, p, root)
			}
			if err == nil && root == abi.RootCheckout && (secret || strings.Contains(content, "{{loadout.secret.")) {
				t.Fatalf("Check(%s plan with secret content in checkout file %q) = nil", h, p)
			}
			if err == nil && (strings.Contains(arg, "{{loadout.secret.") || strings.Contains(arg, "{{loadout.blob.")) {
				t.Fatalf("Check(%s plan with arg %q) = nil, want a placement violation", h, arg)
			}
		}
		// The content as a built-in harness's config, against the wrapper fixtures' request:
		// whatever it holds, Check never lets an unvetted program or variable through.
		for _, h := range []string{"claude", "codex", "pi"} {
			pl := spawnPlan(h)
			pl.Files[0].Content = content
			err := checkPlan(pl, spawnInput(h))
			if err != nil {
				continue
			}
			for _, bad := range []string{"LD_PRELOAD", "/bin/sh"} {
				if strings.Contains(content, bad) {
					t.Fatalf("Check(%s config %q) = nil, but it holds %q", h, content, bad)
				}
			}
			for _, secret := range []string{secretKey, secretBeta} {
				if n := strings.Count(content, secret); n > 1 {
					t.Fatalf("Check(%s config %q) = nil, but secret %s is in it %d times; it has one vetted place", h, content, secret, n)
				}
			}
		}
	})
}
