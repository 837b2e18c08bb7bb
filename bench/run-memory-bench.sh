#!/usr/bin/env bash
# The cost of the memory profiler (libperiscope-memory.so) per allocation:
# the same malloc+free loop plain, preloaded without a control fd (the
# profiler stays off), and preloaded and recorded through the control-ring
# server (every allocation and free becomes an ALLOCATION frame with its
# backtrace). Timings only: nothing is asserted (see bench/memory-profiler.md).
# usage: bench/run-memory-bench.sh [BUILD_DIR] [N]
set -euo pipefail
build=${1:-build}
n=${2:-200000}
bench=$build/bench/memory-bench
lib=$(realpath "$build/collector/libperiscope-memory.so")
rec=$build/tests/control/control-record
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for depth in 5 20; do
        echo "== depth $depth"
        printf 'plain:                 '; "$bench" "$n" $depth
        printf 'preloaded, no fd:      '; LD_PRELOAD=$lib "$bench" "$n" $depth
        printf 'preloaded + recorded:  '; "$rec" --preload "$lib" "$out/m.syscap" -- "$bench" "$n" $depth 2>/dev/null
        ls -l "$out/m.syscap" | awk '{ printf "                       capture %.1f MB\n", $5 / 1048576 }'
done
