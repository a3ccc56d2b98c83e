// Package valuesyntax interprets a value syntax: how an agent CLI expands the strings of its
// config, written as data in the harness's profile (valueSyntax, docs/PROFILES.md §1.1). The
// host reads a written config back through it and spells secrets with it; a plugin spells
// literals with the same code, so a CLI whose syntax is new needs a profile, not a change here.
//
// A syntax is a list of passes. Each pass says which forms it expands ("$NAME", "${NAME}",
// "${NAME:-default}", and "!command" for a value that runs a command when it starts with "!")
// and how a literal "$" and a literal leading "!" are written so that the pass gives them back.
// A value position (a server's args, env values, url, headers) goes through the passes the
// profile counts for it: the first pass, then each later one in turn, the last repeated.
//
// Every function here is pure and safe for concurrent use; a compiled Syntax is immutable.
package valuesyntax

import (
	"fmt"
	"slices"
	"strings"
)

// The forms a pass may expand.
const (
	FormName         = "$NAME"            // $NAME, for every "$" (a "$" the CLI would leave is refused too)
	FormBrace        = "${NAME}"          // ${NAME}
	FormBraceDefault = "${NAME:-default}" // ${NAME:-default}
	FormCommand      = "!command"         // a value that starts with "!" runs the rest as a command
)

// Forms lists the forms a pass may name, in the order docs name them.
var Forms = []string{FormName, FormBrace, FormBraceDefault, FormCommand}

// DollarVar is the variable a dollar reference names; a profile pins it to "$" (env).
const DollarVar = "LOADOUT_SPAWN_DOLLAR"

// The spellings a pass may give a literal "$" (Pass.Dollar): two escapes, and two references to
// DollarVar that the pass itself expands back to "$".
const (
	DollarBackslash  = `\$`
	DollarDouble     = `$$`
	DollarRefDefault = "${" + DollarVar + ":-$}"
	DollarRef        = "${" + DollarVar + "}"
)

// Pass is one expansion pass, as a profile writes it.
type Pass struct {
	// Expands lists the forms the pass replaces (Forms).
	Expands []string `yaml:"expands" json:"expands"`
	// Dollar is how a literal "$" is written where the pass would expand it: DollarBackslash,
	// DollarDouble, DollarRefDefault (needs FormBraceDefault) or DollarRef (needs FormBrace and
	// DollarVar pinned to "$"); empty: the pass has no way to write one, and a string holding a
	// "$" it would expand is not a literal.
	Dollar string `yaml:"dollar" json:"dollar"`
	// Bang is how a literal leading "!" is written under FormCommand ("$!"); it is read back
	// wherever it stands. Required with FormCommand, refused without it.
	Bang string `yaml:"bang" json:"bang"`
}

// Syntax is a compiled list of passes. The zero Syntax (and a nil *Syntax) expands nothing.
type Syntax struct {
	passes []pass
}

// pass is a compiled Pass.
type pass struct {
	name, brace, command bool
	dollar, bang         string
}

// Compile checks passes and compiles them. An error names the pass and the field.
func Compile(passes []Pass) (*Syntax, error) {
	sx := &Syntax{}
	for i, p := range passes {
		c := pass{dollar: p.Dollar, bang: p.Bang}
		seen := map[string]bool{}
		for _, f := range p.Expands {
			if !slices.Contains(Forms, f) {
				return nil, fmt.Errorf("pass %d: expands %q is none of %q", i+1, f, Forms)
			}
			if seen[f] {
				return nil, fmt.Errorf("pass %d: expands %q twice", i+1, f)
			}
			seen[f] = true
		}
		if len(seen) == 0 {
			return nil, fmt.Errorf("pass %d: expands nothing (a syntax that expands nothing is literal)", i+1)
		}
		c.name = seen[FormName]
		c.brace = seen[FormBrace] || seen[FormBraceDefault]
		c.command = seen[FormCommand]
		switch p.Dollar {
		case "", DollarBackslash, DollarDouble:
		case DollarRefDefault:
			if !seen[FormBraceDefault] {
				return nil, fmt.Errorf("pass %d: dollar %q needs the pass to expand %s", i+1, p.Dollar, FormBraceDefault)
			}
		case DollarRef:
			if !seen[FormBrace] {
				return nil, fmt.Errorf("pass %d: dollar %q needs the pass to expand %s", i+1, p.Dollar, FormBrace)
			}
		default:
			return nil, fmt.Errorf("pass %d: dollar %q is none of %q", i+1, p.Dollar, []string{DollarBackslash, DollarDouble, DollarRefDefault, DollarRef})
		}
		switch {
		case c.command && p.Bang != "$!":
			return nil, fmt.Errorf("pass %d: expands %s, so bang must say how a literal leading \"!\" is written (\"$!\")", i+1, FormCommand)
		case !c.command && p.Bang != "":
			return nil, fmt.Errorf("pass %d: bang without %s", i+1, FormCommand)
		case c.command && p.Dollar != DollarDouble:
			return nil, fmt.Errorf("pass %d: %s with bang \"$!\" needs dollar %q", i+1, FormCommand, DollarDouble)
		}
		sx.passes = append(sx.passes, c)
	}
	return sx, nil
}

