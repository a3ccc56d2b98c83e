package format

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/sdk/abi"
)

func TestWrapSpawn(t *testing.T) {
	t.Parallel()
	server := abi.Server{ID: "s", Command: "/bin/srv", Args: []string{"--x", "${HOME}"},
		HostEnv: []abi.Pair{{Name: "PATH", Value: "/bin"}, {Name: "HOME", Value: "/h"}, {Name: "bad-name", Value: "1"}},
		Env:     []abi.Pair{{Name: "HOME", Value: "/own"}, {Name: "V", Value: "a${B}!$"}, {Name: "T", Value: "{{loadout.secret.1}}", Secret: true}}}
	tests := []struct {
		name  string
		style SpawnStyle
		cwd   string
		want  Spawn
	}{
		{"verbatim", SpawnVerbatim, "", Spawn{
			Command: "/usr/bin/env",
			Args:    []string{"-i", "-S", "PATH=${LOADOUT_SPAWN_1} HOME=${LOADOUT_SPAWN_2} V=${LOADOUT_SPAWN_3} T=${LOADOUT_SPAWN_4}", "/bin/srv", "--x", "${HOME}"},
			Env: []abi.Pair{{Name: "LOADOUT_SPAWN_1", Value: "/bin"}, {Name: "LOADOUT_SPAWN_2", Value: "/own"}, {Name: "LOADOUT_SPAWN_3", Value: "a${B}!$"},
				{Name: "LOADOUT_SPAWN_4", Value: "{{loadout.secret.1}}", Secret: true}},
			Skipped: []string{"bad-name"}}},
		{"claude", SpawnClaude, "/w${X}", Spawn{
			Command: "/usr/bin/env",
			Args: []string{"-i", "-C", "/w${LOADOUT_SPAWN_DOLLAR:-$}{X}", "-S",
				"PATH=${LOADOUT_SPAWN_DOLLAR:-$}{LOADOUT_SPAWN_1} HOME=${LOADOUT_SPAWN_DOLLAR:-$}{LOADOUT_SPAWN_2} V=${LOADOUT_SPAWN_DOLLAR:-$}{LOADOUT_SPAWN_3}${LOADOUT_SPAWN_DOLLAR:-$}{LOADOUT_SPAWN_4} T=${LOADOUT_SPAWN_DOLLAR:-$}{LOADOUT_SPAWN_5}",
				"/bin/srv", "--x", "${LOADOUT_SPAWN_DOLLAR:-$}{HOME}"},
			Env: []abi.Pair{{Name: "LOADOUT_SPAWN_1", Value: "/bin"}, {Name: "LOADOUT_SPAWN_2", Value: "/own"}, {Name: "LOADOUT_SPAWN_3", Value: "a$"},
				{Name: "LOADOUT_SPAWN_4", Value: "{B}!$"}, {Name: "LOADOUT_SPAWN_5", Value: "{{loadout.secret.1}}", Secret: true}},
			Skipped: []string{"bad-name"}}},
		{"pi", SpawnPi, "", Spawn{
			Command: "/usr/bin/env",
			Args:    []string{"-i", "-S", "PATH=${LOADOUT_SPAWN_1} HOME=${LOADOUT_SPAWN_2} V=${LOADOUT_SPAWN_3} T=${LOADOUT_SPAWN_4}", "/bin/srv", "--x", "${HOME}"},
			Env: []abi.Pair{{Name: "LOADOUT_SPAWN_1", Value: "/bin"}, {Name: "LOADOUT_SPAWN_2", Value: "/own"}, {Name: "LOADOUT_SPAWN_3", Value: "a$${B}!$$"},
				{Name: "LOADOUT_SPAWN_4", Value: "{{loadout.secret.1}}", Secret: true}},
			Skipped: []string{"bad-name"}}},
	}
	for _, tc := range tests {
		got, err := WrapSpawn(tc.style, server, tc.cwd)
		require.NoError(t, err, "WrapSpawn(%s)", tc.name)
		assert.Equal(t, tc.want, got, "WrapSpawn(%s)", tc.name)
	}

	got, err := WrapSpawn(SpawnVerbatim, abi.Server{Command: "x"}, "")
	require.NoError(t, err, "WrapSpawn with no env")
	assert.Equal(t, []string{"-i", "x"}, got.Args, "WrapSpawn with no env has no -S")
	_, err = WrapSpawn(SpawnVerbatim, abi.Server{Command: "A=b"}, "")
	assert.ErrorIs(t, err, ErrUnwrappable, "WrapSpawn of a command holding =")
}

