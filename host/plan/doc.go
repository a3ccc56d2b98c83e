// Package plan decodes and checks the plan a renderer plugin returns. The plugin is untrusted
// (docs/SECURITY.md §3): Decode reads its output strictly, and Check holds the decoded plan to the
// rules of loadout — roots and paths, modes, formats, sizes, where each placeholder may appear —
// and, for the built-in harnesses (claude, codex, pi), parses the harness config back and
// compares it with the vetted request, so that nothing the policy did not approve is written.
//
// The package owns its input types (Input, Secret, Blob, Limits) so that it depends on the wire
// contract (sdk/abi) only; the pipeline adapts the policy's vetted output to them. Every
// function is pure and safe for concurrent use; nothing here keeps state between calls.
//
// The per-harness rules live in one table, builtinHarnesses (harness.go):
//
//	claude  run:mcp-servers.json (json)  config:skills/**  checkout:.cat-context/**
//	codex   config:config.toml (toml)    config:skills/**  checkout:.cat-context/**
//	pi      config:mcp.json (json)       config:skills/**  checkout:.cat-context/**
//
// A third-party harness gets the generic rules: anything under config and run, only
// .cat-context/** in the checkout, secrets in any secret file outside the checkout, and no
// config read-back.
//
// Config read-back: only the servers table, the profile's topKeys (booleans) and its pinned
// keys (exactly the pinned values, e.g. Gemini's security.auth.useExternal) may appear at the
// top level; each server may carry only the keys its
// harness documents that loadout renders (no headersHelper, bearer_token_env_var,
// env_http_headers, approval modes); an OAuth setting or lifecycle (oauth.go) carries exactly
// the vetted values, read through the profile's oauth keys; the rendered server ids are the
// vetted ones, in request order, and a vetted enabled server may be missing only when a
// warning names it; url equals the vetted one and each header value the vetted value at the
// same key, as the harness reads them (Claude expands ${NAME}, so literals are spelled
// ${LOADOUT_SPAWN_DOLLAR:-$}{NAME}; Pi resolves "$" and a leading "!", so literals are spelled
// "$$" and "$!"); tool grants stay within the vetted allowedTools; and every secret placeholder
// sits at exactly the server, field and key the vetted request gave it.
//
// A stdio server comes in one of two forms. Verbatim: command and args are the vetted ones
// (spelled for the harness) and each env value equals the vetted value at the same key (or pins
// a HostEnv variable to its vetted value). Wrapped (docs/SPAWN-ENV.md, spawn.go): command
// /usr/bin/env, args -i, [-C <vetted cwd>] (claude only), [-S SPEC], then the vetted command and
// args; SPEC is a space-separated list of NAME=<alias reference> tokens and the env map holds
// only the aliases LOADOUT_SPAWN_1, 2, … it references, each exactly once and in order. Check
// decodes both the way the harness and GNU env will and requires the environment the server
// gets to be exactly its vetted spawn env (HostEnv, then Env, a repeated name at its first
// position with its last value), each secret landing at its vetted key. The per-harness
// encodings are the literal, value and spawn members of builtinHarnesses; the wrapper's rule
// codes are RuleSpawnWrapper, RuleSpawnSpec, RuleSpawnAlias and RuleSpawnEnv.
package plan
