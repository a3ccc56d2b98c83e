package plan

import "strings"

// Gemini CLI 0.61.0 expands its settings twice (docs/FORMATS.md §5.1). When it loads
// settings.json it replaces $NAME, ${NAME} and ${NAME:-default} in every string from its own
// environment, in one left-to-right pass; the env values and headers of an MCP server then go
// through dotenv-expand, which expands $NAME and ${NAME} again (repeatedly) and turns "\$" into
// a literal "$". Neither pass has an escape of its own for the first pass, so a literal "$" is
// spelled claudeDollar ("${LOADOUT_SPAWN_DOLLAR:-$}"), which the first pass turns into "$"
// while LOADOUT_SPAWN_DOLLAR is unset or "$" (the plan sets it to "$"); in env values and
// headers it is preceded by "\" so that the second pass keeps it. Backslashes elsewhere and
// every other character pass both unchanged.

// geminiLiteral spells s for a string Gemini expands once (command, args, cwd, url): every "$"
// as claudeDollar.
func geminiLiteral(s string) string { return strings.ReplaceAll(s, "$", claudeDollar) }

// geminiValueLiteral spells s for an env or header value, which Gemini expands twice: every "$"
// as "\" + claudeDollar. It is also the spelling of a secret, wherever in a value it lands:
// the spelling is per character, so a spelled secret next to spelled text reads back as both.
func geminiValueLiteral(s string) string { return strings.ReplaceAll(s, "$", `\`+claudeDollar) }

// geminiUnspell reads s back where every "$" must be spelled dollar, and reports false for
// any other "$" (which Gemini would expand) or a spelling that is not the canonical one.
func geminiUnspell(s, dollar string, spell func(string) string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], dollar) {
			b.WriteByte('$')
			i += len(dollar)
			continue
		}
		if s[i] == '$' {
			return "", false
		}
		b.WriteByte(s[i])
		i++
	}
	out := b.String()
	return out, spell(out) == s
}

// geminiValue reverses geminiValueLiteral: what Gemini makes of an env or header value, and
// false when the value holds a "$" it would expand.
func geminiValue(s string) (string, bool) {
	return geminiUnspell(s, `\`+claudeDollar, geminiValueLiteral)
}

// geminiURL reverses geminiLiteral for a url, which Gemini expands once.
func geminiURL(s string) (string, bool) { return geminiUnspell(s, claudeDollar, geminiLiteral) }