func TestPiLiteral(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"plain": "plain", "$X": "$$X", "!cmd": "$!cmd", "a!b": "a!b", "${A}": "$${A}", "$!": "$$!", "!$": "$!$$"} {
		assert.Equal(t, want, PiLiteral(in), "PiLiteral(%q)", in)
	}
}

// claudeExpand models Claude Code's ${NAME} / ${NAME:-default} expansion (docs/SPAWN-ENV.md).
var claudeVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)

func claudeExpand(s string, env map[string]string) string {
	return claudeVar.ReplaceAllStringFunc(s, func(m string) string {
		sub := claudeVar.FindStringSubmatch(m)
		if v, ok := env[sub[1]]; ok {
			return v
		}
		if strings.Contains(m, ":-") {
			return sub[2]
		}
		return m
	})
}

// piResolve models Pi's value resolution for the spellings PiLiteral produces; it reports false
// when the value would run a command or read a variable.
func piResolve(s string) (string, bool) {
	if strings.HasPrefix(s, "!") {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch n := s[i+1]; {
		case n == '$' || n == '!':
			b.WriteByte(n)
			i++
		case n == '{' || n == '_' || n >= 'A' && n <= 'Z' || n >= 'a' && n <= 'z':
			return "", false
		default:
			b.WriteByte('$')
		}
	}
	return b.String(), true
}

// envS models GNU env -i -S SPEC: each NAME=REFS assignment, with ${ALIAS} read from aliases,
// then the operands SPEC carries (for Pi, the command and args up to the last one Pi would
// expand), each exactly one alias reference, which env does not split.
func envS(t *testing.T, spec string, aliases map[string]string) ([]abi.Pair, []string) {
	var out []abi.Pair
	var operands []string
	ref := regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	resolve := func(m string) string {
		v, ok := aliases[m[2:len(m)-1]]
		require.True(t, ok, "alias %s is defined", m)
		return v
	}
	for _, tok := range strings.Fields(spec) {
		name, refs, ok := strings.Cut(tok, "=")
		if !ok || operands != nil {
			require.Regexp(t, `^\$\{LOADOUT_SPAWN_[0-9]+\}$`, tok, "SPEC operand %q is one alias reference, after every assignment", tok)
			operands = append(operands, resolve(tok))
			continue
		}
		rest := ref.ReplaceAllStringFunc(refs, resolve)
		require.NotContains(t, ref.ReplaceAllString(refs, ""), "$", "SPEC token %q holds only references", tok)
		out = append(out, abi.Pair{Name: name, Value: rest})
	}
	return out, operands
}

// FuzzWrapSpawn runs the wrapped launch through models of each harness and of env -S and checks
// the server gets exactly its spawn environment and its own command and args.
func FuzzWrapSpawn(f *testing.F) {
	for _, s := range trickyStrings() {
		f.Add(s, "${HOME}"+s, "!"+s)
	}
	f.Fuzz(func(t *testing.T, v1, v2, arg string) {
		s := abi.Server{Command: "/bin/srv", Args: []string{arg},
			HostEnv: []abi.Pair{{Name: "HOME", Value: v1}, {Name: "PATH", Value: "/bin"}},
			Env:     []abi.Pair{{Name: "A", Value: v2}, {Name: "HOME", Value: v2 + v1}}}
		want := []abi.Pair{{Name: "HOME", Value: v2 + v1}, {Name: "PATH", Value: "/bin"}, {Name: "A", Value: v2}}
		harnessEnv := map[string]string{"HOME": "/harness", "ANTHROPIC_API_KEY": "k", "B": "b"}
		for _, style := range []SpawnStyle{SpawnVerbatim, SpawnClaude, SpawnPi} {
			sp, err := WrapSpawn(style, s, "")
			require.NoError(t, err, "WrapSpawn(%v)", style)
			aliases := map[string]string{}
			for _, p := range sp.Env {
				switch style {
				case SpawnClaude:
					aliases[p.Name] = claudeExpand(p.Value, harnessEnv)
				case SpawnPi:
					v, ok := piResolve(p.Value)
					require.True(t, ok, "Pi must read %q literally", p.Value)
					aliases[p.Name] = v
				default:
					aliases[p.Name] = p.Value
				}
			}
			args := append([]string(nil), sp.Args...)
			if style == SpawnClaude {
				for i := range args {
					args[i] = claudeExpand(args[i], harnessEnv)
				}
			}
			require.Equal(t, "-i", args[0], "style %v: env -i", style)
			require.Equal(t, "-S", args[1], "style %v: env -S", style)
			env, operands := envS(t, args[2], aliases)
			assert.Equal(t, want, env, "style %v: the server's environment", style)
			if style != SpawnPi {
				assert.Empty(t, operands, "style %v: no operand in SPEC", style)
			}
			for _, a := range args[3:] {
				assert.False(t, style == SpawnPi && ExpandsTilde(a), "Pi would replace the operand %q by its HOME", a)
			}
			assert.Equal(t, []string{"/bin/srv", arg}, append(operands, args[3:]...), "style %v: the server's command and args", style)

			un, err := UnwrapSpawn(style, sp.Command, sp.Args, sp.Env)
			require.NoError(t, err, "UnwrapSpawn(%v) of WrapSpawn's output", style)
			assert.Equal(t, Unwrapped{Command: "/bin/srv", Args: []string{arg}, Env: want}, un, "style %v: UnwrapSpawn inverts WrapSpawn", style)
		}
	})
}

