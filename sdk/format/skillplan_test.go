package format

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/sdk/abi"
)

func TestPrepareSkills(t *testing.T) {
	t.Parallel()
	got, warns, err := PrepareSkills([]abi.Skill{
		{Name: "ok", Description: "Fine.", Instructions: "x"},
		{Name: "Bad_Name", Description: "", Instructions: "y"},
		{Name: "multi", Description: "a\nb", Instructions: "z"},
	})
	require.NoError(t, err, "PrepareSkills")
	require.Len(t, got, 3, "PrepareSkills keeps every skill")
	assert.Equal(t, []string{"ok", "bad-name", "multi"}, []string{got[0].Dir, got[1].Dir, got[2].Dir}, "directories")
	assert.Equal(t, []string{"Fine.", GeneratedSkillDescription("bad-name"), "a b"}, []string{got[0].Description, got[1].Description, got[2].Description}, "descriptions")
	var codes []string
	for _, w := range warns {
		codes = append(codes, w.Skill+":"+w.Code)
	}
	assert.Equal(t, []string{"Bad_Name:" + WarnSkillRenamed, "Bad_Name:" + WarnSkillDescription, "multi:" + WarnSkillDescriptionChanged}, codes, "warnings")
}

func TestPrepareSkillsRefusesSecrets(t *testing.T) {
	t.Parallel()
	for _, sk := range []abi.Skill{
		{Name: "a", Instructions: "{{loadout.secret.1}}"},
		{Name: "a", Description: "x {{loadout.secret.2}}", Instructions: "i"},
		{Name: "a", Instructions: "i", Resources: []abi.Resource{{Path: "r", Content: "{{loadout.secret.3}}"}}},
	} {
		_, _, err := PrepareSkills([]abi.Skill{sk})
		var e *abi.Error
		require.ErrorAs(t, err, &e, "PrepareSkills(%+v) must fail", sk)
		assert.Equal(t, abi.CodeInvalidInput, e.Code, "PrepareSkills(%+v) error code", sk)
	}
}

func TestSkillFilesAndFold(t *testing.T) {
	t.Parallel()
	skills, _, err := PrepareSkills([]abi.Skill{
		{Name: "s", Description: "D", Instructions: "{{loadout.blob.1}}", Resources: []abi.Resource{{Path: "a/b.md", Content: "B"}}},
		{Name: "t", Description: "E", Instructions: "do\n"},
	})
	require.NoError(t, err, "PrepareSkills")
	files, err := SkillFiles(abi.RootConfig, "skills", skills)
	require.NoError(t, err, "SkillFiles")
	assert.Equal(t, []abi.File{
		{Root: "config", Path: "skills/s/SKILL.md", Mode: "0644", Format: "markdown", Content: "---\nname: s\ndescription: \"D\"\n---\n{{loadout.blob.1}}"},
		{Root: "config", Path: "skills/s/a/b.md", Mode: "0644", Format: "text", Content: "B"},
		{Root: "config", Path: "skills/t/SKILL.md", Mode: "0644", Format: "markdown", Content: "---\nname: t\ndescription: \"E\"\n---\ndo\n"},
	}, files, "SkillFiles")

	files, prompt, exclude := FoldSkills(skills)
	assert.Equal(t, []abi.File{{Root: "checkout", Path: ".cat-context/skill/s/a/b.md", Mode: "0644", Format: "text", Content: "B"}}, files, "FoldSkills files")
	assert.Equal(t, []string{".cat-context/"}, exclude, "FoldSkills gitExclude")
	assert.True(t, strings.Contains(prompt, "### Skill: s\n\nD\nIts files are in .cat-context/skill/s/.\n\n{{loadout.blob.1}}\n"), "FoldSkills prompt:\n%s", prompt)
	assert.True(t, strings.HasSuffix(prompt, "### Skill: t\n\nE\n\ndo\n"), "FoldSkills prompt:\n%s", prompt)

	files, prompt, exclude = FoldSkills(nil)
	assert.Empty(t, files, "FoldSkills(nil) files")
	assert.Empty(t, prompt, "FoldSkills(nil) prompt")
	assert.Empty(t, exclude, "FoldSkills(nil) gitExclude")
}

func TestToolSummary(t *testing.T) {
	t.Parallel()
	id := func(s string) string { return s }
	assert.Equal(t, "all tools", ToolSummary(false, []string{"x"}, id), "unrestricted")
	assert.Equal(t, "no tools", ToolSummary(true, nil, id), "restricted to nothing")
	assert.Equal(t, "only a, b", ToolSummary(true, []string{"a", "b"}, id), "restricted")
}

func TestPlaceSkills(t *testing.T) {
	t.Parallel()
	skills, _, err := PrepareSkills([]abi.Skill{{Name: "review", Description: "Reviews.", Instructions: "Read the diff.",
		Resources: []abi.Resource{{Path: "notes.md", Content: "n"}}}})
	require.NoError(t, err, "PrepareSkills")

	var native abi.Plan
	var prompt strings.Builder
	prompt.WriteString("servers")
	require.NoError(t, PlaceSkills(&native, &prompt, skills, false, "skills"), "PlaceSkills(native)")
	var paths []string
	for _, f := range native.Files {
		assert.Equal(t, abi.RootConfig, f.Root, "native skill file %s root", f.Path)
		paths = append(paths, f.Path)
	}
	assert.Equal(t, []string{"skills/review/SKILL.md", "skills/review/notes.md"}, paths, "native skill files")
	assert.Equal(t, "servers", prompt.String(), "a native placement leaves the prompt alone")
	assert.Empty(t, native.GitExclude, "a native placement excludes nothing")

	var folded abi.Plan
	require.NoError(t, PlaceSkills(&folded, &prompt, skills, true, "skills"), "PlaceSkills(fold)")
	require.Len(t, folded.Files, 1, "a folded skill places its resource only")
	assert.Equal(t, abi.RootCheckout, folded.Files[0].Root, "folded resource root")
	assert.Equal(t, []string{ContextDir + "/"}, folded.GitExclude, "folded resources are git-excluded")
	assert.True(t, strings.HasPrefix(prompt.String(), "servers\n## Skills\n"), "the folded section follows the prompt after a line break: %q", prompt.String())
	assert.Contains(t, prompt.String(), "Read the diff.", "the instructions are in the prompt")

	var empty abi.Plan
	var none strings.Builder
	require.NoError(t, PlaceSkills(&empty, &none, nil, true, "skills"), "PlaceSkills(no skills)")
	assert.Empty(t, none.String(), "no skills, no prompt section")
}
