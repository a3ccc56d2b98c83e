package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/redact"

	"github.com/loadout-dev/loadout/sdk/valuesyntax"
)

func TestCopilotSpelling(t *testing.T) {
	const d = "${LOADOUT_SPAWN_DOLLAR:-$}"
	vs := onePass("copilot-dollar")
	tests := []struct{ in, spelled string }{
		{"plain", "plain"},
		{"$", d},
		{"a$HOME", "a" + d + "HOME"},
		{"${HOME}", d + "{HOME}"},
		{`\$x`, `\` + d + "x"},
		{"$$", d + d},
		{`!"'\`, `!"'\`},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.spelled, vs.literal(tt.in), "copilot-dollar literal(%q)", tt.in)
		assert.Equal(t, tt.spelled, vs.spellSecret(tt.in), "copilot-dollar secret spelling(%q): the same in every field", tt.in)
		for what, read := range map[string]func(string) (string, bool){"value": vs.value, "url": vs.url, "unliteral": vs.unliteral} {
			got, ok := read(tt.spelled)
			assert.True(t, ok, "copilot-dollar %s(%q) refused", what, tt.spelled)
			assert.Equal(t, tt.in, got, "copilot-dollar %s(%q)", what, tt.spelled)
		}
	}
	// What Copilot would expand is refused.
	for _, s := range []string{"$HOME", "${HOME}", "a$", "$$", d + "$", "${LOADOUT_SPAWN_DOLLAR:-x}"} {
		got, ok := vs.value(s)
		assert.False(t, ok, "copilot-dollar value(%q) = %q accepted; Copilot would expand it", s, got)
	}
	// Gemini's env spelling is not Copilot's: Copilot would hand the backslash over.
	got, ok := vs.value(`\` + d + "x")
	assert.True(t, ok && got == `\$x`, "copilot-dollar value(Gemini's spelling of $x) = %q, %t, want the backslash kept", got, ok)
}

// copilotPass is Copilot CLI 1.0.102's expansion with an empty environment, as measured
// (docs/FORMATS.md §5.2): ${NAME:-default} gives default, $NAME and ${NAME} stay, one pass.
func copilotPass(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "${") {
			if end := strings.IndexByte(s[i:], '}'); end > 2 {
				if name, def, ok := strings.Cut(s[i+2:i+end], ":-"); ok && name != "" {
					b.WriteString(def)
					i += end + 1
					continue
				}
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// FuzzCopilotSpelling: a spelled string reads back, Copilot's pass gives it back, and a
// redactor fed SecretSpellings masks a secret wherever the copilot spelling of it lands.
func FuzzCopilotSpelling(f *testing.F) {
	for _, s := range []string{"", "$", "a$HOME", "${HOME}", `\$x`, `!e2e-canary-$ecret-${HOME}-\"'`, "$$", `\\$`} {
		f.Add(s, "x")
	}
	vs := onePass("copilot-dollar")
	f.Fuzz(func(t *testing.T, s, next string) {
		sp := vs.spellSecret(s)
		got, ok := vs.value(sp)
		require.True(t, ok, "value(spelling of %q) refused", s)
		require.Equal(t, s, got, "value(spelling of %q)", s)
		if !strings.Contains(s, "}") && !strings.Contains(next, "}") {
			// The model of Copilot's pass above is exact only without "}" in the text.
			require.Equal(t, s+next, copilotPass(sp+vs.literal(next)), "Copilot's pass of the spelled %q next to spelled %q", s, next)
		}
		if s == "" || strings.ContainsAny(s, redact.Mask) {
			return
		}
		spellings := SecretSpellings(s)
		require.Contains(t, spellings, sp, "SecretSpellings(%q) lacks the copilot spelling", s)
		out := redact.New(spellings).String(`{"env":{"A":"` + sp + `"}}`)
		require.NotContains(t, out, sp, "redacted config still holds the copilot spelling of %q", s)
	})
}

// onePassSyntax is one pass of a value syntax, composed, under the names the tests read.
type onePassSyntax struct {
	literal, spellSecret  func(string) string
	value, url, unliteral func(string) (string, bool)
}

func onePass(name string) onePassSyntax {
	spell, read, secret := compose(valuesyntax.MustCompile(valueSyntaxes[name].passes), 1)
	return onePassSyntax{literal: spell, spellSecret: secret, value: read, url: read, unliteral: read}
}
