package format

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/valuesyntax"
)

// SpawnCommand is the program every stdio server is launched through: GNU coreutils env (8.30
// or later, for -S and its ${NAME} expansion). See docs/SPAWN-ENV.md.
const SpawnCommand = "/usr/bin/env"

// SpawnAliasPrefix starts the name of every alias variable that carries a spawn-env value.
const SpawnAliasPrefix = "LOADOUT_SPAWN_"

// SpawnStyle is how a harness treats the strings of a stdio server's launch, and so how the
// wrapper references and spells them (docs/SPAWN-ENV.md): what the harness expands (Syntax,
// passed over the command, args and cwd ArgPasses times and over env values EnvPasses times),
// and the measured quirks a launch must avoid. A harness's profile holds the same facts; the
// host derives a SpawnStyle from it. A SpawnStyle is a value, safe to share.
type SpawnStyle struct {
	// Syntax is how the harness expands its config's strings; nil: it expands nothing.
	Syntax *valuesyntax.Syntax
	// ArgPasses and EnvPasses count the harness's passes over a command, arg or cwd, and over
	// an env value of the config.
	ArgPasses, EnvPasses int
	// Split: a value holding "${" is cut there into several aliases instead of being spelled
	// (Claude Code), so that no alias value holds an expansion at all.
	Split bool
	// ExpandsTilde: the harness replaces a command or arg that is "~" or starts with "~/" by
	// its own HOME (Pi 1.6.0): such operands, and every one before them, travel in SPEC.
	ExpandsTilde bool
	// ExpandMax is the longest string the harness expands (GitHub Copilot CLI 1.0.102: 1000);
	// a longer SPEC is written in its long form (LongSpec). 0: no limit.
	ExpandMax int
}

// SpawnVerbatim is the style of a harness that expands nothing: values and args go in as they
// are.
var SpawnVerbatim = SpawnStyle{}

// Literal spells a command, arg or cwd so that the harness passes it on unchanged.
func (st SpawnStyle) Literal(v string) string { return st.Syntax.Spell(v, st.ArgPasses) }

// Unliteral is what the harness makes of a command, arg or cwd, and false when it would
// expand part of it.
func (st SpawnStyle) Unliteral(v string) (string, bool) { return st.Syntax.Read(v, st.ArgPasses) }

// ValueLiteral spells an env value of the config so that the harness passes it on unchanged.
func (st SpawnStyle) ValueLiteral(v string) string { return st.Syntax.Spell(v, st.EnvPasses) }

// ValueUnliteral is what the harness makes of an env value of the config, and false when it
// would expand or run part of it.
func (st SpawnStyle) ValueUnliteral(v string) (string, bool) {
	return st.Syntax.Read(v, st.EnvPasses)
}

// ref is how SPEC references an alias: "${" spelled for the harness's passes over args.
func (st SpawnStyle) ref() string { return st.Literal("${") }

// ErrUnwrappable is returned when a server's command cannot follow env's operands: env reads an
// operand holding "=" as an assignment.
var ErrUnwrappable = errors.New("command holds \"=\", which env would read as an assignment")

// Spawn is the wrapped launch of one stdio server: Command and Args replace the server's own,
// Env is the alias map the harness config carries (in order; Secret kept from the source pair).
// Skipped lists spawn-list names left out because env -S cannot carry them (they do not match
// ^[A-Za-z_][A-Za-z0-9_]*$).
type Spawn struct {
	Command string
	Args    []string
	Env     []abi.Pair
	Skipped []string
}

