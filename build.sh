#!/usr/bin/env bash
# build.sh builds the renderer plugins to WebAssembly and then the loadout binary, which embeds
# the built-in plugins and their sha256 pins.
#
#   ./build.sh            plugins → host/builtin/wasm/<name>.wasm (+ pins.json: digests,
#                         profile digests and manifests), binary → bin/loadout
#   ./build.sh plugins    plugins only
#   ./build.sh wasmtime   as all, with the wasmtime engine too (-tags wasmtime, cgo); it is then
#                         the default engine (--engine wazero still picks the pure-Go one)
#   ./build.sh purego     as all, pure Go only (CGO_ENABLED=0): wazero, no C toolchain needed
#
# all builds like wasmtime where cgo has a C compiler, and like purego elsewhere.
#
# Go plugins: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags='-s -w'
# (a reactor whose _initialize runs package init, where the plugin registers its renderer with
# the sdk). -s drops the module's name section, which every render would otherwise read, hash
# and decode; Go's own tracebacks come from its pclntab and keep their function names.
# C plugins: each plugins/<name>/build.sh OUT.wasm builds itself (Debian clang + wasi-libc).
set -euo pipefail
cd "$(dirname "$0")"

out=host/builtin/wasm
mkdir -p "$out" bin

build_plugins() {
	local built=()
	# Build into a hidden staging directory (go:embed skips it), then swap the set in at once:
	# a test binary compiled meanwhile embeds the old set or the new one, each with its pins.
	local stage="$out/.staging"
	rm -rf "$stage"
	mkdir -p "$stage"
	# A plugin on the profile-driven SDK carries its profile.yaml as a generated Go literal
	# (profile_gen.go, sdk/cmd/profilegen): regenerate it, so the module renders through the
	# profile that is pinned beside it.
	go generate ./plugins/...
	for dir in plugins/*/; do
		local name
		name=$(basename "$dir")
		if [ -f "$dir/main.go" ]; then
			GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags='-s -w' -o "$stage/$name.wasm" "./$dir"
		elif [ -x "$dir/build.sh" ]; then
			# A C plugin needs Debian's clang, lld and wasi-libc (scripts/deps.sh installs them;
			# ./test.sh runs it). Without them the other plugins still build, and this says so.
			if ! command -v "${WASI_CC:-clang}" >/dev/null || [ ! -e /usr/include/wasm32-wasi/stdio.h ]; then
				echo "build.sh: skipping $name: needs clang, lld and wasi-libc (run scripts/deps.sh)" >&2
				continue
			fi
			"$dir/build.sh" "$stage/$name.wasm"
		else
			continue
		fi
		built+=("$name")
	done
	# pins.json: {"<name>.wasm": {"sha256": "sha256:<hex>", "profile": "sha256:<hex of
	# plugins/<name>/profile.yaml>", "manifest": {…}}, ...} in name order,
	# each manifest read by loading the module as loadout does: a command then picks a plugin
	# by harness without instantiating the others.
	if [ ${#built[@]} -gt 0 ]; then
		go run ./host/builtin/internal/pinsgen "$stage" >"$stage/pins.json.tmp"
		mv "$stage/pins.json.tmp" "$stage/pins.json"
	fi
	rm -f "$out"/*.wasm "$out"/pins.json # a plugin no longer built must not stay embedded
	mv "$stage"/* "$out"/
	rmdir "$stage"
	for name in "${built[@]}"; do
		printf '%s  %s\n' "$(sha256sum "$out/$name.wasm" | cut -d' ' -f1)" "$out/$name.wasm"
	done
}

case "${1:-all}" in
plugins)
	build_plugins
	;;
all)
	build_plugins
	if command -v "$(go env CC)" >/dev/null 2>&1; then
		CGO_ENABLED=1 go build -tags wasmtime -trimpath -o bin/loadout ./cmd/loadout
		echo "bin/loadout (wasmtime, the default, and wazero)"
	else
		CGO_ENABLED=0 go build -trimpath -o bin/loadout ./cmd/loadout
		echo "bin/loadout (wazero)"
	fi
	;;
purego)
	build_plugins
	CGO_ENABLED=0 go build -trimpath -o bin/loadout ./cmd/loadout
	echo "bin/loadout (wazero)"
	;;
wasmtime)
	build_plugins
	CGO_ENABLED=1 go build -tags wasmtime -trimpath -o bin/loadout ./cmd/loadout
	echo "bin/loadout (wazero and wasmtime)"
	;;
*)
	echo "usage: ./build.sh [all|plugins|wasmtime|purego]" >&2
	exit 2
	;;
esac
