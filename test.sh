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

scripts/deps.sh
export PATH="$PWD/.cache/bin:$PATH"
# Tests that need a tool deps.sh installs (redis-server) fail instead of skipping without it.
export LOADOUT_REQUIRE_ALL=1

echo "== format and vet"
unformatted=$(gofmt -l $(git ls-files '*.go') 2>/dev/null || true)
if [ -n "$unformatted" ]; then
	echo "gofmt would change: $unformatted" >&2
	exit 1
fi
go vet ./...
GOOS=wasip1 GOARCH=wasm go vet ./sdk/... ./plugins/...
CGO_ENABLED=0 go build ./...

echo "== build"
./build.sh

echo "== go test (wazero)"
go test -count=1 ./...

echo "== go test -race (the policy engine's lock discipline, recycled wasm memories)"
go test -race -count=1 ./host/policy ./host/engine/internal/capmem

echo "== go test (wasmtime)"
go test -count=1 -tags wasmtime ./host/... ./conformity/...

echo "== fuzz targets, 200 executions each (-fuzz takes one target per package run)"
for file in $(git grep -l '^func Fuzz' -- '*_test.go'); do
	for target in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$file"); do
		echo "-- $target ./$(dirname "$file")"
		if ! out=$(go test -count=1 -run '^$' -fuzz "^$target\$" -fuzztime 200x "./$(dirname "$file")" 2>&1); then
			echo "$out" >&2
			exit 1
		fi
	done
done

echo "== warm-render benchmarks, one iteration each (their setup checks wasm plans against native ones)"
go test -count=1 -tags wasmtime ./host/engine/bench -run '^$' -bench WarmRender -benchtime 1x

if [ -x .ci/policy.sh ]; then
	echo "== policies (upstream opa)"
	.ci/policy.sh
fi
