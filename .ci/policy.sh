#!/usr/bin/env bash
# Runs the policy gates with the upstream opa CLI at the exact OPA version of go.mod:
# opa fmt (no file to reformat), opa check --strict, opa test --fail-on-empty.
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
unformatted="$("${opa}" fmt -l policies/)"
if [[ -n "${unformatted}" ]]; then
	echo "opa fmt would reformat:" >&2
	echo "${unformatted}" >&2
	exit 1
fi
echo "opa ${version}: check --strict"
"${opa}" check --strict policies/
echo "opa ${version}: test"
"${opa}" test policies/ --fail-on-empty
