// Package docs holds loadout's documentation and the JSON Schemas of its request and result,
// and the tests that keep them true: request.schema.json must accept every request loadout
// keeps without a diagnostic (the examples, the bench request, the clean conformity cases) and
// refuse the ones whose diagnostics are about shape; ARCHITECTURE.md's package table must
// name every package of the module and no other (go list), and the plugins and the SDK must
// not depend on the host, the CLI or the conformity runner (go list -deps). The package has no
// API.
package docs
