package policy

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
)

// checkRuleNames refuses, with file:row, every rule of modules (tests left out) that the
// decision would silently never read: a name that looks like a rule kind but is not one
// (dney, Deny, drops, deny_http as conftest spells it, violation), a rule kind in a package
// outside Namespace (conftest's package main), and a rule kind whose head is not a plain
// name (deny.x contains …). OPA would compile each of them and the rule would decide nothing.
func checkRuleNames(modules map[string]*ast.Module) error {
	ns := ast.MustParseRef(Namespace)
	var errs []string
	for _, file := range slices.Sorted(maps.Keys(modules)) {
		if strings.HasSuffix(file, "_test.rego") {
			continue
		}
		m := modules[file]
		pkg := m.Package.Path
		read := pkg.Equal(ns) || pkg.HasPrefix(ns)
		for _, r := range m.Rules {
			if len(r.Head.Args) > 0 {
				continue // a function is never a decision
			}
			ref := r.Head.Ref()
			name, ok := ref[0].Value.(ast.Var)
			if !ok {
				continue
			}
			at := file
			if r.Location != nil {
				at = fmt.Sprintf("%s:%d", r.Location.File, r.Location.Row)
			}
			kind := string(name)
			switch {
			case !slices.Contains(ruleNames, kind):
				if like := lookalike(kind); like != "" {
					errs = append(errs, fmt.Sprintf("%s: rule %s looks like %s but loadout reads only %s: rename it (a helper needs a name that is not a look-alike)", at, kind, like, strings.Join(ruleNames, ", ")))
				}
			case !read:
				errs = append(errs, fmt.Sprintf("%s: %s in package %s is never read: loadout reads %s only in packages under %s (write package loadout.<name>, not conftest's package main)", at, kind, strings.TrimPrefix(pkg.String(), "data."), strings.Join(ruleNames, ", "), strings.TrimPrefix(Namespace, "data.")))
			case len(ref) != 1:
				errs = append(errs, fmt.Sprintf("%s: %s is never read: its head is %s, want %s contains {…} (or %s := {…} for spawn_env)", at, kind, ref, kind, kind))
			}
		}
	}
	if len(errs) > 0 {
		return errors.New("load policies: " + strings.Join(errs, "; "))
	}
	return nil
}

// conftestKinds are conftest's rule names and prefixes that loadout does not read.
var conftestKinds = []string{"violation", "deny_", "warn_", "violation_"}

// lookalike returns the rule kind name resembles without being it ("" for none): the same
// letters in another case; one letter added, removed or two swapped (and for the longer
// kinds one changed; two edits for spawn_env); or one of conftest's names for a rule kind.
// Changing a letter of a four-letter kind is left out: it makes ordinary words (want, prop).
func lookalike(name string) string {
	lower := strings.ToLower(name)
	for _, k := range ruleNames {
		limit, sub := 1, 1
		switch {
		case len(k) <= 4:
			sub = 2
		case len(k) > 6:
			limit = 2
		}
		if lower == k || editDistance(lower, k, sub) <= limit {
			return k
		}
	}
	for _, c := range conftestKinds {
		if lower == c || (strings.HasSuffix(c, "_") && strings.HasPrefix(lower, c)) {
			return "conftest's " + strings.TrimSuffix(c, "_")
		}
	}
	return ""
}

// editDistance is the optimal string alignment distance of a and b: insertions, deletions and
// swaps of two adjacent letters each count one, a substitution counts sub.
func editDistance(a, b string, sub int) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := sub
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
