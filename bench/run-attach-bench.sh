#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# run-attach-bench.sh: how long Record takes to attach to a process of
# THREADS idle threads (tests/service/workload-many-threads.c) with
# off-cpu (three events per thread and CPU, each a round trip to the perf
# opener), and how long another client's Properties.Get of Version,
# sent while the events are being opened, waits meanwhile. A private bus
# and the tree's periscoped (root, so through its perf opener). Prints
# one line per run and the medians.
#
#   bench/run-attach-bench.sh [BUILD_DIR]      env: RUNS (3), THREADS (400)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
runs=${RUNS:-3} threads=${THREADS:-400}
[ "$(id -u)" = 0 ] || { echo "run as root (periscoped's perf opener)"; exit 1; }
export PERISCOPED=$build/service/periscoped
many=$build/tests/service/workload-many-threads
[ -x "$many" ] || { echo "missing $many: build the tree first"; exit 1; }
. "$top/tests/lib/periscoped-bus.sh"
private_bus_start
periscoped_start
: >"$TEST_TMP/many.out"
"$many" "$threads" >"$TEST_TMP/many.out" &
pid=$!
private_bus_track $pid
wait_for 60 grep -q ready "$TEST_TMP/many.out" || fail "$many $threads did not start its threads"
ms() { echo $(($(date +%s%N) / 1000000)); }
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
attach= probe=
for ((i = 1; i <= runs; i++)); do
        t0=$(ms)
        gdbus call --address "$BUS_ADDRESS" -d org.periscope.Profiler1 -o /org/periscope/Profiler1 \
                -m org.periscope.Profiler1.Record \
                "{'pids': <[$pid]>, 'off-cpu': <true>, 'duration-ms': <uint32 500>, 'symbolize': <false>}" \
                3 3>"$TEST_TMP/run$i.syscap" >/dev/null & rec=$!
        sleep 0.05 # the attach is under way (it takes a quarter of a second and more)
        p0=$(ms)
        busctl --address="$BUS_ADDRESS" get-property org.periscope.Profiler1 /org/periscope/Profiler1 \
                org.periscope.Profiler1 Version >/dev/null
        p1=$(ms)
        wait $rec
        t1=$(ms)
        echo "run $i: Record answered after $((t1 - t0)) ms; Version during the attach: $((p1 - p0)) ms" >&2
        attach+="$((t1 - t0)) " probe+="$((p1 - p0)) "
        sleep 2 # the recording ends (500 ms) and gives its events back
done
echo "threads $(awk '/^Threads:/ { print $2 }' /proc/$pid/status), $(nproc) CPUs, off-cpu:" \
        "Record answered after $(echo $attach | tr ' ' '\n' | median) ms (median of $runs: $attach)," \
        "Version during the attach $(echo $probe | tr ' ' '\n' | median) ms ($probe)"