// WrapSpawn builds the launch that gives server s exactly its spawn environment — s.HostEnv,
// then s.Env, a repeated name kept once at its first position with its last value — and nothing
// else, with no value on any command line:
//
//	/usr/bin/env -i [-C <cwd>] [-S "NAME=<ref> … [<ref> …]"] <command> <args>…
//
// with every value carried by an alias variable LOADOUT_SPAWN_<n> of the harness config's env
// map. For SpawnPi the command and args up to the last one Pi would expand (ExpandsTilde)
// are carried the same way, as operand references at the end of SPEC. cwd, when not empty, becomes env's -C (for a harness with no working-directory key).
// For SpawnClaude the command, args and cwd go through ClaudeLiteral, so Claude hands them over
// unexpanded. A secret value is a placeholder the plugin cannot look into: it gets one alias,
// unencoded; the host encodes it when it substitutes it.
func WrapSpawn(style SpawnStyle, s abi.Server, cwd string) (Spawn, error) {
	if strings.Contains(s.Command, "=") {
		return Spawn{}, ErrUnwrappable
	}
	// The spawn environment: HostEnv, then the server's own env; a later pair of the same name
	// takes the value (and secrecy) of the first's place.
	list := make([]abi.Pair, 0, len(s.HostEnv)+len(s.Env))
	for _, p := range slices.Concat(s.HostEnv, s.Env) {
		if i := slices.IndexFunc(list, func(q abi.Pair) bool { return q.Name == p.Name }); i >= 0 {
			list[i].Value, list[i].Secret = p.Value, p.Secret
			continue
		}
		list = append(list, p)
	}
	var out Spawn
	ref := style.ref()
	out.Env = make([]abi.Pair, 0, len(list))
	// spec is env's -S operand, "NAME=<refs> NAME=<refs> …", built in one buffer.
	var spec []byte
	for _, p := range list {
		name, value := p.Name, p.Value
		if !IsSpawnName(name) {
			out.Skipped = append(out.Skipped, name)
			continue
		}
		var one [1]string
		pieces := one[:]
		switch {
		case p.Secret:
			one[0] = value
		case style.Split && strings.Contains(value, "${"):
			pieces = splitExpansions(value)
		default:
			one[0] = style.ValueLiteral(value)
		}
		if len(spec) > 0 {
			spec = append(spec, ' ')
		}
		spec = append(spec, name...)
		spec = append(spec, '=')
		for _, piece := range pieces {
			alias := SpawnAliasPrefix + strconv.Itoa(len(out.Env)+1)
			out.Env = append(out.Env, abi.Pair{Name: alias, Value: piece, Secret: p.Secret})
			spec = append(spec, ref...)
			spec = append(spec, alias...)
			spec = append(spec, '}')
		}
	}
	lit := style.Literal
	if len(out.Env) == 0 {
		out.Env = nil
	}
	out.Command = SpawnCommand
	out.Args = make([]string, 0, 6+len(s.Args))
	out.Args = append(out.Args, "-i")
	if cwd != "" {
		out.Args = append(out.Args, "-C", lit(cwd))
	}
	// Pi replaces an operand that is "~" or starts with "~/" by its own HOME: the operands up to
	// the last such one travel in SPEC, each as one alias reference, which env does not split.
	operands := slices.Concat([]string{s.Command}, s.Args)
	inSpec := 0
	if style.ExpandsTilde {
		for i, a := range operands {
			if ExpandsTilde(a) {
				inSpec = i + 1
			}
		}
	}
	for _, a := range operands[:inSpec] {
		alias := SpawnAliasPrefix + strconv.Itoa(len(out.Env)+1)
		out.Env = append(out.Env, abi.Pair{Name: alias, Value: style.ValueLiteral(a)})
		if len(spec) > 0 {
			spec = append(spec, ' ')
		}
		spec = append(spec, ref+alias+"}"...)
	}
	if style.ExpandMax > 0 && len(spec) > style.ExpandMax {
		spec = []byte(style.LongSpec(string(spec)))
	}
	if len(spec) > 0 {
		out.Args = append(out.Args, "-S", string(spec))
	}
	for _, a := range operands[inSpec:] {
		out.Args = append(out.Args, lit(a))
	}
	return out, nil
}

// ExpandsTilde reports whether a harness whose style has ExpandsTilde replaces a command or arg
// by its own HOME: it is "~" or starts with "~/" (measured with Pi 1.6.0, docs/SPAWN-ENV.md).
func ExpandsTilde(v string) bool { return v == "~" || strings.HasPrefix(v, "~/") }

// LongSpec rewrites a SPEC spelled with the style's references into its long form: plain
// ${ALIAS} references, padded with spaces to more than ExpandMax characters, so that the
// harness passes it on unexpanded (ExpandMax).
func (st SpawnStyle) LongSpec(spec string) string {
	spec = strings.ReplaceAll(spec, st.ref(), "${")
	if n := st.ExpandMax + 1 - len(spec); n > 0 {
		spec += strings.Repeat(" ", n)
	}
	return spec
}

// IsSpawnName reports whether name can be assigned through env -S
// (^[A-Za-z_][A-Za-z0-9_]*$); WrapSpawn leaves other names out.
func IsSpawnName(name string) bool {
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

// splitExpansions cuts v between "$" and "{" at every "${", so that no piece holds "${".
func splitExpansions(v string) []string {
	parts := strings.Split(v, "${")
	for i := range parts[:len(parts)-1] {
		parts[i] += "$"
		parts[i+1] = "{" + parts[i+1]
	}
	return parts
}

// HeaderObject is an http server's headers as a config object, in request order: a secret value
// (a placeholder the host substitutes and encodes) as it is, every other value spelled by lit
// (ClaudeLiteral, PiLiteral) for a harness that expands values. secret reports whether a value
// was secret.
func HeaderObject(headers []abi.Pair, lit func(string) string) (obj *Object, secret bool) {
	obj = NewObject()
	for _, p := range headers {
		if p.Secret {
			obj.Set(p.Name, p.Value)
			secret = true
		} else {
			obj.Set(p.Name, lit(p.Value))
		}
	}
	return obj, secret
}
