// Package e2e holds loadout's end-to-end tests: they render realistic requests with the loadout
// binary for each harness and load the result with the real agent CLIs (Claude Code, Codex, Pi,
// Gemini CLI, Copilot CLI, Qwen Code), offline, the way docs/FORMATS.md describes, then check that every
// server and skill arrived and that a stdio server's environment is exactly the spawn
// environment the policy allowed (docs/SPAWN-ENV.md). opencode, the Kilo Code CLI, Cline, the
// Continue CLI and Auggie, which have no renderer, are loaded only to record what keeps them out
// (docs/FORMATS.md §5.4, §5.6, §5.7, §5.8, §5.9).
//
// The CLIs come from scripts/clis.sh (.cache/clis); without them the tests are skipped with that
// command named, and under LOADOUT_REQUIRE_ALL=1 (test.sh) they fail. The package has
// no API: everything lives in its tests, and internal/canary is the stdio MCP server the tests
// use to observe what a harness passes to a server it spawns.
package e2e
