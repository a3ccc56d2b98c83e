// Package docs holds loadout's documentation and the JSON Schemas of its request and result,
// and the tests that keep them true: request.schema.json must accept every request loadout
// keeps without a diagnostic (the examples, the bench request, the clean conformity cases) and
// refuse the ones whose diagnostics are about shape. The package has no API.
package docs