func TestUnwrapSpawn(t *testing.T) {
	t.Parallel()
	server := abi.Server{Command: "/bin/srv", Args: []string{"${X}", "!y"}, Cwd: "/w ${Y}",
		Env: []abi.Pair{{Name: "A", Value: "!a ${B} $C"}, {Name: "T", Value: "{{loadout.secret.1}}", Secret: true}}}
	want := Unwrapped{Command: "/bin/srv", Args: []string{"${X}", "!y"}, Cwd: "/w ${Y}",
		Env: []abi.Pair{{Name: "A", Value: "!a ${B} $C"}, {Name: "T", Value: "{{loadout.secret.1}}"}}}
	for _, style := range []SpawnStyle{SpawnVerbatim, SpawnClaude, SpawnPi} {
		sp, err := WrapSpawn(style, server, server.Cwd)
		require.NoError(t, err, "WrapSpawn(%v)", style)
		got, err := UnwrapSpawn(style, sp.Command, sp.Args, sp.Env)
		require.NoError(t, err, "UnwrapSpawn(%v)", style)
		assert.Equal(t, want, got, "UnwrapSpawn(%v) of WrapSpawn's output", style)
	}

	alias := []abi.Pair{{Name: "LOADOUT_SPAWN_1", Value: "v"}}
	tests := []struct {
		name    string
		style   SpawnStyle
		command string
		args    []string
		env     []abi.Pair
	}{
		{"other command", SpawnVerbatim, "/bin/sh", []string{"-i", "x"}, nil},
		{"no -i", SpawnVerbatim, SpawnCommand, []string{"x"}, nil},
		{"no command", SpawnVerbatim, SpawnCommand, []string{"-i"}, nil},
		{"option as command", SpawnVerbatim, SpawnCommand, []string{"-i", "-u", "x"}, nil},
		{"assignment as command", SpawnVerbatim, SpawnCommand, []string{"-i", "A=b", "x"}, nil},
		{"literal in -S", SpawnVerbatim, SpawnCommand, []string{"-i", "-S", "A=lit", "x"}, nil},
		{"undefined alias", SpawnVerbatim, SpawnCommand, []string{"-i", "-S", "A=${LOADOUT_SPAWN_2}", "x"}, alias},
		{"unused alias", SpawnVerbatim, SpawnCommand, []string{"-i", "x"}, alias},
		{"alias used twice", SpawnVerbatim, SpawnCommand, []string{"-i", "-S", "A=${LOADOUT_SPAWN_1} B=${LOADOUT_SPAWN_1}", "x"}, alias},
		{"extra env key", SpawnVerbatim, SpawnCommand, []string{"-i", "x"}, []abi.Pair{{Name: "LD_PRELOAD", Value: "x"}}},
		{"claude expansion in args", SpawnClaude, SpawnCommand, []string{"-i", "x", "${HOME}"}, nil},
		{"claude expansion in alias", SpawnClaude, SpawnCommand, []string{"-i", "-S", "A=" + ClaudeDollar + "{LOADOUT_SPAWN_1}", "x"}, []abi.Pair{{Name: "LOADOUT_SPAWN_1", Value: "${HOME}"}}},
		{"pi command in alias", SpawnPi, SpawnCommand, []string{"-i", "-S", "A=${LOADOUT_SPAWN_1}", "x"}, []abi.Pair{{Name: "LOADOUT_SPAWN_1", Value: "!id"}}},
		{"pi variable in alias", SpawnPi, SpawnCommand, []string{"-i", "-S", "A=${LOADOUT_SPAWN_1}", "x"}, []abi.Pair{{Name: "LOADOUT_SPAWN_1", Value: "a$HOME"}}},
	}
	for _, tc := range tests {
		_, err := UnwrapSpawn(tc.style, tc.command, tc.args, tc.env)
		assert.ErrorIs(t, err, ErrNotSpawn, "UnwrapSpawn(%s) must refuse the launch", tc.name)
	}
}

