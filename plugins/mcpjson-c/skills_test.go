package mcpjsonc_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
)

// TestSkillsAreCanonical holds the C renderer's skill files and warnings to the Go SDK's
// (format.PrepareSkills, format.SkillFiles), byte for byte: the host accepts only the canonical
// SKILL.md, whatever language wrote it. The names and descriptions exercise every rule: renames,
// collisions and suffixes, the length caps, YAML keywords, quoting and escapes, controls,
// Unicode line breaks and spaces, and a generated description.
func TestSkillsAreCanonical(t *testing.T) {
	p := instantiate(t, build(t))
	long := strings.Repeat("ab-", 30)
	skills := []abi.Skill{
		{Name: "review", Description: "Reviews the diff", Instructions: "{{loadout.blob.1}}",
			Resources: []abi.Resource{{Path: "checklist.md", Content: "- [ ] tests\n"}, {Path: "ref/a b.txt", Content: "x\"y\\"}}},
		{Name: "Review", Description: "", Instructions: "{{loadout.blob.2}}"},
		{Name: "REVIEW", Description: "  \t spaced \u00a0\u3000", Instructions: "plain"},
		{Name: "yes", Description: "no", Instructions: "i"},
		{Name: "my_skill.v2", Description: "line one\nline two\r\u2028three\u0085four\x7f", Instructions: "i"},
		{Name: long, Description: strings.Repeat("é", 1100), Instructions: "i"},
		{Name: long + "x", Description: `quote " back \ tab` + "\t" + `bom ` + "\ufeff" + ` nel`, Instructions: "i"},
		{Name: "---", Description: "--- \n...\n# comment", Instructions: "---\nname: x\n---\n"},
		{Name: "skill", Description: "true", Instructions: "i"},
		{Name: "日本", Description: "日本語の説明 😀", Instructions: "i"},
		{Name: "a", Description: "lower-case-word", Instructions: "i"},
	}
	plan, rerr := p.renderRequest(t, abi.Request{ABIVersion: abi.Version, Harness: "mcpjson", Skills: skills})
	require.Nil(t, rerr, "render returned an error")

	prepared, warns, err := format.PrepareSkills(skills)
	require.NoError(t, err, "format.PrepareSkills")
	want, err := format.SkillFiles(abi.RootConfig, "skills", prepared)
	require.NoError(t, err, "format.SkillFiles")
	require.Len(t, plan.Files, 1+len(want), "files: mcp.json and the skills'")
	for i, w := range want {
		assert.Equal(t, w, plan.Files[1+i], "skill file %d (%s)", i, w.Path)
	}
	var got, wantCodes []string
	for _, w := range plan.Warnings {
		got = append(got, w.Code+"/"+w.Skill)
	}
	for _, w := range warns {
		wantCodes = append(wantCodes, w.Code+"/"+w.Skill)
	}
	assert.Equal(t, wantCodes, got, "skill warnings, in order")
}

// TestSkillWithSecretRefused: skill files and text may land where no secret may, so a skill
// holding a secret placeholder is refused as the Go SDK refuses it.
func TestSkillWithSecretRefused(t *testing.T) {
	p := instantiate(t, build(t))
	for _, sk := range []abi.Skill{
		{Name: "s", Instructions: "{{loadout.secret.1}}"},
		{Name: "s", Description: "{{loadout.secret.1}}", Instructions: "i"},
		{Name: "s", Instructions: "i", Resources: []abi.Resource{{Path: "r", Content: "{{loadout.secret.1}}"}}},
	} {
		_, _, goErr := format.PrepareSkills([]abi.Skill{sk})
		require.Error(t, goErr, "the Go SDK refuses %+v", sk)
		_, rerr := p.renderRequest(t, abi.Request{ABIVersion: abi.Version, Harness: "mcpjson", Skills: []abi.Skill{sk}})
		require.NotNil(t, rerr, "render(%+v) must fail", sk)
		assert.Equal(t, abi.CodeInvalidInput, rerr.Code, "error code for %+v", sk)
	}
}
