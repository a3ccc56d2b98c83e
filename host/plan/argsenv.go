package plan

import (
	"slices"
	"strconv"
	"strings"

	"github.com/loadout-dev/loadout/sdk/abi"
)

// The args and env a plugin returns go straight onto the harness's command line and into its
// environment, so the harness's profile lists exactly what a plugin may return there (its args
// and env, docs/PROFILES.md §1): an allowlist of flags with the exact shape of their values,
// and of env names, each with its only value and the runs it belongs in. Anything else is
// refused; a required entry that is missing is a violation too. A profile that lists no args
// (or no env) allows none, and a plan checked without a profile gets neither.

// argValue is the shape of the values a flag takes.
type argValue int

const (
	// argNone: the flag stands alone.
	argNone argValue = iota
	// argPinned: exactly one value, equal to argRule.pinned.
	argPinned
	// argTools: one or more tool rules (the tools flag of a tools.in args profile), each
	// checked against the vetted request by checkToolRules.
	argTools
	// argDenyTools: one or more rules of denied tools, each the tool rule (tools.rules.tool)
	// of a tool a vetted server denies, checked by checkDenyRule.
	argDenyTools
	// argServers: the ids of the servers the config renders, one argument each, in config
	// order (a yargs array such as --allowed-mcp-server-names a b), compared once the config
	// is read by checkServerArgs: the harness then loads exactly those servers.
	argServers
)

// serverArg is the values a plan gives a flag of value servers.
type serverArg struct {
	flag, field string
	ids         []string
}

// argRule is one flag a plugin may return.
type argRule struct {
	flag   string
	value  argValue
	pinned string // the only value of an argPinned flag
	// variadic: the harness reads every following argument up to the next flag as a value
	// of this one (as its profile says, measured per CLI: docs/FORMATS.md), so the values must
	// be followed by another flag: whatever the caller appends after the plan's args must never
	// become one.
	variadic bool
	required bool
}

// envWhen says in which runs an env entry must (and may) be present.
type envWhen int

const (
	envOptional envWhen = iota // may be present, need not be
	envAlways                  // must be present in every run
	envIsolated                // must be present when the run is isolated (not ambientAuth), absent otherwise
)

// envRule is one env entry a plugin may return, with its only value.
type envRule struct {
	name, value string
	when        envWhen
}

// checkHarnessArgs parses args as the harness reads them (a flag, then its values: one for a
// pinned flag, every argument up to the next flag for a tools or denyTools flag) and allows
// exactly the profile's args, each flag once, the required ones present; with a tools flag,
// every built-in tool the run pre-approves must be named.
func (c *checker) checkHarnessArgs(args []string) {
	var rules []argRule
	if c.h != nil {
		rules = c.h.args
	}
	seen := map[string]bool{}
	for i := 0; i < len(args); i++ {
		field := "args[" + strconv.Itoa(i) + "]"
		a := args[i]
		j := slices.IndexFunc(rules, func(r argRule) bool { return r.flag == a })
		if j < 0 {
			if strings.HasPrefix(a, "-") {
				c.add("", field, RuleArg, "flag %q is not one harness %q may receive from a plugin", truncate(a, 64), c.in.Manifest.Harness)
			} else {
				c.add("", field, RuleArg, "argument %q is not the value of an allowed flag", truncate(a, 64))
			}
			continue
		}
		r := rules[j]
		if seen[r.flag] {
			c.add("", field, RuleArg, "flag %s is given more than once", r.flag)
		}
		seen[r.flag] = true
		switch r.value {
		case argPinned:
			if i+1 >= len(args) || args[i+1] != r.pinned {
				c.add("", field, RuleArg, "%s must be followed by exactly %s", r.flag, r.pinned)
				continue
			}
			i++
		case argTools:
			n := 0
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				n++
				c.checkToolRules("args["+strconv.Itoa(i)+"]", args[i])
			}
			if n == 0 {
				c.add("", field, RuleArg, "%s has no value", r.flag)
			}
			c.allowedToolsFlag = true
		case argDenyTools:
			n := 0
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				n++
				c.checkDenyRule("args["+strconv.Itoa(i)+"]", args[i])
			}
			if n == 0 {
				c.add("", field, RuleArg, "%s has no value", r.flag)
			}
		case argServers:
			sa := serverArg{flag: r.flag, field: field, ids: []string{}}
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				sa.ids = append(sa.ids, args[i])
			}
			c.serverArgs = append(c.serverArgs, sa)
		}
		if r.variadic && i+1 >= len(args) {
			c.add("", field, RuleArg, "%s takes every following argument as a value: another flag must end its values", r.flag)
		}
		// A variadic flag's values run to the next flag: a non-flag argument right after a
		// pinned value would be read as a second value, and is reported above as unexpected.
	}
	for _, r := range rules {
		if r.required && !seen[r.flag] {
			c.add("", "args", RuleArg, "required flag %s is missing", r.flag)
		}
		if r.value == argTools {
			for _, t := range c.in.Request.Run.BuiltinTools {
				if !c.builtinRules[t] {
					c.add("", "args", RuleToolRestrictions, "the run pre-approves built-in tool %q (run.builtinTools) but %s does not name it", truncate(t, 64), r.flag)
				}
			}
		}
	}
}

