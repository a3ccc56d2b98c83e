#!/usr/bin/env bash
# build.sh OUT.wasm builds the mcpjson renderer, a WebAssembly reactor (its _initialize sets up
# wasi-libc; the host calls it once per instance), with Debian's clang and wasi-libc:
#   apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32
# The C sources live in native/, which is also the Go package that compiles them natively with
# cgo for the benchmarks (each file's //go:build cgo line keeps pure-Go builds away from them).
# The output is deterministic for a given compiler: no build paths or timestamps are embedded.
set -euo pipefail
if [ $# -ne 1 ]; then
	echo "usage: $0 OUT.wasm" >&2
	exit 2
fi
src=$(cd "$(dirname "$0")" && pwd)
out=$1
"${WASI_CC:-clang}" --target=wasm32-wasi --sysroot=/usr \
	-std=c11 -O2 -Wall -Wextra -Werror -pedantic \
	-mexec-model=reactor \
	-ffile-prefix-map="$src"=. \
	-Wl,--strip-all \
	-o "$out" "$src/native/mcpjson.c" "$src/native/json.c"
