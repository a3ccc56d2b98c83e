package plan

import "strings"

// Gemini CLI 0.61.0 expands its settings twice (docs/FORMATS.md §5.1). When it loads
// settings.json it replaces $NAME, ${NAME} and ${NAME:-default} in every string from its own
// environment, in one left-to-right pass; the env values and headers of an MCP server then go
// through dotenv-expand, which expands $NAME and ${NAME} again (repeatedly) and turns "\$" into
// a literal "$". Neither pass has an escape of its own for the first pass, so a literal "$" is
// spelled dollarDefaultRef ("${LOADOUT_SPAWN_DOLLAR:-$}"), which the first pass turns into "$"
// while LOADOUT_SPAWN_DOLLAR is unset or "$" (the plan sets it to "$"); in env values and
// headers it is preceded by "\" so that the second pass keeps it. Backslashes elsewhere and
// every other character pass both unchanged.

// everyDollarLiteral spells s for a string Gemini expands once (command, args, cwd, url): every "$"
// as dollarDefaultRef.
func everyDollarLiteral(s string) string { return strings.ReplaceAll(s, "$", dollarDefaultRef) }

// everyDollarUnspell reads s back where every "$" must be spelled dollar, and reports false for
// any other "$" (which Gemini would expand) or a spelling that is not the canonical one.
func everyDollarUnspell(s, dollar string, spell func(string) string) (string, bool) {
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

// everyDollarURL reverses everyDollarLiteral for a url, which Gemini expands once.
func everyDollarURL(s string) (string, bool) {
	return everyDollarUnspell(s, dollarDefaultRef, everyDollarLiteral)
}

// dotenvLiteral spells s for Gemini's second pass over env values and headers (dotenv-expand):
// every "$" as "\$".
func dotenvLiteral(s string) string { return strings.ReplaceAll(s, "$", `\$`) }

// dotenvValue reverses dotenvLiteral: what dotenv-expand makes of s, and false when s holds a
// "$" it would expand.
func dotenvValue(s string) (string, bool) { return everyDollarUnspell(s, `\$`, dotenvLiteral) }
