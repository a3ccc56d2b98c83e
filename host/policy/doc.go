// Package policy is the host side of loadout's Rego policies: it computes the facts the policy
// needs (Go parses, Rego decides), evaluates the one decision query data.loadout.decision with
// the embedded OPA, and applies the decision (Vet) to produce the only value a renderer may
// see, a *Vetted.
//
// # Lifecycle and concurrency
//
// New loads the policy tree (Config.FS, or the embedded policies.FS), compiles it in strict
// mode with pinned capabilities (Capabilities: no http.send, no network, clock, entropy or
// runtime built-ins) and prepares one query, partially evaluated, and its residual when it has
// one (see Cost; a policy partial evaluation cannot flatten is prepared as written; package
// loadout_partial is the host's). A policy that does not compile is a *CompileError naming
// each file:row and OPA error code. The Engine is immutable afterwards; Decide is safe for
// concurrent use. OPA's partial evaluation writes to its process-wide interned terms, so New
// and RunTests exclude every Decide in the process while they run (a package-wide RWMutex, see
// interned in policy.go): a reload pauses decisions while it runs (New takes about 13 ms for
// the embedded policies on the build machine). Vet is a pure function; a Vetted is immutable
// and its accessors return copies. RunTests runs a tree's *_test.rego with the same
// capabilities, as `opa test` does.
//
// # Input
//
// The policy sees {"request": ..., "facts": ...} (type Input), built directly as an ast.Value.
// "request" is what of the request the rules read (PolicyRequest: harness, run user);
// everything else they need is a fact, and a server is named by its index. Go computes every
// predicate once per request, so the Rego only maps facts to codes and never parses, matches
// patterns or scans lists. The tunables (data.tunables: refused env keys, prefixes and
// suffixes, reserved ids, the tool-name pattern, credential modes, user-credential and
// always-secret names, URL schemes, denied skill names) stay in the policy's data files; New
// reads them once and a malformed one stops it. Only spawn_env's keys and prefixes
// (data.tunables.allow.host_env) are read by the Rego itself.
//
// Facts are sets (FactSets), every one always present: a server fact (facts.flags.*,
// facts.url.*, http, token, sharedAuthorityOK, hasUsers, userListed, tools.noneValid) is the
// set of server indices it holds for; an entry fact (facts.env.*, facts.headers.*,
// facts.tools.nameInvalid) the set of [server index, key] pairs of the env, headers or
// allowedTools entries it holds for; a skill fact (facts.skills.nameDenied) the set of skill
// indices. A grouped fact is an object from a server setting to such a set, with a key for
// every setting a valid server can have and for any other a server has: facts.credentials
// (servers by credentials: each mode of data.tunables.allow.credentials.modes),
// facts.env.userCredential and facts.headers.userCredential (entries by their server's
// credentials: "" and each mode) and facts.headers.tokenHeader (the Authorization headers of
// the servers with a stored token, by transport: stdio and http). A rule that names a group
// no input has decides nothing, and the request is refused. Grouping lets a rule about "the entries of the
// per-user servers" read one set instead of joining entries with servers; which group means
// what is the Rego's. facts.hostEnv names the host's variables (never their values).
//
// # Cost
//
// BenchmarkDecideVet5 and BenchmarkDecideVet50 measure Decide+Vet (cpu-ns/op is the
// benchmark thread's CPU time, the honest figure on a shared machine); BenchmarkDecideStages
// measures each stage, and the decision evaluated both ways side by side. New partially
// evaluates the decision once (the input unknown): the rules are inlined into one query and
// the data they read (spawn_env's tunables) are constants in it, so what is left to evaluate
// per request is a handful of expressions over the input. When those are in a small fragment
// of Rego (unifications of constants, input references, arrays and calls of pure set
// built-ins: residual.go), New also compiles them into a residual that Decide runs itself,
// with OPA's own values and built-in functions but without topdown's bindings and
// continuations (about a fifth of its cost); any policy or evaluation outside that fragment is
// OPA's evaluation, with the same result. Hence the shape: facts are sets, each policy area is
// one rule (its verdict, a list of statements) whose sets are set expressions over the facts,
// with no comprehension; the decision lists the three verdicts without merging them, and the
// host turns the sets into per-server verdicts. The expressions do not grow with the request,
// and a clean server adds no Rego work at all. What is left is mostly building the input as
// AST objects and sets (one block of terms, the empty sets and all-empty objects shared), Vet,
// and decoding the evaluated AST.
//
// # Decision document
//
// The decision is a list of parts, one per area that decides (the default policy: the URL,
// allowlist and secret rules, in that order), each a flat list of statements read in order.
// A statement is a verb and a fixed number of values:
//
//	"server", code, {server index...}                 refuse each server, with code
//	"skill", code, {skill index...}                   refuse each skill, with code
//	"drop", field, code, {[server index, key]...}     remove entries of env, headers or allowedTools
//	"secret", "env"|"headers", {[server index, key]...} these entries' non-empty values are secrets
//	"secret", "token", {server index...}              these servers' stored tokens are secrets
//	"warn", code, message, {server index...}          warn once per server
//	"warn_skill", code, message, {skill index...}     warn once per skill
//	"spawn_env", [key...], [prefix...]                host variables that reach a stdio server
//
// e.g. ["server", "url_missing", {3}, "drop", "env", "env_key_refused", {[0, "LD_PRELOAD"]}].
// A server (skill) is refused by every code of every statement that names it; one no code
// names is allowed. An entry several drop statements name, in one part or several, is removed
// once, for the first. A stored token is a secret whatever the policy says. spawn_env names
// exact, case-sensitive keys and prefixes (the union of the statements). Sets may also be
// arrays. An unknown verb, a statement cut short, an index out of range, a code that is not a
// non-empty string or any other shape is a *MalformedError, an undefined decision
// ErrNoDecision: both refuse the request (IsRejected, exit 3).
//
// The document is flat because OPA copies every composite value of a result that holds a
// variable when it builds it: a list of statements is one copy where nested objects and pairs
// were dozens.
//
// Decide turns the document into a Decision aligned with the request: per server (skill)
// Allow and its sorted Reasons, per server its drops in request order (env, headers,
// allowedTools; one per key), the warnings except those about a refused server, and the
// secrets of the allowed servers that their drops leave, in request order (a token secret's
// key is where the token goes: env MCP_ACCESS_TOKEN for a stdio server, header Authorization
// for an http one).
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
