package plan

import "testing"

// TestClaudeReadBack: Claude Code expands ${NAME:-default} anywhere, so dollarDefaultRef reads
// as "$" wherever it stands, before "{" (a literal "${") or not (a secret's trailing "$"); any
// other "${" is Claude's to expand.
func TestClaudeReadBack(t *testing.T) {
	const d = dollarDefaultRef
	for _, in := range []string{"", "plain", "$", "end$", "${HOME}", "a${", "$x ${y:-z} $(id) !b \\ 'q' \"d\"", "${" + dollarDefaultVar + ":-$}"} {
		if got, ok := dollarBraceValue(dollarBraceLiteral(in)); !ok || got != in {
			t.Errorf("dollarBraceValue(dollarBraceLiteral(%q)) = %q, %t", in, got, ok)
		}
		if got, ok := dollarBraceValue(dollarBraceSecret(in)); !ok || got != in {
			t.Errorf("dollarBraceValue(dollarBraceSecret(%q)) = %q, %t", in, got, ok)
		}
	}
	for in, want := range map[string]string{d: "$", "a" + d + "b": "a$b", d + "{x}": "${x}", "t" + d + d + "{": "t$${"} {
		if got, ok := dollarBraceValue(in); !ok || got != want {
			t.Errorf("dollarBraceValue(%q) = %q, %t, want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"${HOME}", "a${", "${" + dollarDefaultVar + ":-x}", "${" + dollarDefaultVar + "}"} {
		if _, ok := dollarBraceValue(in); ok {
			t.Errorf("dollarBraceValue(%q) accepted; Claude would expand it", in)
		}
	}
}

// TestPiReadBack: Pi reads "$$" as "$" and "$!" as "!" anywhere in an env or header value, so
// piValue reverses both the literal and the secret spelling; a leading "!" runs a command and
// any other "$" expands.
func TestPiReadBack(t *testing.T) {
	for _, in := range []string{"", "plain", "$", "end$", "!lead", "a!b", "$HOME ${X} $(id) !b \\ 'q' \"d\"", "$!", "$$"} {
		if got, ok := piValue(piLiteral(in)); !ok || got != in {
			t.Errorf("piValue(piLiteral(%q)) = %q, %t", in, got, ok)
		}
		if got, ok := piValue(piSecret(in)); !ok || got != in {
			t.Errorf("piValue(piSecret(%q)) = %q, %t", in, got, ok)
		}
	}
	for _, in := range []string{"!cmd", "$HOME", "${HOME}", "a$", "$(id)", "x$y"} {
		if _, ok := piValue(in); ok {
			t.Errorf("piValue(%q) accepted; Pi would expand or run it", in)
		}
	}
}
