package main

import (
	"fmt"
	"os"
	"path"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/plan"
)

// The render text output says what a plugin actually produced, read back from the files
// rather than from the request: which MCP servers the harness's config file holds, read through
// the harness's profile with the plan check's own reader (sdk/profile/readback, through
// plan.Profile.ConfigServers, which words a violation as the plan check does), and which skills
// each directory holds.

// fileContent is what was written to f, or on a dry run what would be (secrets masked).
func fileContent(f host.FileResult) (string, bool) {
	if f.Written != "" {
		b, err := os.ReadFile(f.Written)
		if err != nil {
			return "", false
		}
		return string(b), true
	}
	return f.Content, f.Content != ""
}

// configServers is the line naming the servers config file f holds, read through prof, or ""
// when f is not prof's config or its content is not at hand.
func configServers(prof *plan.Profile, f host.FileResult) string {
	if !prof.IsConfig(f.Root, f.Path) {
		return ""
	}
	content, ok := fileContent(f)
	if !ok {
		return ""
	}
	ids, err := prof.ConfigServers(content)
	if err != nil {
		return fmt.Sprintf("%s: does not read back as %s's config: %v", prof.Config.Servers, prof.Harness, err)
	}
	return fmt.Sprintf("%s: %s", prof.Config.Servers, listOrNone(ids))
}

// skillDir is one directory of installed skills.
type skillDir struct {
	where  string // root:dir/
	skills []string
}

// skillDirs groups the plan's SKILL.md files by the directory holding their skill directories,
// in plan order.
func skillDirs(files []host.FileResult) []skillDir {
	var out []skillDir
	index := map[string]int{}
	for _, f := range files {
		if path.Base(f.Path) != "SKILL.md" {
			continue
		}
		skill := path.Dir(f.Path)
		where := fmt.Sprintf("%s:%s/", f.Root, path.Dir(skill))
		if path.Dir(skill) == "." {
			where = f.Root + ":"
		}
		i, ok := index[where]
		if !ok {
			i = len(out)
			index[where] = i
			out = append(out, skillDir{where: where})
		}
		out[i].skills = append(out[i].skills, path.Base(skill))
	}
	return out
}
