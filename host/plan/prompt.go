package plan

import (
	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
)

// wantPrompt is the prompt a plan must carry for its vetted request: the section naming each
// enabled server the harness config holds and the tools it may use (format.ServersPrompt, each
// tool spelled as the profile's prompt says), then, in a run whose profile folds its skills
// (always, or in an ambient-auth run), the folded skills (format.FoldSkills), after a line
// break. The host defines it and writes it: a plugin may carry it or leave the prompt empty
// (the host then fills it in), and adds nothing, so no instruction or URL of its own reaches
// the agent.
func (c *checker) wantPrompt() string {
	var offered = c.in.Request.Servers[:0:0]
	for _, s := range c.in.Request.Servers {
		if s.Enabled && c.offered[s.ID] {
			offered = append(offered, s)
		}
	}
	name := c.in.Profile.PromptName()
	prompt := format.ServersPrompt(offered, name)
	if c.h.skills.folded(c.in.Request.Run.AmbientAuth) {
		skills, _, err := format.PrepareSkills(c.in.Request.Skills)
		if err != nil { // a vetted skill holds no secret placeholder
			return "\x00"
		}
		_, folded, _ := format.FoldSkills(skills)
		if folded != "" && prompt != "" {
			prompt += "\n"
		}
		prompt += folded
	}
	return prompt
}

// comparePrompt requires the plan's prompt to be, byte for byte, the one the host writes, and
// writes it into p when the plugin left the prompt empty: the agent learns the servers and the
// tools it may use whatever the plugin said.
func (c *checker) comparePrompt(p *abi.Plan) {
	prompt, want := p.Prompt, c.wantPrompt()
	if prompt == "" {
		p.Prompt = want
		return
	}
	if prompt == want {
		return
	}
	at := 0
	for at < len(want) && at < len(prompt) && prompt[at] == want[at] {
		at++
	}
	c.add("", "prompt", RulePrompt, "the prompt is not the one written for the vetted servers, tools and skills (it differs at byte %d)", at)
}
