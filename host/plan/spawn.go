package plan

import (
	"slices"
	"strconv"
	"strings"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/profile/readback"
)

// The env wrapper of docs/SPAWN-ENV.md: a built-in harness's renderer launches a stdio server
// as
//
//	/usr/bin/env -i [-C <cwd>] [-S "NAME=<ref> …"] <command> <args>…
//
// with each spawn-env value carried by an alias variable LOADOUT_SPAWN_<n> of the server's env
// map. This file reads such a launch back: it decodes SPEC and the alias map the way the
// harness and GNU env will, rebuilds the environment the server gets, and compares it with the
// vetted spawn env. The per-harness encodings are the spawnStyle values of builtinHarnesses.
// It deliberately shares no code with sdk/format, which the renderers use: the checker is an
// independent reading of the document.

const (
	// spawnCommand is the only wrapper command accepted.
	spawnCommand = "/usr/bin/env"
	// spawnAliasPrefix starts every alias variable name; a decimal number 1, 2, 3… follows.
	spawnAliasPrefix = "LOADOUT_SPAWN_"
	// dollarDefaultVar is the variable Claude Code looks up in dollarDefaultRef; unset (or "$") it
	// makes dollarDefaultRef a literal "$".
	dollarDefaultVar = "LOADOUT_SPAWN_DOLLAR"
	// dollarDefaultRef is Claude Code's spelling of a literal "$" before "{".
	dollarDefaultRef = "${" + dollarDefaultVar + ":-$}"
	// maxAliasDigits bounds the number of an alias, so that it can never overflow.
	maxAliasDigits = 9
)

// spawnStyle is how one harness carries the wrapper (docs/SPAWN-ENV.md, "Per harness").
type spawnStyle struct {
	// ref opens an alias reference in SPEC; the alias name and "}" follow. Empty in the
	// spawnStyles list: "${" as the profile's value syntax spells it in args.
	ref string
	// split: a value may be carried by several aliases whose references are concatenated
	// (values holding "${" are cut there); otherwise every name has exactly one alias.
	split bool
	// cwdFlag: the server's cwd may travel as env's -C (the harness has no cwd key).
	cwdFlag bool
	// dollarVar is the harness variable ref relies on; the plan may set it to "$" only.
	dollarVar string
	// tilde is the profile's expandsTilde: the harness replaces a command or arg that is "~"
	// or starts with "~/" by its HOME, so such an operand, and every one before it, travels as
	// an operand reference "${ALIAS}" at the end of SPEC.
	tilde bool
	// expandMax is the profile's expandMax: a longer SPEC is in its long form, with plain
	// "${" references and trailing spaces, which the harness does not expand. 0: no limit.
	expandMax int
}

// operandRefs returns the aliases of SPEC's trailing operand references: the tokens after its
// last NAME=… assignment, each exactly ref+alias+"}" (the command and args Pi would expand).
func (sp *spawnStyle) operandRefs(spec string) []string {
	ref, tokens := sp.specForm(spec)
	toks := strings.Split(tokens, " ")
	var out []string
	for j := len(toks) - 1; j >= 0; j-- {
		a, ok := strings.CutPrefix(toks[j], ref)
		if !ok || !strings.HasSuffix(a, "}") || !isAlias(a[:len(a)-1]) {
			break
		}
		out = append(out, a[:len(a)-1])
	}
	slices.Reverse(out)
	return out
}

// expandsTilde reports whether a harness with expandsTilde replaces operand a by its HOME.
func expandsTilde(a string) bool { return a == "~" || strings.HasPrefix(a, "~/") }

// specForm returns the reference opener SPEC is written with and SPEC without the long
// form's padding.
func (sp *spawnStyle) specForm(spec string) (ref, tokens string) {
	if sp.expandMax > 0 && len(spec) > sp.expandMax {
		return "${", strings.TrimRight(spec, " ")
	}
	return sp.ref, spec
}

func verbatim(s string) string { return s }

func verbatimValue(s string) (string, bool) { return s, true }

