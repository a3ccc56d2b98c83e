#!/usr/bin/env bash
# bench-render.sh times `loadout render` as a user feels it: a fresh process, files written,
# the spec in scripts/bench (two stdio servers, one http server, two skills), run
# interleaved so that a busy shared machine slows every contender alike. For each engine the
# binary has it reports the median wall time and peak memory of
#   one harness, warm cache (the compile cache filled by an earlier run);
#   three harnesses in one process (--harness claude,codex,pi) and as three processes;
#   one harness, cold (an empty cache directory);
# and, when installed (npm i rulesync@17.0.0 @intellectronica/ruler@0.3.44; found on PATH or
# under PEERS/node_modules/.bin), the same spec rendered for Claude Code by ruler and
# rulesync, with the ratio of the fastest peer's time to loadout's.
#
#   scripts/bench-render.sh [RUNS]        RUNS interleaved rounds (default 15)
#   LOADOUT=path/to/loadout PEERS=dir scripts/bench-render.sh
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:-15}
loadout=${LOADOUT:-bin/loadout}
peers=${PEERS:-.cache/peers}
spec=scripts/bench/request.json
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -x "$loadout" ] || { echo "bench-render.sh: $loadout not built (run ./build.sh or ./build.sh wasmtime)" >&2; exit 2; }

engines=(wazero)
if "$loadout" render --help 2>/dev/null | grep -q 'wazero or wasmtime'; then
	engines+=(wasmtime)
fi

peer() { # peer NAME: the peer's executable, or nothing
	if [ -x "$peers/node_modules/.bin/$1" ]; then realpath "$peers/node_modules/.bin/$1"; elif command -v "$1" >/dev/null; then command -v "$1"; fi
}
ruler=$(peer ruler)
rulesync=$(peer rulesync)

# sample NAME CMD...: run CMD (a program or a function below) once in a fresh directory and
# append its wall time in ms to $work/NAME.
sample() {
	local name=$1
	shift
	local t0 t1
	rm -rf "$work/run"
	mkdir -p "$work/run"
	t0=$(date +%s%N)
	if ! "$@" >"$work/out" 2>&1; then
		echo "bench-render.sh: $name failed:" >&2
		cat "$work/out" >&2
		return 1
	fi
	t1=$(date +%s%N)
	echo "$(((t1 - t0) / 1000000))" >>"$work/$name"
}

# peak NAME PROGRAM...: run PROGRAM once under /usr/bin/time; $work/NAME.rss gets its peak RSS
# in KiB.
peak() {
	local name=$1
	shift
	rm -rf "$work/run"
	mkdir -p "$work/run"
	/usr/bin/time -f '%M' -o "$work/$name.rss" "$@" >/dev/null 2>&1 || echo 0 >"$work/$name.rss"
}

# median FILE
median() { sort -n "$1" | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

abs_spec=$PWD/$spec
lo() { # lo ENGINE ARGS...: loadout render with the spec, into $work/run
	local e=$1
	shift
	"$loadout" render --engine "$e" "$@" --out "$work/run" "$abs_spec"
}
three_processes() {
	local e=$1
	for h in claude codex pi; do "$loadout" render --engine "$e" --harness "$h" --out "$work/run/$h" "$abs_spec" >/dev/null || return 1; done
}
run_ruler() { cp -r scripts/bench/ruler/. "$work/run/" && (cd "$work/run" && "$ruler" apply --agents claude >/dev/null); }
run_rulesync() { cp -r scripts/bench/rulesync/. "$work/run/" && (cd "$work/run" && "$rulesync" generate --targets claudecode --features rules,mcp,skills >/dev/null); }

for e in "${engines[@]}"; do lo "$e" >/dev/null; done # fill the compile caches
for ((i = 0; i < runs; i++)); do
	for e in "${engines[@]}"; do
		sample "$e-one" lo "$e"
		sample "$e-three" lo "$e" --harness claude,codex,pi
		sample "$e-three-processes" three_processes "$e"
	done
	[ -n "$ruler" ] && sample ruler run_ruler
	[ -n "$rulesync" ] && sample rulesync run_rulesync
done
for e in "${engines[@]}"; do
	for ((i = 0; i < 3; i++)); do
		sample "$e-cold" env XDG_CACHE_HOME="$work/cold-$e-$i" "$loadout" render --engine "$e" --out "$work/run" "$abs_spec"
	done
	peak "$e-one" "$loadout" render --engine "$e" --out "$work/run" "$abs_spec"
	peak "$e-three" "$loadout" render --engine "$e" --harness claude,codex,pi --out "$work/run" "$abs_spec"
	peak "$e-cold" env XDG_CACHE_HOME="$work/cold-$e-peak" "$loadout" render --engine "$e" --out "$work/run" "$abs_spec"
done

printf '%-36s %10s %10s\n' "median of $runs (cold: of 3)" "ms" "peak MiB"
fastest_peer=""
for name in ruler rulesync; do
	[ -f "$work/$name" ] || continue
	ms=$(median "$work/$name")
	if [ -z "$fastest_peer" ] || [ "$ms" -lt "$fastest_peer" ]; then fastest_peer=$ms; fi
done
for e in "${engines[@]}"; do
	for kind in one three three-processes cold; do
		f="$work/$e-$kind"
		ms=$(median "$f")
		mib=-
		[ -f "$f.rss" ] && mib=$(($(cat "$f.rss") / 1024))
		ratio=""
		if [ -n "$fastest_peer" ] && [ "$kind" = one ]; then ratio=$(awk -v p="$fastest_peer" -v m="$ms" 'BEGIN {printf "  fastest peer / loadout = %.1fx", p / (m > 0 ? m : 1)}'); fi
		printf '%-36s %10s %10s%s\n' "loadout $e $kind" "$ms" "$mib" "$ratio"
	done
done
for name in ruler rulesync; do
	[ -f "$work/$name" ] || { printf '%-36s %s\n' "$name" "not installed"; continue; }
	printf '%-36s %10s %10s\n' "$name" "$(median "$work/$name")" -
done
