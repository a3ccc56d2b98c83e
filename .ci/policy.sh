#!/usr/bin/env bash
# Runs the policy gates with the upstream opa CLI at the exact OPA version of go.mod:
# opa fmt (no file to reformat), opa check --strict with loadout's capabilities, loadout
# policy check (loadout's own load checks: tunables schemas, rule names), opa test --fail-on-empty (the default
# policies and the worked examples of docs/POLICIES.md), and opa build of a bundle that
# loadout then decides with.
# The CLI is installed once into a version-named cache directory (OPA_CACHE, default
# ~/.cache/loadout-tools) with go install; nothing else is downloaded.
set -euo pipefail
cd "$(dirname "$0")/.."

version="$(go list -m -f '{{.Version}}' github.com/open-policy-agent/opa)"
bin_dir="${OPA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/loadout-tools}/opa-${version}"
opa="${bin_dir}/opa"
if [[ ! -x "${opa}" ]]; then
	mkdir -p "${bin_dir}"
	GOBIN="${bin_dir}" go install "github.com/open-policy-agent/opa@${version}"
fi

echo "opa ${version}: fmt"
unformatted="$("${opa}" fmt -l policies/ examples/policies/)"
if [[ -n "${unformatted}" ]]; then
	echo "opa fmt would reformat:" >&2
	echo "${unformatted}" >&2
	exit 1
fi
echo "opa ${version}: check --strict --capabilities (loadout policy capabilities)"
caps="$(mktemp)"
go run ./cmd/loadout policy capabilities > "${caps}"
"${opa}" check --strict --capabilities "${caps}" policies/ examples/policies/
rm -f "${caps}"
echo "loadout policy check: the defaults, and the examples laid over them"
go run ./cmd/loadout policy check policies/
go run ./cmd/loadout policy check examples/policies/
echo "opa ${version}: test"
"${opa}" test policies/ examples/policies/ --fail-on-empty
# A bundle 'opa build' makes of the default policies is a policy loadout decides with.
echo "opa ${version}: build, then loadout policy eval --policies the bundle"
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT
"${opa}" build -o "${tmp}/policies.tar.gz" policies/
go run ./cmd/loadout policy eval --policies "${tmp}/policies.tar.gz" examples/request.json
