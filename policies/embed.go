// Package policies holds loadout's default Rego policies and their tunables, embedded in the
// binary. The security team edits the .rego and .yaml files in this directory; the upstream
// opa CLI runs them as they are (opa test, opa check --strict, opa fmt: see .ci/policy.sh).
//
// Layout (the data path of every file is its directory, as the opa loader reads it):
//
//	loadout/url/                 package loadout.url: URL rules (base rule + R1)
//	loadout/secrets/             package loadout.secrets: secret rules (R6, credentials)
//	loadout/allow/               package loadout.allow: ids, env (R4), headers (R5), tools (R3), users, spawn env
//	loadout/request/             package loadout.request: disabled, opt-in and per-harness servers, shared warning
//	loadout/userservers/         package loadout.userservers: which servers a run's user brings are kept
//	tunables/<area>/data.yaml    data.tunables.{url,secrets,allow,userservers}: lists, patterns, modes (bundle-style data files)
//	fixtures/<name>/input.json   data.fixtures.<name>: real input documents for the tests
//	                             (what `loadout policy input` prints; not loaded for decisions)
//
// Every package under data.loadout may add deny, drop, secret and warn rules and a spawn_env
// (docs/POLICIES.md): a new .rego file adds rules, nothing central is edited.
//
// FS is read-only and safe for concurrent use.
package policies

import "embed"

// FS is the embedded default policy tree: Rego modules (tests included) and tunables.
//
//go:embed loadout tunables fixtures
var FS embed.FS
