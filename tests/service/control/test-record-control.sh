#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The control fd through the real periscoped on a private bus:
#  - `periscope record -- collector-client threads` (Debian's libsysprof-capture
#    collector, 4 threads): every mark, log, counter value and allocation
#    arrives with the right pid, thread and time;
#  - 100 000 marks per second: none lost;
#  - `periscope record --memory -- memory-workload`: `periscope report
#    --memory` names the leaking call sites and their exact byte counts;
#  - default counters (cpu, memory) are in the capture; Capabilities lists
#    the counter sources; AddMark from outside lands in the capture;
#  - `periscope report --marks/--counters/--timeline` on the results.
# Needs PERISCOPED, PERISCOPE, CLIENT, CHECK (test-control-ring), WORKLOAD.
. "$(dirname "$0")/../../lib/periscoped-bus.sh"
. "$(dirname "$0")/control-checks.sh"
: "${PERISCOPE:?}" "${CLIENT:?}" "${CHECK:?}" "${WORKLOAD:?}"
private_bus_start
periscoped_start

# 1. Marks, logs, counters, allocations from four threads.
cap=$TEST_TMP/threads.syscap
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$cap" -- "$CLIENT" threads 4 5000 >"$TEST_TMP/threads.out" ||
        fail "record of the collector client exited $?"
control_check_threads "$cap" "$TEST_TMP/threads.out" "$TEST_TMP"

# 2. 100 000 marks per second.
cap=$TEST_TMP/rate.syscap
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$cap" -- "$CLIENT" rate 100000 >"$TEST_TMP/rate.out" ||
        fail "record of the rate client exited $?"
"$CHECK" verify-rate "$cap" "$TEST_TMP/rate.out" 100000 || fail "marks were lost at 100 000 per second"
echo "ok: 100 000 marks per second, none lost"

# 3. Default counters are there: CPU Percent and Memory definitions.
"$PERISCOPE" dump "$cap" >"$TEST_TMP/rate.dump" || fail "periscope dump failed"
grep -q '"CPU Percent" "Combined"' "$TEST_TMP/rate.dump" || fail "no CPU Percent counters in a default recording"
grep -q '"Memory" "Used"' "$TEST_TMP/rate.dump" || fail "no Memory counters in a default recording"
echo "ok: default counters recorded"

# 4. Capabilities names the counter sources.
caps=$(busctl --address="$BUS_ADDRESS" get-property org.periscope.Profiler1 /org/periscope/Profiler1 \
        org.periscope.Profiler1 Capabilities)
echo "$caps" | grep >/dev/null '"counters" as [0-9]* "cpu" "memory"' || fail "Capabilities lacks the counters: $caps"
echo "$caps" | grep >/dev/null '"counters-unavailable"' || fail "Capabilities lacks counters-unavailable: $caps"
echo "ok: Capabilities lists counters"

# 5. The memory profiler: the leaking call sites and their exact bytes.
cap=$TEST_TMP/memory.syscap
"$PERISCOPE" record --address "$BUS_ADDRESS" --memory -o "$cap" -- "$WORKLOAD" >"$TEST_TMP/memory.out" ||
        fail "record --memory exited $?"
control_check_memory "$cap" "$TEST_TMP"

# 6. AddMark from outside, while a recording runs.
cap=$TEST_TMP/addmark.syscap
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$cap" -- sleep 1.5 >"$TEST_TMP/addmark.out" 2>&1 &
rec=$!
private_bus_track $rec
path=
for _ in $(seq 50); do
        path=$(busctl --address="$BUS_ADDRESS" tree org.periscope.Profiler1 --list 2>/dev/null |
                grep '^/org/periscope/Recording/' | tail -n1) || true
        [ -n "$path" ] && break
        sleep 0.05
done
[ -n "$path" ] || fail "no recording object appeared"
pcall "$path" org.periscope.Recording1 AddMark xxsss 0 1000 outside "build step" "from busctl" ||
        fail "AddMark failed"
set +e
busctl --address="$BUS_ADDRESS" call -- org.periscope.Profiler1 "$path" org.periscope.Recording1 AddMark \
        xxsss 0 -5 outside bad "negative duration" 2>"$TEST_TMP/err"
st=$?
set -e
[ $st != 0 ] && grep -q "negative" "$TEST_TMP/err" || fail "AddMark accepted a negative duration: $(cat "$TEST_TMP/err")"
wait $rec || fail "record of sleep exited $?"
"$PERISCOPE" report --marks "$cap" >"$TEST_TMP/addmark.txt" || fail "report --marks failed"
cat "$TEST_TMP/addmark.txt"
grep -qE '^ +1 .* outside +build step$' "$TEST_TMP/addmark.txt" || fail "the AddMark mark is not in the capture"
echo "ok: AddMark"
