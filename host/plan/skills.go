package plan

import (
	"strings"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
)

// skillsLayout is where a harness installs skills: natively under the config root at
// dir/<name>/ (a SKILL.md and the resources), or, when folds is set and the run uses ambient
// auth (loadout must not write the user's own config home), or always is set (the CLI reads no
// skills in the mode it is run in), with the resources under the checkout's context directory
// and the instructions in the prompt.
type skillsLayout struct {
	dir    string
	folds  bool
	always bool
}

// folded reports whether a run's skills are folded; l may be nil (no skills).
func (l *skillsLayout) folded(ambient bool) bool {
	return l != nil && (l.always || l.folds && ambient)
}

// skillArea is one directory a skill's files live in, as the plan must render it.
type skillArea struct {
	skill abi.Skill
	dir   string // the skill's directory name (format.SkillNames)
	root  string
	base  string // path prefix of the skill's files, ending in "/"
	desc  string // the description SKILL.md must carry
}

// checkSkills compares the skills the plan renders with the vetted ones: every vetted skill is
// rendered, its SKILL.md is the canonical document of its name, description and instructions
// (format.SkillMarkdown), every resource has its vetted content, and nothing else is written in a skill's
// directory or in the skills directory. The names and descriptions are those sdk/format
// defines for every renderer (format.SkillNames, format.SkillDescription).
func (c *checker) checkSkills(p *abi.Plan) {
	l := c.h.skills
	folded := l.folded(c.in.Request.Run.AmbientAuth)
	c.checkContextDir(p, folded)
	if l == nil {
		return
	}
	names := make([]string, len(c.in.Request.Skills))
	for i, sk := range c.in.Request.Skills {
		names[i] = sk.Name
	}
	dirs := format.SkillNames(names)
	areas := make([]skillArea, len(c.in.Request.Skills))
	for i, sk := range c.in.Request.Skills {
		a := skillArea{skill: sk, dir: dirs[i], root: abi.RootConfig, base: l.dir + "/" + dirs[i] + "/"}
		if folded {
			a.root, a.base = abi.RootCheckout, CheckoutContextDir+"/skill/"+dirs[i]+"/"
		}
		a.desc, _ = format.SkillDescription(sk.Description)
		if a.desc == "" {
			a.desc = format.GeneratedSkillDescription(a.dir)
		}
		areas[i] = a
	}
	seen := map[string]bool{}
	for _, f := range p.Files {
		name := f.Root + ":" + f.Path
		inSkills := (f.Root == abi.RootConfig && l.dir != "" && strings.HasPrefix(f.Path, l.dir+"/")) ||
			(f.Root == abi.RootCheckout && strings.HasPrefix(f.Path, CheckoutContextDir+"/skill/"))
		if !inSkills {
			continue
		}
		a, ok := findArea(areas, f.Root, f.Path)
		if !ok {
			c.add(name, "path", RuleSkill, "no vetted skill is rendered at %s", truncate(f.Path, 128))
			continue
		}
		rel := strings.TrimPrefix(f.Path, a.base)
		seen[name] = true
		if rel == "SKILL.md" && !folded {
			c.compareSkillMD(name, f, a)
			continue
		}
		i := -1
		for j, r := range a.skill.Resources {
			if r.Path == rel {
				i = j
				break
			}
		}
		switch {
		case i < 0:
			c.add(name, "path", RuleSkill, "%s is not a resource of vetted skill %q", truncate(rel, 128), a.skill.Name)
		case f.Content != a.skill.Resources[i].Content:
			c.add(name, "content", RuleSkill, "resource %s of skill %q differs from the vetted content", rel, a.skill.Name)
		}
	}
	for _, a := range areas {
		if folded {
			if !strings.Contains(p.Prompt, a.skill.Instructions) {
				c.add("", "prompt", RuleSkill, "the prompt does not hold the instructions of vetted skill %q", a.skill.Name)
			}
		} else if !seen[a.root+":"+a.base+"SKILL.md"] {
			c.add(a.root+":"+a.base+"SKILL.md", "", RuleSkill, "vetted skill %q is not rendered", a.skill.Name)
		}
		for _, r := range a.skill.Resources {
			if !seen[a.root+":"+a.base+r.Path] {
				c.add(a.root+":"+a.base+r.Path, "", RuleSkill, "resource %s of vetted skill %q is not rendered", r.Path, a.skill.Name)
			}
		}
	}
}

// checkContextDir refuses every file under the checkout's context directory but the folded
// skills' resources (compared with the vetted content by checkSkills): an agent reads the
// checkout, so nothing else a plugin writes may wait for it there.
func (c *checker) checkContextDir(p *abi.Plan, folded bool) {
	for _, f := range p.Files {
		if f.Root != abi.RootCheckout || !strings.HasPrefix(f.Path, CheckoutContextDir+"/") {
			continue
		}
		if !folded || !strings.HasPrefix(f.Path, CheckoutContextDir+"/skill/") {
			c.add(f.Root+":"+f.Path, "path", RuleSkill, "only the resources of the skills folded into the prompt may be written under %s/", CheckoutContextDir)
		}
	}
}

func findArea(areas []skillArea, root, p string) (skillArea, bool) {
	for _, a := range areas {
		if a.root == root && strings.HasPrefix(p, a.base) {
			return a, true
		}
	}
	return skillArea{}, false
}

// compareSkillMD checks one SKILL.md: it must be, byte for byte, the canonical rendering of
// the vetted name, description and instructions (format.SkillMarkdown), so that no key a
// harness would act on (allowed-tools, hooks), no second document, "..." end marker, comment,
// CR or trailing space can make a harness read something the host did not.
func (c *checker) compareSkillMD(name string, f abi.File, a skillArea) {
	if f.Format != abi.FormatMarkdown {
		c.add(name, "format", RuleSkill, "SKILL.md has format %q, want markdown", truncate(f.Format, 16))
		return
	}
	want := format.SkillMarkdown(a.dir, a.desc, a.skill.Instructions)
	if f.Content == want {
		return
	}
	at := 0
	for at < len(want) && at < len(f.Content) && f.Content[at] == want[at] {
		at++
	}
	line := 1 + strings.Count(f.Content[:at], "\n")
	c.add(name, "content", RuleSkill, "SKILL.md of skill %q is not the canonical rendering of its vetted name, description and instructions (it differs at line %d, byte %d)", a.skill.Name, line, at)
}