// checkServerArgs checks each flag of value servers against the ids of the servers the config
// renders (compareServers), in order: no more, no fewer, none repeated. A config that could
// not be read is reported on its own, and the flag then left alone.
func (c *checker) checkServerArgs() {
	if c.renderedIDs == nil {
		return
	}
	for _, sa := range c.serverArgs {
		if !slices.Equal(sa.ids, c.renderedIDs) {
			c.add("", sa.field, RuleArg, "%s must be followed by exactly the ids of the servers the config renders, in order: %q, not %q", sa.flag, c.renderedIDs, truncateAll(sa.ids))
		}
	}
}

// checkToolRules checks one argument of the tools flag, split into rules as the harness splits
// it (isRuleSeparator): every rule in it must be a built-in tool the run pre-approves
// (run.builtinTools, each once, and one of the profile's tools.builtin), the server rule
// (tools.rules.server) of a vetted enabled server without a restriction, or the tool rule
// (tools.rules.tool) of one of a restricted server's vetted tools, the tool spelled as
// tools.names says. The built-in part is compared exactly: checkHarnessArgs wants every
// pre-approved tool named.
func (c *checker) checkToolRules(field, arg string) {
	rules := strings.FieldsFunc(arg, isRuleSeparator)
	if len(rules) == 0 {
		c.add("", field, RuleToolRestrictions, "empty tool rule")
	}
	for _, rule := range rules {
		if slices.Contains(c.h.builtinTools, rule) {
			switch {
			case !slices.Contains(c.in.Request.Run.BuiltinTools, rule):
				c.add("", field, RuleToolRestrictions, "built-in tool %q is not one the run pre-approves (run.builtinTools %q)", rule, c.in.Request.Run.BuiltinTools)
			case c.builtinRules[rule]:
				c.add("", field, RuleToolRestrictions, "built-in tool %q is given twice", rule)
			}
			if c.builtinRules == nil {
				c.builtinRules = map[string]bool{}
			}
			c.builtinRules[rule] = true
			continue
		}
		targets := c.ruleTargets()[rule]
		if len(targets) == 0 {
			c.add("", field, RuleToolRestrictions, "rule %q is neither a built-in tool of harness %q nor a vetted server's rule", truncate(rule, 64), c.in.Manifest.Harness)
			continue
		}
		// A rule two servers' names could spell (ids holding the template's separator) must be
		// allowed for each: the host does not guess which one the CLI reads.
		for _, tg := range targets {
			switch {
			case !tg.server.Enabled:
				c.add("", field, RuleToolRestrictions, "rule %q names no vetted enabled server", truncate(rule, 64))
			case !tg.tool && tg.server.ToolsRestricted:
				c.add("", field, RuleToolRestrictions, "rule %q grants every tool of a restricted server", truncate(rule, 64))
			case tg.tool && !tg.server.ToolsRestricted:
				c.add("", field, RuleToolRestrictions, "rule %q is not one of the vetted tool rules", truncate(rule, 64))
			default:
				continue
			}
			break
		}
	}
}