// validSpawnName reports whether env -S can assign name: ^[A-Za-z_][A-Za-z0-9_]*$.
func validSpawnName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// isAlias reports whether name is LOADOUT_SPAWN_<n>, n a decimal number from 1 without
// leading zeros.
func isAlias(name string) bool {
	n, ok := strings.CutPrefix(name, spawnAliasPrefix)
	if !ok || n == "" || len(n) > maxAliasDigits || n[0] == '0' {
		return false
	}
	for i := 0; i < len(n); i++ {
		if n[i] < '0' || n[i] > '9' {
			return false
		}
	}
	return true
}

// refs parses the value side of a SPEC token, whose references open with ref: one alias
// reference, or several when the style splits values. It returns the aliases in order.
func (sp *spawnStyle) refs(ref, s string) ([]string, bool) {
	var out []string
	for s != "" {
		rest, ok := strings.CutPrefix(s, ref)
		if !ok {
			return nil, false
		}
		end := strings.IndexByte(rest, '}')
		if end < 0 || !isAlias(rest[:end]) {
			return nil, false
		}
		out = append(out, rest[:end])
		s = rest[end+1:]
	}
	if len(out) == 0 || len(out) > 1 && !sp.split {
		return nil, false
	}
	return out, true
}

// refShape describes a SPEC token's value side for messages.
func (sp *spawnStyle) refShape(ref string) string {
	if sp.split {
		return "one or more references " + ref + spawnAliasPrefix + "<n>}"
	}
	return "exactly one reference " + ref + spawnAliasPrefix + "<n>}"
}

// spawnList is server v's spawn env (docs/SECURITY.md, docs/SPAWN-ENV.md): its HostEnv pairs, then
// its Env pairs, a repeated name kept once at its first position with its last value.
func spawnList(v abi.Server) []abi.Pair {
	var out []abi.Pair
	at := map[string]int{}
	for _, list := range [][]abi.Pair{v.HostEnv, v.Env} {
		for _, p := range list {
			if i, ok := at[p.Name]; ok {
				out[i] = p
				continue
			}
			at[p.Name] = len(out)
			out = append(out, p)
		}
	}
	return out
}

// spawnAssign is one NAME=<refs> token of SPEC.
type spawnAssign struct {
	name    string
	aliases []string
}

