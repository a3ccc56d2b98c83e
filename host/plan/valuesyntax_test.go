package plan

import (
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/sdk/valuesyntax"
)

// presetData is each named value syntax written as data (valuesyntax.Pass), as the built-in
// profiles write it.
var presetData = map[string][]valuesyntax.Pass{
	"claude-dollar":  {{Expands: []string{valuesyntax.FormBrace, valuesyntax.FormBraceDefault}, Dollar: valuesyntax.DollarRefDefault}},
	"pi-dollar-bang": {{Expands: []string{valuesyntax.FormName, valuesyntax.FormBrace, valuesyntax.FormCommand}, Dollar: valuesyntax.DollarDouble, Bang: "$!"}},
	"gemini-dollar": {
		{Expands: []string{valuesyntax.FormName, valuesyntax.FormBrace, valuesyntax.FormBraceDefault}, Dollar: valuesyntax.DollarRefDefault},
		{Expands: []string{valuesyntax.FormName, valuesyntax.FormBrace}, Dollar: valuesyntax.DollarBackslash},
	},
	"copilot-dollar": {{Expands: []string{valuesyntax.FormName, valuesyntax.FormBrace, valuesyntax.FormBraceDefault}, Dollar: valuesyntax.DollarRefDefault}},
}

// syntaxSamples are strings around every spelling the syntaxes use, and their parts.
var syntaxSamples = []string{
	"", "plain", "$", "$$", "$!", "!", "!x", "!$", "$x", "${x}", "${", "a$", "a${b}c", `\$`, `\\$`, `\`,
	"${LOADOUT_SPAWN_DOLLAR:-$}", "${LOADOUT_SPAWN_DOLLAR:-$}{x}", `\${LOADOUT_SPAWN_DOLLAR:-$}`,
	"${LOADOUT_SPAWN_DOLLAR:-$", "x${LOADOUT_SPAWN_DOLLAR:-$}y$", "$${x}", "$!$$", "!!", "a!b", "{x}", "$}",
	"${LOADOUT_SPAWN_DOLLAR}", `\\${LOADOUT_SPAWN_DOLLAR:-$}x`, "$$$", "${LOADOUT_SPAWN_DOLLAR:-${LOADOUT_SPAWN_DOLLAR:-$}}",
}

// compareSyntax wants the data-driven syntax to spell, read and spell secrets exactly as the
// measured functions do, for 0 to 3 passes.
func compareSyntax(t *testing.T, name, s string) {
	t.Helper()
	old := measured[name]
	sx := valuesyntax.MustCompile(presetData[name])
	for n := 0; n <= 3; n++ {
		spell, read, secret := old.compose(n)
		if got, want := sx.Spell(s, n), spell(s); got != want {
			t.Errorf("%s: Spell(%q, %d) = %q, the measured spelling is %q", name, s, n, got, want)
		}
		got, gotOK := sx.Read(s, n)
		want, wantOK := read(s)
		if got != want || gotOK != wantOK {
			t.Errorf("%s: Read(%q, %d) = %q, %t; the measured reading is %q, %t", name, s, n, got, gotOK, want, wantOK)
		}
		wantSecret := s
		if secret != nil {
			wantSecret = secret(s)
		}
		if got := sx.Secret(s, n); got != wantSecret {
			t.Errorf("%s: Secret(%q, %d) = %q, the measured secret spelling is %q", name, s, n, got, wantSecret)
		}
	}
}

// TestValueSyntaxDataMatchesMeasured: each named syntax written as data behaves byte for byte
// as the functions measured against its CLI, on every sample and every pair of samples.
func TestValueSyntaxDataMatchesMeasured(t *testing.T) {
	for name := range presetData {
		for _, a := range syntaxSamples {
			compareSyntax(t, name, a)
			for _, b := range syntaxSamples {
				compareSyntax(t, name, a+b)
			}
		}
	}
}

func FuzzValueSyntaxData(f *testing.F) {
	for _, s := range syntaxSamples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 256 || strings.ContainsRune(s, 0) {
			return
		}
		for name := range presetData {
			compareSyntax(t, name, s)
		}
	})
}