func TestPiUnliteral(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"", "plain", "$", "$$", "!", "!x$", "$!", "a$b", "${X}", "!$!$$"} {
		got, ok := PiUnliteral(PiLiteral(v))
		assert.True(t, ok, "PiUnliteral(PiLiteral(%q)) must succeed", v)
		assert.Equal(t, v, got, "PiUnliteral(PiLiteral(%q))", v)
	}
}

func TestHeaderObject(t *testing.T) {
	obj, secret := HeaderObject([]abi.Pair{
		{Name: "X-Plain", Value: "a${HOME}b"},
		{Name: "Authorization", Value: "{{loadout.secret.1}}", Secret: true},
	}, ClaudeLiteral)
	got, err := MarshalJSON(obj)
	require.NoError(t, err, "MarshalJSON(HeaderObject)")
	assert.Equal(t, "{\n  \"X-Plain\": \"a"+ClaudeDollar+"{HOME}b\",\n  \"Authorization\": \"{{loadout.secret.1}}\"\n}\n", string(got),
		"a plain value is spelled literally, a secret placeholder is kept, request order holds")
	assert.True(t, secret, "HeaderObject reports the secret header")

	obj, secret = HeaderObject([]abi.Pair{{Name: "X", Value: "$x"}}, PiLiteral)
	v, _ := obj.Get("X")
	assert.Equal(t, "$$x", v, "PiLiteral spells the plain value")
	assert.False(t, secret, "no secret header")
}

