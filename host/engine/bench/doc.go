// Package bench holds the engines' benchmarks, side by side in one package so one command
// compares them:
//
//	go test ./host/engine/bench -bench . -benchmem -run '^$'                  # wazero
//	go test ./host/engine/bench -tags wasmtime -bench . -benchmem -run '^$'   # and wasmtime
//
// Engine benchmarks go through engine.Module.Call (a fresh instance per call, deadline on).
// Raw benchmarks use each runtime's API directly to split a call into its parts: instantiation
// with _initialize, one boundary call of a trivial export, and a render on an instance that is
// already initialized (what a pool of initialized instances would leave on the request
// path). The wazero raw benchmarks run with and without WithCloseOnContextDone to price its
// termination checks. WarmRender renders the claude plugin's rich request on a ready
// instance (instantiation and close outside the timer), with
// the deadline enforced as each engine enforces it: the request-path cost of a pool, to set
// beside the native render of the same code in the same run. WarmRenderC does the same for the
// C plugin (plugins/mcpjson-c), whose native build (plugins/mcpjson-c/native, cgo) is the
// baseline: it prices the engines and the boundary on code from an optimizing C compiler. The
// package has no non-test code.
package bench
