#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A storm of context switches: workload-pingpong's two threads pass a byte
# over two pipes (100k+ switches/s). Recorded with --off-cpu through
# periscoped (private bus) it must lose no record, the capture must say
# that switches were sampled (the governor paused the off-CPU events) and
# report --off-cpu must repeat it. What it costs the workload next to a CPU
# recording at 999 Hz is printed (medians of 3 runs), never asserted: a
# timing on a shared machine is no verdict; bench/run-offcpu-bench.sh
# measures it.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${SRCDIR:?}"
gcc -O2 -g -pthread -o "$TEST_TMP/pingpong" "$SRCDIR/workload-pingpong.c" || fail "cannot build workload-pingpong.c"
private_bus_start
periscoped_start
rate() { sed -n 's/^round_trips [0-9]* per_second \([0-9]*\)$/\1/p' "$1"; }
median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
base=() cpu=() off=()
for i in 1 2 3; do
        "$TEST_TMP/pingpong" 2 >"$TEST_TMP/base.out" || fail "pingpong failed"
        base+=("$(rate "$TEST_TMP/base.out")")
        "$PERISCOPE" record --address "$BUS_ADDRESS" -o "$TEST_TMP/cpu.syscap" -- "$TEST_TMP/pingpong" 2 \
                >"$TEST_TMP/cpu.out" 2>"$TEST_TMP/cpu.err" || { cat "$TEST_TMP/cpu.err"; fail "CPU recording failed"; }
        cpu+=("$(rate "$TEST_TMP/cpu.out")")
        cap=$TEST_TMP/off-$i.syscap
        "$PERISCOPE" record --address "$BUS_ADDRESS" --off-cpu -o "$cap" -- "$TEST_TMP/pingpong" 2 \
                >"$TEST_TMP/off.out" 2>"$TEST_TMP/off.err" || { cat "$TEST_TMP/off.err"; fail "off-CPU recording failed"; }
        off+=("$(rate "$TEST_TMP/off.out")")
        "$PERISCOPE" info "$cap" >"$TEST_TMP/info.txt" || fail "info failed"
        grep >/dev/null -x "  lost_samples=0" "$TEST_TMP/info.txt" ||
                { grep -E "lost|off_cpu" "$TEST_TMP/info.txt"; fail "run $i: the off-CPU recording lost records"; }
        grep -E "off_cpu_(pauses|paused_ns|stack_pauses|stacks_paused_ns|peak_switch_records_per_s)=" \
                "$TEST_TMP/info.txt" | tr '\n' ' '
        echo
        pauses=$(sed -n 's/^  off_cpu_pauses=//p' "$TEST_TMP/info.txt")
        [ "${pauses:-0}" -ge 1 ] || fail "run $i: a storm, and the switch records were never paused: the capture does not say switches were sampled"
        "$PERISCOPE" report --no-progress --off-cpu "$cap" >"$TEST_TMP/report.txt" 2>&1 || true
        grep >/dev/null "^Switches sampled: a storm of context switches" "$TEST_TMP/report.txt" ||
                { cat "$TEST_TMP/report.txt"; fail "run $i: report --off-cpu does not say switches were sampled"; }
done
b=$(median "${base[@]}") c=$(median "${cpu[@]}") o=$(median "${off[@]}")
echo "round trips/s (median of 3): alone $b, CPU recording at 999 Hz $c, --off-cpu $o"
echo "off-CPU storm: ok"
