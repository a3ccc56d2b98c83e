package plan

// GitHub Copilot CLI 1.0.102 expands $NAME, ${NAME} and ${NAME:-default} once, from its own
// environment, in the command, args, env values, cwd, url and headers of every server of
// mcp-config.json (docs/FORMATS.md §5.2). An unset variable stays as written, the default
// applies only to an unset variable, and the result is not scanned again. There is no escape:
// "$$X" gives "$" and the value of X, "\$X" a backslash and the value. So a literal "$" is
// spelled dollarDefaultRef in every one of those strings, env values and headers included
// (unlike Gemini CLI, Copilot has no second pass), and the plan sets LOADOUT_SPAWN_DOLLAR to
// "$" so that an inherited value cannot change what it gives. Tool names are not expanded.

// everyDollarOnce reverses everyDollarLiteral for any string Copilot expands once (an env or
// header value, a url): what Copilot makes of s, and false when s holds a "$" Copilot would
// expand or a spelling everyDollarLiteral does not produce.
func everyDollarOnce(s string) (string, bool) {
	return everyDollarUnspell(s, dollarDefaultRef, everyDollarLiteral)
}
