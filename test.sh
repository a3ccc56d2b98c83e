#!/usr/bin/env bash
# test.sh is the whole test suite: it installs what is missing (scripts/deps.sh), checks format
# and vet, builds the plugins, then runs the Go tests on the default (wazero, CGO_ENABLED=0)
# build, the wasmtime-tagged tests, every fuzz target for a short fixed run, the upstream OPA
# checks of policies/, and the end-to-end tests against the real agent CLIs.
#
# A plain `go test ./...` skips a test whose tool is missing (wat2wasm, the WASI C toolchain,
# the agent CLIs) and names the command that installs it. Here everything was installed, so
# LOADOUT_REQUIRE_ALL=1 makes a missing piece a failure: this suite never passes by skipping.
set -euo pipefail
cd "$(dirname "$0")"

# section NAME prints how long the previous section took, then NAME: the suite's time by
# section is in every log.
section_start=$SECONDS
section_name="install (scripts/deps.sh)"
section() {
	echo "-- ${section_name}: $((SECONDS - section_start)) s"
	section_name=$1
	section_start=$SECONDS
	echo "== $1"
}
trap 'echo "-- ${section_name}: $((SECONDS - section_start)) s"; echo "-- total: ${SECONDS} s"' EXIT

scripts/deps.sh
export PATH="$PWD/.cache/bin:$PATH"
# Tests that need a tool deps.sh installs (redis-server) fail instead of skipping without it.
export LOADOUT_REQUIRE_ALL=1

section "format and vet"
unformatted=$(gofmt -l $(git ls-files '*.go') 2>/dev/null || true)
if [ -n "$unformatted" ]; then
	echo "gofmt would change: $unformatted" >&2
	exit 1
fi
go vet ./...
GOOS=wasip1 GOARCH=wasm go vet ./sdk/... ./plugins/...
CGO_ENABLED=0 go build ./...

section "build"
./build.sh

section "go test (wazero), every package but e2e"
go test -count=1 $(go list ./... | grep -v '/e2e$')

# The end-to-end tests mostly wait on the real CLIs (each in its own directories and HOME), so
# four run at once: on 2 cores that took the package from about 245 s to 150 s; six were slower.
section "end-to-end tests with the real agent CLIs, four at a time"
go test -count=1 -parallel 4 ./e2e

section "go test -race (the policy engine's lock discipline, recycled wasm memories)"
go test -race -count=1 ./host/policy ./host/engine/internal/capmem

section "go test (wasmtime)"
go test -count=1 -tags wasmtime ./host/... ./conformity/...

section "fuzz targets, 200 executions each, two at a time (-fuzz takes one target per package run)"
fuzz_one() {
	local pkg=$1 target=$2 out
	if ! out=$(go test -count=1 -run '^$' -fuzz "^$target\$" -fuzztime 200x "$pkg" 2>&1); then
		echo "-- $target $pkg FAILED" >&2
		echo "$out" >&2
		return 1
	fi
	echo "-- $target $pkg ok"
}
export -f fuzz_one
for file in $(git grep -l '^func Fuzz' -- '*_test.go'); do
	for target in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$file"); do
		echo "./$(dirname "$file") $target"
	done
done | xargs -P 2 -L 1 bash -c 'fuzz_one "$0" "$1"'

section "warm-render benchmarks, one iteration each (their setup checks wasm plans against native ones)"
go test -count=1 -tags wasmtime ./host/engine/bench -run '^$' -bench WarmRender -benchtime 1x

if [ -x .ci/policy.sh ]; then
	section "policies (upstream opa)"
	.ci/policy.sh
fi
