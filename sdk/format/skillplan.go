package format

import (
	"fmt"
	"strings"

	"github.com/loadout-dev/loadout/sdk/abi"
)

// Warning codes for skills, shared by every renderer.
const (
	WarnSkillRenamed            = "skill_renamed"
	WarnSkillDescription        = "skill_description_generated"
	WarnSkillDescriptionChanged = "skill_description_changed"
)

// ContextDir is the checkout directory that holds skill files a harness does not discover
// natively; renderers git-exclude it.
const ContextDir = ".cat-context"

const secretPlaceholder = abi.PlaceholderPrefix + "secret."

// PreparedSkill is a skill with the name and description a renderer writes: Dir satisfies
// IsSkillName and is both the directory and the front-matter name; Description is one non-empty
// line of at most MaxSkillDescription characters.
type PreparedSkill struct {
	abi.Skill
	Dir         string
	Description string
}

// PrepareSkills checks that no skill holds a secret placeholder (skill files may land in the
// checkout and skill text in the prompt, where no secret may go; the host never sends one, so
// such a request fails with an *abi.Error of code abi.CodeInvalidInput), then gives every skill
// a conforming, distinct name (SkillNames) and a non-empty one-line description, with one
// warning per change.
func PrepareSkills(skills []abi.Skill) ([]PreparedSkill, []abi.Warning, error) {
	names := make([]string, len(skills))
	for i, sk := range skills {
		texts := []string{sk.Name, sk.Description, sk.Instructions}
		for _, r := range sk.Resources {
			texts = append(texts, r.Path, r.Content)
		}
		for _, s := range texts {
			if strings.Contains(s, secretPlaceholder) {
				return nil, nil, &abi.Error{Code: abi.CodeInvalidInput, Message: fmt.Sprintf("skill %q holds a secret placeholder", sk.Name)}
			}
		}
		names[i] = sk.Name
	}
	dirs := SkillNames(names)
	out := make([]PreparedSkill, len(skills))
	warns := []abi.Warning{}
	for i, sk := range skills {
		p := PreparedSkill{Skill: sk, Dir: dirs[i]}
		if p.Dir != sk.Name {
			warns = append(warns, abi.Warning{Code: WarnSkillRenamed, Skill: sk.Name,
				Message: fmt.Sprintf("skill name %q does not satisfy the portable skill-name rule; rendered as %q", sk.Name, p.Dir)})
		}
		desc, changed := SkillDescription(sk.Description)
		switch {
		case desc == "":
			desc = GeneratedSkillDescription(p.Dir)
			warns = append(warns, abi.Warning{Code: WarnSkillDescription, Skill: sk.Name,
				Message: "skill has no description, which harnesses skip; a generated one is rendered"})
		case changed:
			warns = append(warns, abi.Warning{Code: WarnSkillDescriptionChanged, Skill: sk.Name,
				Message: fmt.Sprintf("skill description was made one line of at most %d characters", MaxSkillDescription)})
		}
		p.Description = desc
		out[i] = p
	}
	return out, warns, nil
}

// SkillMarkdown is the one canonical SKILL.md of a skill: "---\n", "name: " and name, a
// newline, "description: " and description, a newline, "---\n", then instructions as they are
// (text or a blob placeholder). Each value is written by FrontMatter's rule: plain when it is a
// lowercase hyphenated word, else a YAML double-quoted scalar. name is a prepared skill's Dir
// and description its Description. Every renderer writes exactly these bytes and the host's
// plan check compares them byte for byte, so no difference between YAML front-matter readers
// (a "..." end marker, a second document, CR line ends, comments, trailing spaces) can change
// what a harness reads.
func SkillMarkdown(name, description, instructions string) string {
	doc, err := Markdown([]Field{{Key: "name", Value: name}, {Key: "description", Value: description}}, instructions)
	if err != nil { // unreachable: both keys are constant and distinct
		panic("format: SkillMarkdown: " + err.Error())
	}
	return string(doc)
}

// SkillFiles returns the files that install skills natively under root at dir/<name>/: a
// SKILL.md (SkillMarkdown) and every resource, all mode 0644.
func SkillFiles(root, dir string, skills []PreparedSkill) ([]abi.File, error) {
	var files []abi.File
	for _, sk := range skills {
		base := dir + "/" + sk.Dir + "/"
		files = append(files, abi.File{Root: root, Path: base + "SKILL.md", Mode: "0644", Format: abi.FormatMarkdown,
			Content: SkillMarkdown(sk.Dir, sk.Description, sk.Instructions)})
		for _, r := range sk.Resources {
			files = append(files, abi.File{Root: root, Path: base + r.Path, Mode: "0644", Format: abi.FormatText, Content: r.Content})
		}
	}
	return files, nil
}

// PlaceSkills adds skills to plan and prompt the way a harness with a native skills directory
// does: installed under abi.RootConfig at dir/<name>/ (SkillFiles), or, when fold is set (a run
// on the user's own config home, which loadout must not write to), placed in the checkout and
// folded into the prompt (FoldSkills), after a line break when the prompt already has text.
func PlaceSkills(plan *abi.Plan, prompt *strings.Builder, skills []PreparedSkill, fold bool, dir string) error {
	if fold {
		files, folded, exclude := FoldSkills(skills)
		plan.Files = append(plan.Files, files...)
		plan.GitExclude = append(plan.GitExclude, exclude...)
		if folded != "" && prompt.Len() > 0 {
			prompt.WriteString("\n")
		}
		prompt.WriteString(folded)
		return nil
	}
	files, err := SkillFiles(abi.RootConfig, dir, skills)
	if err != nil {
		return err
	}
	plan.Files = append(plan.Files, files...)
	return nil
}

// FoldSkills is the fallback for a harness that cannot install skills natively for this run:
// each skill's resources go under the checkout's ContextDir/skill/<name>/ and its instructions
// into the returned prompt section. gitExclude is ContextDir+"/" when a file was placed, else
// empty.
func FoldSkills(skills []PreparedSkill) (files []abi.File, prompt string, gitExclude []string) {
	if len(skills) == 0 {
		return nil, "", nil
	}
	var b strings.Builder
	b.WriteString("## Skills\n\nFollow these skills when a task calls for them.\n")
	for _, sk := range skills {
		dir := ContextDir + "/skill/" + sk.Dir
		b.WriteString("\n### Skill: " + sk.Dir + "\n\n" + sk.Description + "\n")
		if len(sk.Resources) > 0 {
			b.WriteString("Its files are in " + dir + "/.\n")
		}
		b.WriteString("\n" + sk.Instructions)
		if !strings.HasSuffix(sk.Instructions, "\n") {
			b.WriteString("\n")
		}
		for _, r := range sk.Resources {
			files = append(files, abi.File{Root: abi.RootCheckout, Path: dir + "/" + r.Path, Mode: "0644", Format: abi.FormatText, Content: r.Content})
		}
	}
	if len(files) > 0 {
		gitExclude = []string{ContextDir + "/"}
	}
	return files, b.String(), gitExclude
}

// ToolSummary states which tools of a server may be used, for a renderer's prompt: "all tools",
// "no tools", or "only a, b"; name renders each tool name as the harness shows it.
func ToolSummary(restricted bool, tools []string, name func(tool string) string) string {
	switch {
	case !restricted:
		return "all tools"
	case len(tools) == 0:
		return "no tools"
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = name(t)
	}
	return "only " + strings.Join(names, ", ")
}
