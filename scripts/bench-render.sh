#!/usr/bin/env bash
# bench-render.sh times `loadout render` as a user feels it: a fresh process, files written,
# the spec in scripts/bench (two stdio servers, one http server, two skills), run
# interleaved with the peers ruler 0.3.44 and rulesync 17.0.0 on the same spec, so that a busy
# shared machine slows every contender alike. It prints the machine and its load average, then
# for each engine the binary has the median wall time and peak memory of
#   one harness (claude), warm cache (the compile cache filled by an earlier run);
#   five harnesses (claude,codex,pi,gemini,copilot) in one process, and as five processes;
#   one harness, cold (an empty cache directory);
# and the peers rendering the same spec for Claude Code alone and for the same five agents,
# with each peer's time divided by loadout's (above 1: loadout is faster). Every figure
# docs/PERFORMANCE.md publishes is such a ratio, with the absolute times of the same run.
# The peers are installed under PEERS (default .cache/peers) when missing (npm).
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

if [ ! -x "$peers/node_modules/.bin/ruler" ] || [ ! -x "$peers/node_modules/.bin/rulesync" ]; then
	echo "bench-render.sh: installing the peers into $peers" >&2
	mkdir -p "$peers"
	(cd "$peers" && npm i --no-audit --no-fund --loglevel=error rulesync@17.0.0 @intellectronica/ruler@0.3.44 >/dev/null) ||
		echo "bench-render.sh: the peers could not be installed; loadout is timed alone, with no ratio" >&2
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
five=claude,codex,pi,gemini,copilot
five_processes() {
	local e=$1
	for h in ${five//,/ }; do "$loadout" render --engine "$e" --harness "$h" --out "$work/run/$h" "$abs_spec" >/dev/null || return 1; done
}
run_ruler() { cp -r scripts/bench/ruler/. "$work/run/" && (cd "$work/run" && "$ruler" apply --agents "$1" >/dev/null); }
run_rulesync() { cp -r scripts/bench/rulesync/. "$work/run/" && (cd "$work/run" && "$rulesync" generate --targets "$1" --features rules,mcp,skills >/dev/null); }

load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "machine: $(uname -srm), $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)), node $(node --version 2>/dev/null || echo none)"
echo "load average at start: $(load)"

for e in "${engines[@]}"; do lo "$e" --harness "$five" >/dev/null; done # fill the compile caches
for ((i = 0; i < runs; i++)); do
	for e in "${engines[@]}"; do
		sample "$e-one" lo "$e"
		sample "$e-five" lo "$e" --harness "$five"
		sample "$e-five-processes" five_processes "$e"
	done
	[ -n "$ruler" ] && sample ruler-one run_ruler claude && sample ruler-five run_ruler claude,codex,pi,gemini-cli,copilot
	[ -n "$rulesync" ] && sample rulesync-one run_rulesync claudecode && sample rulesync-five run_rulesync claudecode,codexcli,pi,geminicli,copilot
done
for e in "${engines[@]}"; do
	for ((i = 0; i < 3; i++)); do
		sample "$e-cold" env XDG_CACHE_HOME="$work/cold-$e-$i" "$loadout" render --engine "$e" --out "$work/run" "$abs_spec"
	done
	peak "$e-one" "$loadout" render --engine "$e" --out "$work/run" "$abs_spec"
	peak "$e-five" "$loadout" render --engine "$e" --harness "$five" --out "$work/run" "$abs_spec"
	peak "$e-cold" env XDG_CACHE_HOME="$work/cold-$e-peak" "$loadout" render --engine "$e" --out "$work/run" "$abs_spec"
done
echo "load average at end: $(load)"

# ratio PEER KIND MS: "PEER/loadout = N.Nx" when the peer ran KIND.
ratio() {
	[ -f "$work/$1-$2" ] || return 0
	awk -v p="$(median "$work/$1-$2")" -v m="$3" -v n="$1" 'BEGIN {printf "  %s/loadout %.1fx", n, p / (m > 0 ? m : 1)}'
}
printf '%-36s %10s %10s\n' "median of $runs (cold: of 3)" "ms" "peak MiB"
for e in "${engines[@]}"; do
	for kind in one five five-processes cold; do
		f="$work/$e-$kind"
		ms=$(median "$f")
		mib=-
		[ -f "$f.rss" ] && mib=$(($(cat "$f.rss") / 1024))
		peerkind=${kind%-processes}
		[ "$kind" = cold ] && peerkind=one
		printf '%-36s %10s %10s%s%s\n' "loadout $e $kind" "$ms" "$mib" "$(ratio ruler "$peerkind" "$ms")" "$(ratio rulesync "$peerkind" "$ms")"
	done
done
for name in ruler-one ruler-five rulesync-one rulesync-five; do
	[ -f "$work/$name" ] || { printf '%-36s %s\n' "$name" "not installed"; continue; }
	printf '%-36s %10s %10s\n' "$name" "$(median "$work/$name")" -
done
