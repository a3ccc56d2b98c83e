// Package policy is the host side of loadout's Rego policies: it builds the input document
// of a request, evaluates every contributing rule with the embedded OPA, checks what the
// rules produced against the request (a Decision), and applies it (Vet) to produce the only
// value a renderer may see, a *Vetted. docs/POLICIES.md is the reference for policy authors:
// the input document (§1), the rule conventions (§2), the tunables (§3), worked examples
// (§4) and distribution as OPA bundles (§6).
//
// # Who decides what
//
// Go parses: strict JSON, names and paths (host/spec), and per-value facts that only parsing
// can give (input.servers[i].facts: the URL's scheme, host, port, path and whether two URL
// parsers agree; a command's base name). Rego decides every policy question, reading its
// lists and patterns from data (policies/tunables). No Go code here answers a policy
// question; what Go still enforces on its own is structural (a stored token is a secret
// whatever a rule says, a drop must name an entry the server has).
//
// # Rules
//
// Every package under data.loadout may define deny, drop, secret and warn (partial sets of
// objects; a string element of deny or warn, conftest's form, decides for the whole request)
// and spawn_env (an object); New finds them in the compiled modules and prepares one
// query that reads them all, so adding a .rego file adds rules and nothing central is
// edited. Decide evaluates that query with OPA's own evaluator and checks every element:
// an index out of range, a missing code, a key the element may not have or an entry the
// server does not have is a *MalformedError; an evaluation error an *EvalError; an undefined
// rule ErrNoDecision. All three refuse the request (IsRejected, exit 3). A reason carries
// the rule's code, message and file:row (the first rule of its package, name and constant
// code).
//
// # Lifecycle and concurrency
//
// New loads the policy tree (the embedded policies.FS, with a team's Config.FS or OPA bundle
// read by ReadBundle laid over it: layer; or the team's tree alone with
// Config.ReplaceDefaults), refuses rules the decision would never read (checkRuleNames) and
// tunables that do not match their schemas or references to tunables that do not exist
// (checkData), compiles it in strict mode with pinned capabilities (Capabilities: no
// http.send, no network, clock, entropy or runtime built-ins) and evaluates the query once on
// a sample request, so a policy that fails on a plain request stops loadout instead of
// refusing every render. The Engine is immutable afterwards and Decide is safe for
// concurrent use; a reload builds a new Engine. Vet is a pure function; a Vetted is
// immutable and its accessors return copies. RunTests runs a tree's *_test.rego with OPA's
// tester and the same capabilities, as `opa test` does.
//
// # Cost
//
// BenchmarkDecide5 and BenchmarkDecide50 measure Decide (input document, evaluation,
// collection); docs/PERFORMANCE.md reports them. The input is built once per request as OPA
// values (no JSON round trip).
package policy
