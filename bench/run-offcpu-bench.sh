#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# run-offcpu-bench.sh: what off-CPU profiling costs a storm of context
# switches (tests/offcpu/workload-pingpong.c: two threads passing a byte
# over two pipes, 100k+ switches/s) and what it finds in real waits
# (tests/offcpu/workload-waits.c: 1 s of compute, then 1 s each in
# nanosleep, a pipe read, a mutex), for:
#   alone            the workload without a profiler
#   periscope-cpu    `periscope record` (999 Hz CPU samples, DWARF stacks)
#   periscope-off    `periscope record --off-cpu`
#   perf-sched       `perf record -e sched:sched_switch --call-graph dwarf`
#   perf-off-cpu     `perf record --off-cpu` (BPF; only where this perf was
#                    built with BUILD_BPF_SKEL=1, else said and left out)
# Runs are interleaved (RUNS each, default 3); prints a markdown table of
# medians: round trips/s and the ratio to alone, lost records or events,
# bytes on disk; then the waits attributed by periscope --off-cpu against
# their wall-clock lengths. Needs root (private periscoped, perf
# tracepoints), a built tree (default ./build), linux-perf.
#
#   bench/run-offcpu-bench.sh [BUILD_DIR]      env: RUNS (3), STORM_S (3)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
runs=${RUNS:-3} secs=${STORM_S:-3}
[ "$(id -u)" = 0 ] || { echo "run as root (perf tracepoints, the private periscoped)"; exit 1; }
command -v perf >/dev/null || { echo "perf missing: scripts/install-deps.sh"; exit 1; }
P=$build/cli/periscope
[ -x "$P" ] || { echo "missing $P: build the tree first"; exit 1; }
tmp=$(mktemp -d /tmp/periscope-offcpu-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -g -pthread -o "$tmp/pingpong" "$top/tests/offcpu/workload-pingpong.c"
gcc -O0 -g -fno-omit-frame-pointer -pthread -o "$tmp/waits" "$top/tests/offcpu/workload-waits.c"
export XDG_STATE_HOME=$tmp/state

perf_off_cpu=1
(perf record --off-cpu -o "$tmp/probe.data" -- true) >"$tmp/probe.err" 2>&1 || true
grep -q "BUILD_BPF_SKEL" "$tmp/probe.err" && perf_off_cpu=0
modes="alone periscope-cpu periscope-off perf-sched"
[ $perf_off_cpu = 1 ] && modes="$modes perf-off-cpu"

rate() { sed -n 's/^round_trips [0-9]* per_second \([0-9]*\)$/\1/p' "$1"; }
# lost: periscope's lost_samples; perf's "lost N chunks" or "lost X%" of samples
run_mode() { # mode, run → "rate lost bytes"
        local m=$1 out=$tmp/$1.out err=$tmp/$1.err data=$tmp/$1.data lost=0 bytes=0
        rm -f "$data"
        case $m in
        alone) "$tmp/pingpong" "$secs" >"$out" 2>"$err" ;;
        periscope-cpu) "$P" record --private -o "$data" -- "$tmp/pingpong" "$secs" >"$out" 2>"$err" ;;
        periscope-off) "$P" record --private --off-cpu -o "$data" -- "$tmp/pingpong" "$secs" >"$out" 2>"$err" ;;
        perf-sched) perf record -e sched:sched_switch --call-graph dwarf -o "$data" -- "$tmp/pingpong" "$secs" >"$out" 2>"$err" || true ;;
        perf-off-cpu) perf record --off-cpu -o "$data" -- "$tmp/pingpong" "$secs" >"$out" 2>"$err" || true ;;
        esac
        case $m in
        periscope-*) lost=$("$P" info "$data" | sed -n 's/^  lost_samples=//p') ;;
        perf-*) lost=$(grep -o 'lost [0-9.]*%' "$err" | head -1 | sed 's/lost //' || true) ;;
        esac
        [ -f "$data" ] && bytes=$(stat -c %s "$data")
        rm -f "$data" # perf's are a gigabyte
        echo "$(rate "$out") ${lost:-0} $bytes"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A R L B
for ((i = 1; i <= runs; i++)); do
        for m in $modes; do
                read -r r l b < <(run_mode "$m")
                R[$m]+="$r " L[$m]+="$l " B[$m]+="$b "
                echo "run $i $m: $r round trips/s, lost $l, $b bytes" >&2
        done
done
alone=$(echo ${R[alone]} | tr ' ' '\n' | median)
echo "| mode | round trips/s (median of $runs) | vs alone | lost (each run) | bytes on disk (median) |"
echo "| --- | --- | --- | --- | --- |"
for m in $modes; do
        r=$(echo ${R[$m]} | tr ' ' '\n' | median)
        b=$(echo ${B[$m]} | tr ' ' '\n' | median)
        echo "| $m | $r | $(awk -v r="$r" -v a="$alone" 'BEGIN {printf "%.2f×", r / a}') | ${L[$m]} | $b |"
done
[ $perf_off_cpu = 1 ] || echo "(perf record --off-cpu: not in this perf, built without BUILD_BPF_SKEL=1)"

# the waits: what periscope --off-cpu attributes, against the wall clock
"$P" record --private --off-cpu -o "$tmp/waits.syscap" -- "$tmp/waits" 1 >"$tmp/phases.txt" 2>/dev/null
"$P" report --no-progress --off-cpu --folded "$tmp/waits.syscap" >"$tmp/waits.folded"
python3 "$top/tests/offcpu/check-waits.py" "$tmp/waits.folded" - "$tmp/phases.txt" 1 | grep -E "blocked .* lasted"
echo "waits capture: $(stat -c %s "$tmp/waits.syscap") bytes"