func TestWrapSpawnGemini(t *testing.T) {
	s := abi.Server{ID: "g", Transport: abi.TransportStdio, Command: "/bin/$x", Args: []string{"a${HOME}"},
		HostEnv: []abi.Pair{{Name: "HOME", Value: `/h$ \`}}, Env: []abi.Pair{{Name: "T", Value: "{{loadout.secret.1}}", Secret: true}}}
	sp, err := WrapSpawn(SpawnGemini, s, "/w$")
	if err != nil {
		t.Fatal(err)
	}
	d := ClaudeDollar
	want := []string{"-i", "-C", "/w" + d, "-S", "HOME=" + d + "{LOADOUT_SPAWN_1} T=" + d + "{LOADOUT_SPAWN_2}", "/bin/" + d + "x", "a" + d + "{HOME}"}
	if !slices.Equal(sp.Args, want) {
		t.Fatalf("args = %q, want %q", sp.Args, want)
	}
	if sp.Env[0].Value != `/h\`+d+` \` || sp.Env[1].Value != "{{loadout.secret.1}}" {
		t.Fatalf("env = %+v", sp.Env)
	}
	got, err := UnwrapSpawn(SpawnGemini, sp.Command, sp.Args, sp.Env)
	if err != nil {
		t.Fatal(err)
	}
	if got.Command != s.Command || !slices.Equal(got.Args, s.Args) || got.Cwd != "/w$" || got.Env[0].Value != `/h$ \` {
		t.Fatalf("unwrapped = %+v", got)
	}
	if _, ok := GeminiValueUnliteral("$HOME"); ok {
		t.Fatal(`GeminiValueUnliteral("$HOME") accepted`)
	}
	if _, ok := GeminiUnliteral("${HOME}"); ok {
		t.Fatal(`GeminiUnliteral("${HOME}") accepted`)
	}
}

func TestWrapSpawnCopilot(t *testing.T) {
	s := abi.Server{ID: "c", Transport: abi.TransportStdio, Command: "/bin/$x", Args: []string{"a${HOME}"},
		HostEnv: []abi.Pair{{Name: "HOME", Value: `/h$ \`}}, Env: []abi.Pair{{Name: "T", Value: "{{loadout.secret.1}}", Secret: true}}}
	sp, err := WrapSpawn(SpawnCopilot, s, "/w$")
	if err != nil {
		t.Fatal(err)
	}
	d := ClaudeDollar
	want := []string{"-i", "-C", "/w" + d, "-S", "HOME=" + d + "{LOADOUT_SPAWN_1} T=" + d + "{LOADOUT_SPAWN_2}", "/bin/" + d + "x", "a" + d + "{HOME}"}
	if !slices.Equal(sp.Args, want) {
		t.Fatalf("args = %q, want %q", sp.Args, want)
	}
	// Copilot expands env values once, like args: no backslash (Gemini's second-pass escape).
	if sp.Env[0].Value != `/h`+d+` \` || sp.Env[1].Value != "{{loadout.secret.1}}" {
		t.Fatalf("env = %+v", sp.Env)
	}
	got, err := UnwrapSpawn(SpawnCopilot, sp.Command, sp.Args, sp.Env)
	if err != nil {
		t.Fatal(err)
	}
	if got.Command != s.Command || !slices.Equal(got.Args, s.Args) || got.Cwd != "/w$" || got.Env[0].Value != `/h$ \` {
		t.Fatalf("unwrapped = %+v", got)
	}
	for _, v := range []string{"$HOME", "${HOME}", `\` + d + "x" + "$"} {
		if _, ok := CopilotUnliteral(v); ok {
			t.Fatalf("CopilotUnliteral(%q) accepted; Copilot would expand it", v)
		}
	}
}

// TestWrapSpawnCopilotLong: a SPEC longer than Copilot expands is written in the long form
// (plain references, padded past CopilotExpandMax), and UnwrapSpawn reads it back exactly.
func TestWrapSpawnCopilotLong(t *testing.T) {
	s := abi.Server{ID: "c", Transport: abi.TransportStdio, Command: "/bin/srv"}
	for i := range 50 {
		s.Env = append(s.Env, abi.Pair{Name: "WIDE_" + strconv.Itoa(i), Value: "v$x"})
	}
	sp, err := WrapSpawn(SpawnCopilot, s, "")
	if err != nil {
		t.Fatal(err)
	}
	spec := sp.Args[2]
	if len(spec) <= CopilotExpandMax || strings.Contains(spec, ClaudeDollar) || !strings.HasPrefix(spec, "WIDE_0=${LOADOUT_SPAWN_1} ") {
		t.Fatalf("spec (%d characters) = %q, want plain references past %d characters", len(spec), spec, CopilotExpandMax)
	}
	got, err := UnwrapSpawn(SpawnCopilot, sp.Command, sp.Args, sp.Env)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Env, s.Env) {
		t.Fatalf("unwrapped env = %+v, want %+v", got.Env, s.Env)
	}
	// A short SPEC keeps its escaped references; two variables fit.
	s.Env = s.Env[:2]
	sp, err = WrapSpawn(SpawnCopilot, s, "")
	if err != nil || !strings.HasPrefix(sp.Args[2], "WIDE_0="+ClaudeDollar+"{LOADOUT_SPAWN_1}") {
		t.Fatalf("short spec = %q, %v", sp.Args[2], err)
	}
}

// TestWrapSpawnPiTilde: Pi replaces an arg that is "~" or starts with "~/" by its HOME, so the
// command and args up to the last such one travel as operand references in SPEC, and
// UnwrapSpawn reads them back; left on the command line, such an arg is refused.
func TestWrapSpawnPiTilde(t *testing.T) {
	s := abi.Server{ID: "p", Transport: abi.TransportStdio, Command: "/bin/srv", Args: []string{"~", "!x $y", "~/", "a~/x"},
		Env: []abi.Pair{{Name: "T", Value: "v"}}}
	sp, err := WrapSpawn(SpawnPi, s, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-i", "-S", "T=${LOADOUT_SPAWN_1} ${LOADOUT_SPAWN_2} ${LOADOUT_SPAWN_3} ${LOADOUT_SPAWN_4} ${LOADOUT_SPAWN_5}", "a~/x"}
	if !slices.Equal(sp.Args, want) || sp.Env[3].Value != "$!x $$y" {
		t.Fatalf("args = %q, env = %+v", sp.Args, sp.Env)
	}
	got, err := UnwrapSpawn(SpawnPi, sp.Command, sp.Args, sp.Env)
	if err != nil {
		t.Fatal(err)
	}
	if got.Command != s.Command || !slices.Equal(got.Args, s.Args) || !slices.Equal(got.Env, s.Env) {
		t.Fatalf("unwrapped = %+v", got)
	}
	if _, err := UnwrapSpawn(SpawnPi, SpawnCommand, []string{"-i", "/bin/srv", "~/x"}, nil); err == nil {
		t.Fatal("UnwrapSpawn accepted ~/x on Pi's command line")
	}
	// Other harnesses leave "~" alone: nothing moves.
	sp, _ = WrapSpawn(SpawnVerbatim, s, "")
	if sp.Args[len(sp.Args)-4] != "~" {
		t.Fatalf("codex args = %q", sp.Args)
	}
}
