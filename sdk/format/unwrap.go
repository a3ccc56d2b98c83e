package format

import (
	"errors"
	"fmt"
	"strings"

	"github.com/loadout-dev/loadout/sdk/abi"
)

// ErrNotSpawn is returned (wrapped) by UnwrapSpawn when a launch is not exactly one WrapSpawn
// produces.
var ErrNotSpawn = errors.New("not a loadout spawn wrapper")

// Unwrapped is what a wrapped launch gives the server once the harness and env -S have run:
// its own command, args and working directory (set by env -C; empty when absent), and its
// whole environment in order.
type Unwrapped struct {
	Command string
	Args    []string
	Cwd     string
	Env     []abi.Pair
}

// UnwrapSpawn is the inverse of WrapSpawn, for a checker that distrusts the renderer: given the
// command, args and env map a harness config holds for a stdio server, it returns what the
// server receives, or an error wrapping ErrNotSpawn unless the launch has exactly the shape
// WrapSpawn produces for style (env -i, optional -C, optional -S with only NAME=<alias refs>,
// every alias defined and used once, no other env key, every literal spelled so the harness
// leaves it alone). An alias marked Secret holds a placeholder and is taken as it is; the host
// encodes the value it substitutes.
func UnwrapSpawn(style SpawnStyle, command string, args []string, env []abi.Pair) (Unwrapped, error) {
	fail := func(format string, a ...any) (Unwrapped, error) {
		return Unwrapped{}, fmt.Errorf("%w: %s", ErrNotSpawn, fmt.Sprintf(format, a...))
	}
	if command != SpawnCommand {
		return fail("command %q, want %s", command, SpawnCommand)
	}
	lit := style.Unliteral
	if len(args) == 0 || args[0] != "-i" {
		return fail("args must start with -i")
	}
	rest := args[1:]
	var out Unwrapped
	if len(rest) >= 2 && rest[0] == "-C" {
		cwd, ok := lit(rest[1])
		if !ok {
			return fail("cwd is not a literal")
		}
		out.Cwd, rest = cwd, rest[2:]
	}
	aliases := map[string]abi.Pair{}
	for _, p := range env {
		if !strings.HasPrefix(p.Name, SpawnAliasPrefix) {
			return fail("env %q is not an alias", p.Name)
		}
		if _, dup := aliases[p.Name]; dup {
			return fail("alias %s defined twice", p.Name)
		}
		aliases[p.Name] = p
	}
	used := map[string]bool{}
	var operands []string // the command and args, those SPEC carries first
	if len(rest) >= 2 && rest[0] == "-S" {
		spec, open := rest[1], style.ref()
		if style.ExpandMax > 0 && len(spec) > style.ExpandMax {
			// The long form: the harness passes it on as written (LongSpec).
			spec, open = strings.TrimRight(spec, " "), "${"
		}
		for _, tok := range strings.Split(spec, " ") {
			name, refs, ok := strings.Cut(tok, "=")
			if !ok && style.ExpandsTilde && strings.HasPrefix(tok, open) && strings.HasSuffix(tok, "}") {
				// An operand reference (WrapSpawn, ExpandsTilde).
				alias := tok[len(open) : len(tok)-1]
				p, ok := aliases[alias]
				if !ok || used[alias] {
					return fail("operand %q is not one unused alias", tok)
				}
				used[alias] = true
				v := p.Value
				if !p.Secret {
					if v, ok = style.ValueUnliteral(v); !ok {
						return fail("alias %s value is not a literal", alias)
					}
				}
				operands = append(operands, v)
				continue
			}
			if !ok || !IsSpawnName(name) || len(operands) > 0 {
				return fail("-S token %q is not NAME=refs", tok)
			}
			var value strings.Builder
			for refs != "" {
				if !strings.HasPrefix(refs, open) {
					return fail("-S token %q holds more than alias references", tok)
				}
				end := strings.IndexByte(refs[len(open):], '}')
				if end < 0 {
					return fail("-S token %q has an unclosed reference", tok)
				}
				alias := refs[len(open) : len(open)+end]
				refs = refs[len(open)+end+1:]
				p, ok := aliases[alias]
				if !ok || used[alias] {
					return fail("alias %q is undefined or used twice", alias)
				}
				used[alias] = true
				v := p.Value
				if !p.Secret {
					if v, ok = style.ValueUnliteral(v); !ok {
						return fail("alias %s value is not a literal", alias)
					}
				}
				value.WriteString(v)
			}
			out.Env = append(out.Env, abi.Pair{Name: name, Value: value.String()})
		}
		rest = rest[2:]
	}
	if len(used) != len(aliases) {
		return fail("an alias is defined but not used")
	}
	for i, a := range rest {
		v, ok := lit(a)
		if !ok || style.ExpandsTilde && ExpandsTilde(v) {
			return fail("args[%d] is not a literal", i)
		}
		operands = append(operands, v)
	}
	if len(operands) == 0 {
		return fail("no command after the wrapper")
	}
	for i, v := range operands {
		if i == 0 {
			if strings.HasPrefix(v, "-") || strings.Contains(v, "=") {
				return fail("command %q would be read as an option or an assignment", v)
			}
			out.Command = v
			continue
		}
		out.Args = append(out.Args, v)
	}
	if out.Args == nil {
		out.Args = []string{}
	}
	return out, nil
}