// MustCompile is Compile for passes known to be valid; it panics on an error.
func MustCompile(passes []Pass) *Syntax {
	sx, err := Compile(passes)
	if err != nil {
		panic(err)
	}
	return sx
}

// Literal reports whether the syntax expands nothing.
func (sx *Syntax) Literal() bool { return sx == nil || len(sx.passes) == 0 }

// NeedsDollarVar reports whether a pass writes "$" as a reference to DollarVar without a
// default, which gives "$" only while the harness's environment sets DollarVar to "$".
func (sx *Syntax) NeedsDollarVar() bool {
	return sx != nil && slices.ContainsFunc(sx.passes, func(p pass) bool { return p.dollar == DollarRef })
}

// nth is the pass the k-th expansion (from 0) of a string goes through.
func (sx *Syntax) nth(k int) pass { return sx.passes[min(k, len(sx.passes)-1)] }

// expandsAt reports whether the pass would start an expansion at s[i], a "$".
func (p pass) expandsAt(s string, i int) bool {
	return p.name || p.brace && i+1 < len(s) && s[i+1] == '{'
}

// spell writes s so that the pass gives s back: each "$" it would expand as the dollar
// spelling, then a leading "!" as the bang spelling. Without a dollar spelling such a "$" is
// left as it is (and read reports the result is not a literal).
func (p pass) spell(s string) string {
	if p.dollar != "" && strings.IndexByte(s, '$') >= 0 {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			if s[i] == '$' && p.expandsAt(s, i) {
				b.WriteString(p.dollar)
				continue
			}
			b.WriteByte(s[i])
		}
		s = b.String()
	}
	if p.command && strings.HasPrefix(s, "!") {
		s = p.bang + s[1:]
	}
	return s
}

// secret spells a secret value so that the pass gives it back wherever in a string it lands:
// besides what spell writes, a "$" last (the text after it could open a brace) and every "!"
// (it could end up leading the value).
func (p pass) secret(s string) string {
	if p.name && !p.command {
		return p.spell(s)
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '$' && p.dollar != "" && (p.name || i+1 == len(s) || s[i+1] == '{'):
			b.WriteString(p.dollar)
		case s[i] == '!' && p.command:
			b.WriteString(p.bang)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// canonical: the pass spells every "$" and runs no command, so a string and its secrets are
// all one spelling, and a string reads back only when it is the spelling of what it gives.
func (p pass) canonical() bool { return p.name && !p.command }

// read is what the pass makes of s, and false when it would expand or run part of it.
func (p pass) read(s string) (string, bool) {
	if p.command && strings.HasPrefix(s, "!") {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case p.dollar != "" && strings.HasPrefix(s[i:], p.dollar):
			b.WriteByte('$')
			i += len(p.dollar)
		case p.bang != "" && strings.HasPrefix(s[i:], p.bang):
			b.WriteByte('!')
			i += len(p.bang)
		case s[i] == '$' && p.expandsAt(s, i):
			return "", false
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	out := b.String()
	if p.canonical() && p.spell(out) != s {
		return "", false
	}
	return out, true
}

// Spell writes s for n passes, so that the harness, expanding it n times, gives s back: the
// spelling of the last pass innermost. Zero passes (or a literal syntax) leave s as it is.
func (sx *Syntax) Spell(s string, n int) string {
	if sx.Literal() {
		return s
	}
	for k := n - 1; k >= 0; k-- {
		s = sx.nth(k).spell(s)
	}
	return s
}

// Read is what n passes make of s, and false when one of them would expand or run part of it.
func (sx *Syntax) Read(s string, n int) (string, bool) {
	if sx.Literal() {
		return s, true
	}
	for k := 0; k < n; k++ {
		var ok bool
		if s, ok = sx.nth(k).read(s); !ok {
			return "", false
		}
	}
	return s, true
}

// Secret spells a secret value for n passes, wherever in a string it lands. Zero passes leave it
// as it is.
func (sx *Syntax) Secret(s string, n int) string {
	if sx.Literal() {
		return s
	}
	for k := n - 1; k >= 0; k-- {
		s = sx.nth(k).secret(s)
	}
	return s
}
