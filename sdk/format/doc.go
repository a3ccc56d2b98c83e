// Package format holds the encoders every renderer plugin uses to write harness files: an
// ordered JSON writer, a TOML writer and a SKILL.md front-matter writer, plus the portable
// skill-name rule those files must satisfy.
//
// The package owns the exact bytes loadout emits, so renderer goldens can compare byte for byte.
// Nothing here is built by string interpolation of untrusted values: every string goes through
// an escaper. The skill helpers (PrepareSkills, SkillFiles, FoldSkills, PlaceSkills) place skills the same way
// for every renderer, and WrapSpawn builds the env -i launch that pins a stdio server to its
// spawn environment (docs/SPAWN-ENV.md), its SpawnStyle (the harness's value syntax and passes,
// from its profile) spelling literal values so that the harness's own expansion gives them back
// unchanged (HeaderObject spells header values so). The package uses the standard library,
// sdk/abi and sdk/valuesyntax only (no third-party module), so it builds small for GOOS=wasip1, and it holds no mutable package state: every
// function is safe for concurrent use. An *Object or a TOMLDocument is an ordinary value owned by
// whoever built it; it is not safe for concurrent mutation.
package format
