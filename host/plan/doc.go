// Package plan decodes and checks the plan a renderer plugin returns. The plugin is untrusted
// (docs/SECURITY.md §3): Decode reads its output strictly, and Check holds the decoded plan to the
// rules of loadout — roots and paths, modes, formats, sizes, where each placeholder may appear —
// and parses the harness's config back through the harness's profile and compares it with the
// vetted request, so that nothing the policy did not approve is written. A plan that passes
// becomes a *Checked, which only Check makes and which materialize takes: a render checks its
// plan once, and an unchecked plan cannot be written.
//
// The package owns its input types (Input, Secret, Blob, Limits) so that it depends on the wire
// contract (sdk/abi) only; the pipeline adapts the policy's vetted output to them. Every
// function is pure and safe for concurrent use; nothing here keeps state between calls.
//
// Every harness is known from its profile only (docs/PROFILES.md): the model and what it
// interprets — the value syntax and its passes (sdk/valuesyntax), tool names and rule templates
// — live in sdk/profile, which plugins read too; ParseProfile reads a profile.yaml
// (sdk/profile/profileyaml) and compiles from it the rules only the checker needs (profile.go,
// harness.go): the paths a plugin may write, the config file and what each server key means,
// the args and env a plugin may return (argsenv.go), the spawn wrapper (spawn.go), the skills
// layout (skills.go). A plugin whose harness has no reviewed profile is refused.
//
// Config read-back: the config is read through the profile by sdk/profile/readback (the one
// reader of a config; ReadConfig and ConfigServers run it over a written file), which reports
// every key the layout does not allow, and compared with the vetted request here (harness.go,
// oauth.go). Only the servers table, the profile's topKeys (booleans) and its pinned keys
// (exactly the pinned values) may appear at the top level; each server may carry only the keys
// its profile lists, each read by its meaning; an OAuth setting or lifecycle (oauth.go) carries
// exactly the vetted values, read through the profile's oauth keys; the rendered server ids are
// the vetted ones, in request order, and a vetted enabled server may be missing only when a
// warning names it; url equals the vetted one and each header value the vetted value at the same
// key, every string read as the harness reads it, through the passes the profile counts at its
// position; tool grants stay within the vetted allowedTools, spelled as the profile's tools.names
// and tools.rules say; and every secret placeholder sits at exactly the server, field and key the
// vetted request gave it. A violation names the key or flag as the profile spells it.
//
// A stdio server comes in one of two forms. Verbatim: command and args are the vetted ones
// (spelled for the harness) and each env value equals the vetted value at the same key (or pins
// a HostEnv variable to its vetted value). Wrapped (docs/SPAWN-ENV.md, spawn.go): command
// /usr/bin/env, args -i, [-C <vetted cwd>] (a harness without a cwd key), [-S SPEC], then the
// vetted command and args; SPEC is a space-separated list of NAME=<alias reference> tokens and
// the env map holds only the aliases LOADOUT_SPAWN_1, 2, … it references, each exactly once and
// in order. Check decodes both the way the harness and GNU env will and requires the
// environment the server gets to be exactly its vetted spawn env (HostEnv, then Env, a repeated
// name at its first position with its last value), each secret landing at its vetted key. The
// wrapper's rule codes are RuleSpawnWrapper, RuleSpawnSpec, RuleSpawnAlias and RuleSpawnEnv.
package plan
