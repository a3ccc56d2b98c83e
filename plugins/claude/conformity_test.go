package main

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/conformity"
	"github.com/loadout-dev/loadout/conformity/conformitytest"
	"github.com/loadout-dev/loadout/plugins/claude/render"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// TestConformity runs the whole conformity corpus on this renderer natively, through the sdk's
// wire path, with the same checks the suite applies to the WebAssembly build.
func TestConformity(t *testing.T) { conformitytest.RunNative(t, render.Manifest, render.Render) }

// TestConformityCatchesSkillFaults runs the corpus on faulty variants of this renderer whose
// plans the host's plan check accepts, and checks that the suite's read-back catches them.
func TestConformityCatchesSkillFaults(t *testing.T) {
	dir := "../../" + conformitytest.CasesDir
	tests := []struct {
		name   string
		mutate func(p *abi.Plan)
		want   string
	}{
		{"resource contents swapped", func(p *abi.Plan) {
			var res []int
			for i, f := range p.Files {
				if f.Root == abi.RootConfig && strings.HasPrefix(f.Path, "skills/") && !strings.HasSuffix(f.Path, "/SKILL.md") {
					res = append(res, i)
				}
			}
			if len(res) >= 2 {
				a, b := res[0], res[1]
				p.Files[a].Content, p.Files[b].Content = p.Files[b].Content, p.Files[a].Content
			}
		}, "differs from the vetted content"},
		{"description replaced", func(p *abi.Plan) {
			for i, f := range p.Files {
				if strings.HasSuffix(f.Path, "/SKILL.md") {
					head, rest, _ := strings.Cut(f.Content, "\ndescription: ")
					_, tail, _ := strings.Cut(rest, "\n")
					p.Files[i].Content = head + "\ndescription: A different description\n" + tail
				}
			}
		}, "is not the canonical rendering of its vetted name, description and instructions"}, // the plan check refuses it before the read-back
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			faulty := func(req abi.Request) (abi.Plan, error) {
				p, err := render.Render(req)
				if err == nil {
					tc.mutate(&p)
				}
				return p, err
			}
			tg, err := conformity.Native(render.Manifest, faulty)
			require.NoError(t, err, "conformity.Native(faulty %s)", render.Manifest.Name)
			rep, err := conformity.Run(context.Background(), conformity.Config{CaseDirs: []string{dir}, Targets: []conformity.Target{tg}, TempDir: t.TempDir()})
			require.NoError(t, err, "conformity.Run(%s)", dir)
			var reasons []string
			for _, r := range rep.Failed() {
				reasons = append(reasons, r.Failures...)
			}
			assert.False(t, rep.OK(), "conformity.Run with %s: want failures", tc.name)
			assert.Contains(t, strings.Join(reasons, "\n"), tc.want, "conformity.Run with %s: failures", tc.name)
		})
	}
}
