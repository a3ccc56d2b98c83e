package valuesyntax_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/sdk/valuesyntax"
)

func TestCompileRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		pass valuesyntax.Pass
		want string
	}{
		{"no form", valuesyntax.Pass{Dollar: valuesyntax.DollarBackslash}, "expands nothing"},
		{"unknown form", valuesyntax.Pass{Expands: []string{"%NAME%"}}, "none of"},
		{"form twice", valuesyntax.Pass{Expands: []string{"$NAME", "$NAME"}}, "twice"},
		{"unknown dollar", valuesyntax.Pass{Expands: []string{"$NAME"}, Dollar: "$DOLLAR"}, "dollar"},
		{"default reference without the default form", valuesyntax.Pass{Expands: []string{"$NAME", "${NAME}"}, Dollar: valuesyntax.DollarRefDefault}, "${NAME:-default}"},
		{"reference without the brace form", valuesyntax.Pass{Expands: []string{"$NAME"}, Dollar: valuesyntax.DollarRef}, "${NAME}"},
		{"command without bang", valuesyntax.Pass{Expands: []string{"$NAME", "!command"}, Dollar: "$$"}, "bang"},
		{"bang without command", valuesyntax.Pass{Expands: []string{"$NAME"}, Dollar: "$$", Bang: "$!"}, "bang without"},
		{"command with another dollar", valuesyntax.Pass{Expands: []string{"$NAME", "!command"}, Dollar: `\$`, Bang: "$!"}, "needs dollar"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := valuesyntax.Compile([]valuesyntax.Pass{tc.pass})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestNewSyntaxWithoutAnEscape: a CLI that expands $NAME and ${NAME} with no escape and no
// default (Qwen Code's settings file) is described as data: with no dollar spelling a "$" is
// never a literal; with the reference to LOADOUT_SPAWN_DOLLAR it is spelled and read back.
func TestNewSyntaxWithoutAnEscape(t *testing.T) {
	t.Parallel()
	none := valuesyntax.MustCompile([]valuesyntax.Pass{{Expands: []string{"$NAME", "${NAME}"}}})
	assert.Equal(t, "a$b", none.Spell("a$b", 1), "Spell without a dollar spelling leaves the $")
	_, ok := none.Read("a$b", 1)
	assert.False(t, ok, "Read(a$b) without a dollar spelling: the CLI would expand $b")
	got, ok := none.Read("plain", 1)
	assert.True(t, ok)
	assert.Equal(t, "plain", got)

	ref := valuesyntax.MustCompile([]valuesyntax.Pass{{Expands: []string{"$NAME", "${NAME}"}, Dollar: valuesyntax.DollarRef}})
	assert.True(t, ref.NeedsDollarVar())
	spelled := ref.Spell("a$b${c}", 1)
	assert.Equal(t, "a${LOADOUT_SPAWN_DOLLAR}b${LOADOUT_SPAWN_DOLLAR}{c}", spelled)
	got, ok = ref.Read(spelled, 1)
	require.True(t, ok, "Read(%q)", spelled)
	assert.Equal(t, "a$b${c}", got)
	_, ok = ref.Read("${HOME}", 1)
	assert.False(t, ok, "Read(${HOME}): an expansion")
}

// TestSpellRead: for each kind of pass and count, Read(Spell(s)) and Read(Secret(s)) give s
// back, and a string with an unspelled expansion is refused.
func TestSpellRead(t *testing.T) {
	t.Parallel()
	syntaxes := map[string][]valuesyntax.Pass{
		"brace only":    {{Expands: []string{"${NAME}", "${NAME:-default}"}, Dollar: valuesyntax.DollarRefDefault}},
		"every dollar":  {{Expands: []string{"$NAME", "${NAME}", "${NAME:-default}"}, Dollar: valuesyntax.DollarRefDefault}},
		"two passes":    {{Expands: []string{"$NAME", "${NAME}", "${NAME:-default}"}, Dollar: valuesyntax.DollarRefDefault}, {Expands: []string{"$NAME"}, Dollar: valuesyntax.DollarBackslash}},
		"with commands": {{Expands: []string{"$NAME", "!command"}, Dollar: valuesyntax.DollarDouble, Bang: "$!"}},
		"doubling":      {{Expands: []string{"$NAME"}, Dollar: valuesyntax.DollarDouble}},
	}
	samples := []string{"", "x", "$", "$$", "${X}", "$X", "!rm", "a!b$", `\$`, "${LOADOUT_SPAWN_DOLLAR:-$}", "$!"}
	for name, passes := range syntaxes {
		sx := valuesyntax.MustCompile(passes)
		for n := 0; n <= 2; n++ {
			for _, s := range samples {
				got, ok := sx.Read(sx.Spell(s, n), n)
				assert.True(t, ok && got == s, "%s, %d passes: Read(Spell(%q)) = %q, %t", name, n, s, got, ok)
				got, ok = sx.Read(sx.Secret(s, n), n)
				assert.True(t, ok && got == s, "%s, %d passes: Read(Secret(%q)) = %q, %t", name, n, s, got, ok)
			}
			if n > 0 {
				_, ok := sx.Read("${HOME}", n)
				assert.False(t, ok, "%s, %d passes: Read(${HOME})", name, n)
			}
		}
	}
	var literal *valuesyntax.Syntax
	got, ok := literal.Read("${HOME}", 2)
	assert.True(t, ok && got == "${HOME}", "a literal syntax reads every string as it is")
}
