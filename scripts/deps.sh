#!/usr/bin/env bash
# deps.sh installs what the test suite needs and is missing, and prints nothing else when all is
# there. It is idempotent: test.sh runs it every time.
#   - Debian packages: wabt (wat2wasm, hostile test plugins), clang + wasi-libc +
#     libclang-rt-14-dev-wasm32 (the C plugin), binaryen, redis-server (the shared token
#     store's tests start their own on a random loopback port), chromium + chromium-driver
#     (a real headless browser shows that a page of another origin cannot make serve render)
#   - the opa CLI at the OPA version of go.mod (upstream policy checks)
#   - the real agent CLIs for end-to-end tests (scripts/clis.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v wat2wasm >/dev/null || need_apt+=(wabt)
command -v wasm-opt >/dev/null || need_apt+=(binaryen)
command -v redis-server >/dev/null || need_apt+=(redis-server)
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
command -v chromedriver >/dev/null || need_apt+=(chromium-driver)
command -v clang >/dev/null || need_apt+=(clang)
command -v wasm-ld-14 >/dev/null || command -v wasm-ld >/dev/null || need_apt+=(lld-14)
[ -e /usr/include/wasm32-wasi/stdio.h ] || [ -e /usr/include/wasm32-wasip1/stdio.h ] || need_apt+=(wasi-libc)
ls /usr/lib/llvm-14/lib/clang/14*/lib/wasi/libclang_rt.builtins-wasm32.a >/dev/null 2>&1 || need_apt+=(libclang-rt-14-dev-wasm32)
if [ ${#need_apt[@]} -gt 0 ]; then
	echo "deps: installing ${need_apt[*]}" >&2
	SUDO=""
	[ "$(id -u)" = 0 ] || SUDO=sudo
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# opa CLI pinned to go.mod's OPA version, installed into .cache/bin.
opa_version=$(go list -m -f '{{.Version}}' github.com/open-policy-agent/opa)
mkdir -p .cache/bin
if [ ! -x ".cache/bin/opa-$opa_version" ]; then
	echo "deps: installing opa $opa_version" >&2
	GOBIN="$PWD/.cache/gobin" go install "github.com/open-policy-agent/opa@$opa_version"
	mv .cache/gobin/opa ".cache/bin/opa-$opa_version"
fi
ln -sf "opa-$opa_version" .cache/bin/opa

if [ -x scripts/clis.sh ]; then
	scripts/clis.sh
fi