// checkSpawn checks a stdio server rendered through the env wrapper (its command is
// spawnCommand and it is not the vetted command and args verbatim) against the vetted server
// v: the wrapper's options, the server command and args after them, SPEC, the alias map, and
// the environment they give the server, which must be exactly the vetted spawn env. It then
// relocates every alias value in r.Strings to the spawn-env name it lands at, so that
// secretPlacement checks where each secret really goes.
func (c *checker) checkSpawn(name string, r *rendered, v abi.Server) {
	sp := c.h.spawn
	args := r.Args
	field := func(i int) string { return r.Loc + ".args[" + strconv.Itoa(i) + "]" }
	optionsOK := true
	wrapper := func(i int, format string, a ...any) {
		c.add(name, field(i), RuleSpawnWrapper, format, a...)
		optionsOK = false
	}

	// Options: -i, then -C <cwd> (harnesses without a cwd key), then -S SPEC, in that order.
	specAt, i := -1, 0
	if len(args) == 0 || args[0] != "-i" {
		wrapper(0, "the env wrapper must start with -i")
	} else {
		i = 1
		if i < len(args) && args[i] == "-C" {
			switch {
			case !sp.cwdFlag:
				wrapper(i, "env -C is not part of harness %q's wrapper; its cwd key carries the working directory", c.in.Manifest.Harness)
			case i+1 >= len(args) || v.Cwd == "" || args[i+1] != c.h.literal(v.Cwd):
				wrapper(i, "env -C must be followed by the vetted cwd")
			}
			i += 2
		}
		if i < len(args) && args[i] == "-S" {
			if i+1 < len(args) {
				specAt = i + 1
			} else {
				wrapper(i, "env -S has no argument")
			}
			i += 2
		}
	}
	ops := args[min(i, len(args)):]
	// The vetted operands; the first inSpec of them travel as operand references in SPEC.
	vetted := slices.Concat([]string{v.Command}, v.Args)
	var opAliases []string
	if specAt >= 0 && sp.tilde {
		opAliases = sp.operandRefs(args[specAt])
	}
	inSpec := min(len(opAliases), len(vetted))
	want := make([]string, 0, len(vetted)-inSpec)
	for _, a := range vetted[inSpec:] {
		want = append(want, c.h.literal(a))
	}
	if sp.tilde && slices.ContainsFunc(vetted[inSpec:], expandsTilde) {
		wrapper(min(i, len(args)), "an operand that is \"~\" or starts with \"~/\" would be replaced by harness %q's HOME: it and every operand before it must travel as references at the end of SPEC", c.in.Manifest.Harness)
	}
	switch {
	case v.Command == "" || strings.HasPrefix(v.Command, "-") || strings.Contains(v.Command, "="):
		wrapper(min(i, len(args)), "the vetted command %q cannot follow env's options: env would read it as an option or an assignment", truncate(v.Command, 64))
	case !slices.Equal(ops, want):
		at := min(i, len(args))
		if len(ops) > 0 && strings.HasPrefix(ops[0], "-") {
			cwd := ""
			if sp.cwdFlag {
				cwd = "-C <vetted cwd>, "
			}
			wrapper(at, "env option %q is not allowed: the wrapper takes only -i, %s-S SPEC before the vetted command", truncate(ops[0], 32), cwd)
		} else {
			wrapper(at, "the command and args after the wrapper's options are not the vetted ones")
		}
	}
	if r.HasEnvPassthrough {
		key := c.h.keyOf("envPassthrough")
		c.add(name, r.Loc+"."+key, RuleSpawnWrapper, "a wrapped server takes no %s: its spawn env travels in aliases only", key)
	}
	if !optionsOK && specAt < 0 {
		// Read SPEC where a hostile wrapper put it, for the diagnostics below.
		if j := slices.Index(args, "-S"); j > 0 && j+1 < len(args) {
			specAt = j + 1
		}
	}
	if !optionsOK && specAt < 0 {
		return
	}

	// SPEC: space-separated NAME=<refs> tokens and nothing else.
	var assigns []spawnAssign
	if specAt >= 0 {
		spec := args[specAt]
		if spec == "" {
			c.add(name, field(specAt), RuleSpawnSpec, "env -S is given an empty string; leave -S out when the spawn env is empty")
		} else {
			ref, tokens := sp.specForm(spec)
			toks := strings.Split(tokens, " ")
			toks = toks[:len(toks)-len(opAliases)]
			for k, tok := range toks {
				n, refs, ok := strings.Cut(tok, "=")
				if !ok || !validSpawnName(n) {
					c.add(name, field(specAt), RuleSpawnSpec, "token %d %q is not NAME=<alias references> with NAME an env name", k+1, truncate(tok, 64))
					continue
				}
				aliases, ok := sp.refs(ref, refs)
				if !ok {
					c.add(name, field(specAt), RuleSpawnSpec, "token %d sets %s to %q; want %s", k+1, n, truncate(refs, 64), sp.refShape(ref))
					continue
				}
				assigns = append(assigns, spawnAssign{name: n, aliases: aliases})
			}
		}
	}
	specField := r.Loc + ".args"
	if specAt >= 0 {
		specField = field(specAt)
	}

	// The alias map: LOADOUT_SPAWN_<n> entries only, each a value the harness passes literally.
	defined := map[string]string{}
	for _, p := range r.Env {
		if !isAlias(p.Name) {
			c.add(name, r.Loc+".env", RuleSpawnAlias, "env %q is not an alias: a wrapped server's env holds only %s<n> entries", truncate(p.Name, 64), spawnAliasPrefix)
			continue
		}
		val, ok := c.h.value(p.Value)
		if !ok {
			c.add(name, r.Loc+".env", RuleSpawnAlias, "alias %s holds %q, which harness %q would expand or run instead of passing it on", p.Name, truncate(p.Value, 64), c.in.Manifest.Harness)
		}
		defined[p.Name] = val
	}

	// References: numbered 1, 2, 3… in order, each alias defined and used exactly once.
	used := map[string]int{}
	ordered, k := true, 0
	for _, a := range assigns {
		for _, al := range a.aliases {
			k++
			ordered = ordered && al == spawnAliasPrefix+strconv.Itoa(k)
			used[al]++
			if used[al] == 2 {
				c.add(name, specField, RuleSpawnAlias, "alias %s is referenced more than once", al)
			}
			if _, ok := defined[al]; !ok && used[al] == 1 {
				c.add(name, specField, RuleSpawnAlias, "alias %s is referenced but not defined in env: env would expand it to an empty or inherited value", al)
			}
		}
	}
	for j, al := range opAliases {
		k++
		ordered = ordered && al == spawnAliasPrefix+strconv.Itoa(k)
		used[al]++
		if used[al] == 2 {
			c.add(name, specField, RuleSpawnAlias, "alias %s is referenced more than once", al)
		}
		val, ok := defined[al]
		switch {
		case !ok:
			c.add(name, specField, RuleSpawnAlias, "operand alias %s is referenced but not defined in env", al)
		case j >= len(vetted) || val != vetted[j]:
			c.add(name, specField, RuleSpawnWrapper, "operand reference %d (alias %s) is not the vetted command or arg at its place", j+1, al)
		case len(Scan(val)) > 0:
			c.add(name, specField, RuleSpawnAlias, "operand alias %s holds a placeholder", al)
		}
	}
	if !ordered {
		c.add(name, specField, RuleSpawnAlias, "alias references must be numbered %s1, %s2, … in order", spawnAliasPrefix, spawnAliasPrefix)
	}
	for _, p := range r.Env {
		if isAlias(p.Name) && used[p.Name] == 0 {
			c.add(name, r.Loc+".env", RuleSpawnAlias, "alias %s is not referenced by env -S", p.Name)
		}
	}

	// The environment env gives the server: each assignment in order, a repeated name kept at
	// its first position with its last value.
	var got []abi.Pair
	known := map[string]bool{}
	pos := map[string]int{}
	for _, a := range assigns {
		var b strings.Builder
		ok, pieces := true, 0
		for _, al := range a.aliases {
			val, def := defined[al]
			ok = ok && def
			pieces += len(Scan(val))
			b.WriteString(val)
		}
		val := b.String()
		if len(Scan(val)) != pieces {
			c.add(name, specField, RuleSpawnAlias, "the value of %s joins a placeholder across aliases", a.name)
		}
		if j, dup := pos[a.name]; dup {
			c.add(name, specField, RuleSpawnSpec, "env -S sets %s more than once", a.name)
			got[j].Value = val
			known[a.name] = ok
			continue
		}
		pos[a.name] = len(got)
		got = append(got, abi.Pair{Name: a.name, Value: val})
		known[a.name] = ok
	}

	// It must be exactly the vetted spawn env (less names env -S cannot carry, which the
	// renderer leaves out with a warning).
	var exp []abi.Pair
	for _, p := range spawnList(v) {
		if validSpawnName(p.Name) {
			exp = append(exp, p)
		} else if !c.warned[v.ID] {
			c.add(name, r.Loc+".env", RuleSpawnEnv, "vetted spawn env %q cannot pass through env -S and no warning names the server", truncate(p.Name, 64))
		}
	}
	for _, p := range got {
		w, ok := pairValue(exp, p.Name)
		switch {
		case !ok:
			c.add(name, specField, RuleSpawnEnv, "sets %s, which is not in the vetted spawn env", p.Name)
		case known[p.Name] && p.Value != w:
			c.add(name, specField, RuleSpawnEnv, "%s differs from the vetted value", p.Name)
		}
	}
	sameSet := len(got) == len(exp)
	for _, p := range exp {
		if _, ok := pos[p.Name]; !ok {
			c.add(name, specField, RuleSpawnEnv, "vetted spawn env %s is missing", p.Name)
			sameSet = false
		}
	}
	if sameSet && !slices.EqualFunc(got, exp, func(a, b abi.Pair) bool { return a.Name == b.Name }) {
		c.add(name, specField, RuleSpawnEnv, "sets the spawn env out of its vetted order")
	}

	// Secrets are judged where they land: an alias value stands at every name that uses it.
	lands := map[string][]string{}
	for _, a := range assigns {
		for _, al := range a.aliases {
			lands[al] = append(lands[al], a.name)
		}
	}
	strs := make([]readback.Located, 0, len(r.Strings))
	for _, l := range r.Strings {
		if l.Field != FieldEnv || l.S == l.Key || len(lands[l.Key]) == 0 {
			strs = append(strs, l)
			continue
		}
		for _, n := range lands[l.Key] {
			strs = append(strs, readback.Located{Field: FieldEnv, Key: n, S: l.S})
		}
	}
	r.Strings = strs
}