// ruleTarget is what one rule of the tools flag names: a vetted server, whole or one tool.
type ruleTarget struct {
	server abi.Server
	tool   bool
}

// ruleTargets maps every rule the profile's templates spell for the vetted servers (each
// server's rule, and each allowed tool's) to what it names, built once per check.
func (c *checker) ruleTargets() map[string][]ruleTarget {
	if c.rules != nil {
		return c.rules
	}
	c.rules = map[string][]ruleTarget{}
	for _, v := range c.in.Request.Servers {
		r := c.in.Profile.ServerRule(v.ID)
		c.rules[r] = append(c.rules[r], ruleTarget{server: v})
		for _, t := range v.AllowedTools {
			r := c.in.Profile.ToolRule(v.ID, t)
			c.rules[r] = append(c.rules[r], ruleTarget{server: v, tool: true})
		}
	}
	return c.rules
}

// checkDenyRule checks one argument of the deny flag: it must be exactly the tool rule
// (tools.rules.tool) of a tool a vetted server denies (one rule per argument, since the harness
// splits an argument at commas and whitespace). The rules found are compared with every
// rendered server's DeniedTools by compareServers.
func (c *checker) checkDenyRule(field, arg string) {
	if c.denyRules == nil {
		c.denyRules = map[string]bool{}
		c.vettedDeny = map[string]bool{}
		for _, v := range c.in.Request.Servers {
			for _, t := range v.DeniedTools {
				c.vettedDeny[c.in.Profile.ToolRule(v.ID, t)] = true
			}
		}
	}
	switch {
	case !c.vettedDeny[arg] || strings.ContainsFunc(arg, isRuleSeparator) || strings.ContainsAny(arg, "()"):
		c.add("", field, RuleToolRestrictions, "deny rule %q is not one of the tools the vetted server denies", truncate(arg, 64))
	case c.denyRules[arg]:
		c.add("", field, RuleToolRestrictions, "deny rule %q is given twice", truncate(arg, 64))
	}
	c.denyRules[arg] = true
}

// spellAll is tools as the harness's rules name them (tools.names), in order.
func (c *checker) spellAll(tools []string) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = c.h.toolNames.spell(t)
	}
	return out
}

// isRuleSeparator reports whether a harness that takes tool rules as arguments splits one at
// r: commas and whitespace, as measured (docs/FORMATS.md §1.3).
func isRuleSeparator(r rune) bool {
	return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f'
}

// checkHarnessEnv allows exactly the profile's env: each name with its only value, an
// isolated-only one only when the run does not use ambient auth, and the ones a run needs
// (always, or isolated in an isolated run) present.
func (c *checker) checkHarnessEnv(env []abi.Pair) {
	var rules []envRule
	if c.h != nil {
		rules = c.h.env
	}
	isolated := !c.in.Request.Run.AmbientAuth
	for i, e := range env {
		field := "env[" + strconv.Itoa(i) + "]"
		j := slices.IndexFunc(rules, func(r envRule) bool { return r.name == e.Name })
		switch {
		case j < 0:
			c.add("", field+".name", RuleEnv, "env %s is not one harness %q may receive from a plugin", truncate(e.Name, 64), c.in.Manifest.Harness)
		case e.Value != rules[j].value:
			c.add("", field+".value", RuleEnv, "env %s must be exactly %s", e.Name, rules[j].value)
		case rules[j].when == envIsolated && !isolated:
			c.add("", field+".name", RuleEnv, "env %s is for isolated runs only; this run uses ambient auth", e.Name)
		}
	}
	for _, r := range rules {
		need := r.when == envAlways || (r.when == envIsolated && isolated)
		if need && !slices.ContainsFunc(env, func(p abi.Pair) bool { return p.Name == r.name }) {
			c.add("", "env", RuleEnv, "required env %s=%s is missing", r.name, r.value)
		}
	}
}
