// Package policy is the host side of loadout's Rego policies: it computes the facts the policy
// needs (Go parses, Rego decides), evaluates the one decision query data.loadout.decision with
// the embedded OPA, and applies the decision (Vet) to produce the only value a renderer may
// see, a *Vetted.
//
// # Lifecycle and concurrency
//
// New loads the policy tree (Config.FS, or the embedded policies.FS), compiles it in strict
// mode with pinned capabilities (Capabilities: no http.send, no network, clock, entropy or
// runtime built-ins) and prepares one query. A policy that does not compile is a *CompileError
// naming each file:row and OPA error code. The Engine is immutable afterwards; Decide is safe
// for concurrent use. Vet is a pure function; a Vetted is immutable and its accessors return
// copies. RunTests runs a tree's *_test.rego with the same capabilities, as `opa test` does.
//
// # Input
//
// The policy sees {"request": <spec.Request as JSON>, "facts": <Facts as JSON>} (type Input),
// built directly as an ast.Value. Go computes every per-entry predicate once per request, so
// the Rego only maps facts to codes and never parses, matches patterns or scans lists. The
// tunables (data.tunables: refused env keys, prefixes and suffixes, reserved ids, the
// tool-name pattern, user-credential and always-secret names, URL schemes, denied skill names)
// stay in the policy's data files; New reads them once and a malformed one stops it. Only
// spawnEnv (data.tunables.allow.host_env) is read by the Rego itself.
//
// Facts are sparse (false, "" and empty lists are left out) and aligned by index with the
// request. Each server has "flags" (the server facts that hold: idInvalid,
// idDoubleUnderscore, idTrailingUnderscore, idReserved, transportInvalid, commandInvalid,
// urlMissing, urlBadBytes, urlUserinfo, urlHostsDisagree, urlBadPort, urlEmptyHost), "url"
// (http servers: baseMatch, scheme, baseHost, urlHost, loopback, schemeAnywhere,
// schemeLoopback), "env", "headers" and "tools" (only the entries with a fact, in request
// order: key plus keyInvalid, keyRefused, nameInvalid, valueInvalid, userCredential,
// tokenHeader, secretNamed, alwaysSecret, valueEmpty), "sharedAuthorityOK" and "token" (a
// stored token exists). "skills" is aligned with request.skills ("nameDenied"). The top
// level also lists "http" and "credentialed" server indices and the host's "hostEnv"
// variable names (never values).
//
// # Cost
//
// BenchmarkDecideVet5 and BenchmarkDecideVet50 measure Decide+Vet. Most of the time is OPA
// evaluation, which grows with what the Rego visits per server (each comprehension, function
// call and object built allocates), then building the input as AST objects. Hence: Go computes
// every per-entry predicate, facts list only the entries that have one, rules that build a
// per-server value are complete or partial rules referenced whole (a keyed reference to a
// partial rule re-evaluates it per key), and the evaluated term is decoded as AST. Rule
// indexing stays on (turning it off costs more).
//
// # Decision document
//
//	{"servers":  [{"allow": bool, "reasons": [code...],
//	               "drop": [{"field": "env"|"headers"|"allowedTools", "key": K, "reason": code}...]}...],
//	 "skills":   [{"allow": bool, "reasons": [code...]}...],
//	 "secrets":  [{"server": index, "field": "env"|"headers"|"token", "key": K}...],
//	 "spawnEnv": {"keys": [name...], "prefixes": [prefix...]},
//	 "warnings": [{"code": code, "server": id, "skill": name, "message": text}...]}
//
// servers and skills are aligned by index with request.mcpServers and request.skills; allow is
// true exactly when reasons is empty; reasons are sorted; drops are in request order (env,
// headers, allowedTools), one per key. secrets name the entries of allowed servers whose
// non-empty values are secrets once the drops are applied (a stored token is a secret
// whatever the policy says). spawnEnv names the host variables that reach a stdio server
// (exact, case-sensitive keys and prefixes). Anything else is a *MalformedError, an undefined
// decision ErrNoDecision: both refuse the request (IsRejected, exit 3).
//
// Reason codes of the default policies (stable snake_case): url_missing, url_bad_bytes,
// url_userinfo, url_parse_mismatch, url_bad_port, url_empty_host, url_not_allowed,
// id_invalid, id_double_underscore, id_trailing_underscore, id_reserved, transport_invalid,
// command_invalid, credentials_invalid, shared_authority_invalid, users_not_shared,
// user_missing, user_not_allowed, skill_name_denied; drops: env_key_invalid,
// env_value_invalid, env_key_refused, header_name_invalid, header_value_invalid,
// tool_name_invalid, credentials_user, replaced_by_token; warnings: tools_none_left.
// Vet adds duplicate_id for a later server with an id already kept.
package policy
