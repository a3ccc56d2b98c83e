package plan

import (
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/sdk/valuesyntax"
)

func TestGeminiSpelling(t *testing.T) {
	const d = "${LOADOUT_SPAWN_DOLLAR:-$}"
	tests := []struct{ in, literal, value string }{
		{"plain", "plain", "plain"},
		{"$", d, `\` + d},
		{"a$HOME", "a" + d + "HOME", `a\` + d + "HOME"},
		{"${HOME}", d + "{HOME}", `\` + d + "{HOME}"},
		{`\$x`, `\` + d + "x", `\\` + d + "x"},
		{`!"'\`, `!"'\`, `!"'\`},
	}
	for _, tt := range tests {
		if got := everyDollarLiteral(tt.in); got != tt.literal {
			t.Errorf("everyDollarLiteral(%q) = %q, want %q", tt.in, got, tt.literal)
		}
		if got := everyDollarValueLiteral(tt.in); got != tt.value {
			t.Errorf("everyDollarValueLiteral(%q) = %q, want %q", tt.in, got, tt.value)
		}
		if got, ok := everyDollarURL(tt.literal); !ok || got != tt.in {
			t.Errorf("everyDollarURL(%q) = %q, %t, want %q", tt.literal, got, ok, tt.in)
		}
		if got, ok := everyDollarValue(tt.value); !ok || got != tt.in {
			t.Errorf("everyDollarValue(%q) = %q, %t, want %q", tt.value, got, ok, tt.in)
		}
	}
	// What Gemini would expand is refused.
	for _, s := range []string{"$HOME", "${HOME}", "a$", d, `\$HOME`, "${LOADOUT_SPAWN_DOLLAR:-x}"} {
		if _, ok := everyDollarValue(s); ok {
			t.Errorf("everyDollarValue(%q) accepted; Gemini would expand it", s)
		}
	}
	for _, s := range []string{"$HOME", "${HOME}", "a$", `\` + d + "$"} {
		if _, ok := everyDollarURL(s); ok {
			t.Errorf("everyDollarURL(%q) accepted; Gemini would expand it", s)
		}
	}
}

// geminiFirstPass is Gemini CLI 0.61.0's settings expansion (resolveEnvVarsInString) with an
// empty environment: ${NAME:-default} gives default, anything else stays.
func geminiFirstPass(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '$' && strings.HasPrefix(s[i+1:], "{") {
			if end := strings.IndexByte(s[i:], '}'); end > 2 {
				body := s[i+2 : i+end]
				if name, def, ok := strings.Cut(body, ":-"); ok && name != "" {
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

// geminiSecondPass is dotenv-expand's escape rule for a value without unescaped "$": "\$" → "$".
func geminiSecondPass(s string) string { return strings.ReplaceAll(s, `\$`, "$") }

func FuzzGeminiSpelling(f *testing.F) {
	for _, s := range []string{"", "$", "a$HOME", "${HOME}", `\$x`, `!e2e-canary-$ecret-${HOME}-\"'`, "$$", `\\$`} {
		f.Add(s, "x")
	}
	f.Fuzz(func(t *testing.T, s, next string) {
		lit, val := everyDollarLiteral(s), everyDollarValueLiteral(s)
		if got, ok := everyDollarURL(lit); !ok || got != s {
			t.Fatalf("everyDollarURL(everyDollarLiteral(%q)) = %q, %t", s, got, ok)
		}
		if got, ok := everyDollarValue(val); !ok || got != s {
			t.Fatalf("everyDollarValue(everyDollarValueLiteral(%q)) = %q, %t", s, got, ok)
		}
		if strings.Contains(s, "}") || strings.Contains(next, "}") {
			return // the model of the first pass below is exact only without "}" in the text
		}
		if got := geminiFirstPass(lit); got != s {
			t.Fatalf("first pass of everyDollarLiteral(%q) = %q", s, got)
		}
		// A secret spelled and placed next to spelled text reads back as both.
		joined := everyDollarValueLiteral(s) + everyDollarValueLiteral(next)
		if got := geminiSecondPass(geminiFirstPass(joined)); got != s+next {
			t.Fatalf("both passes of %q = %q, want %q", joined, got, s+next)
		}
	})
}

// everyDollarValueLiteral and everyDollarValue are Gemini's two passes over an env or header
// value, composed: what the gemini-dollar syntax writes and reads there.
func everyDollarValueLiteral(s string) string {
	spell, _, _ := compose(valuesyntax.MustCompile(valueSyntaxes["gemini-dollar"].passes), 2)
	return spell(s)
}

func everyDollarValue(s string) (string, bool) {
	_, read, _ := compose(valuesyntax.MustCompile(valueSyntaxes["gemini-dollar"].passes), 2)
	return read(s)
}
