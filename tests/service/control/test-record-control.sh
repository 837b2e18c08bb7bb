#!/usr/bin/env bash
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
: "${PERISCOPE:?}" "${CLIENT:?}" "${CHECK:?}" "${WORKLOAD:?}"
private_bus_start
periscoped_start

# 1. Marks, logs, counters, allocations from four threads.
cap=$TEST_TMP/threads.syscap
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$cap" -- "$CLIENT" threads 4 5000 >"$TEST_TMP/threads.out" ||
        fail "record of the collector client exited $?"
"$CHECK" verify-threads "$cap" "$TEST_TMP/threads.out" 4 5000 || fail "threads capture is wrong"
echo "ok: marks, logs, counters and allocations of 4 threads"

# The report views on it.
"$PERISCOPE" report --marks --counters --timeline "$TEST_TMP/threads.svg" "$cap" >"$TEST_TMP/threads.txt" ||
        fail "report --marks --counters --timeline failed"
cat "$TEST_TMP/threads.txt"
grep -qE '^ +20000 .* periscope-test +mark$' "$TEST_TMP/threads.txt" || fail "--marks does not count the 20000 marks"
grep -qE '^ +2000  message +periscope-test$' "$TEST_TMP/threads.txt" || fail "--marks does not count the 2000 logs"
grep -qE '^periscope-test +counter-a +[0-9]+ +2000 ' "$TEST_TMP/threads.txt" ||
        fail "--counters does not show counter-a's 2000 values"
grep -qE '^CPU Percent +Combined +system ' "$TEST_TMP/threads.txt" || fail "--counters does not show the CPU counter"
python3 - "$TEST_TMP/threads.svg" <<'PY' || fail "--timeline wrote a bad SVG"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
texts = [t.text or "" for t in root.iter(ns + "text")]
assert any(t == "Marks (20000)" for t in texts), texts[:5]
assert len(list(root.iter(ns + "polyline"))) >= 3   # CPU, memory and the program's counters
assert len([r for r in root.iter(ns + "rect") if r.find(ns + "title") is not None]) == 5000  # marks drawn (capped)
PY
echo "ok: report --marks, --counters, --timeline"

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
"$PERISCOPE" report --memory "$cap" >"$TEST_TMP/memory.txt" || fail "report --memory failed"
cat "$TEST_TMP/memory.txt"
# The service symbolizes the ALLOCATION stacks at Stop: call sites by name.
leaked=$(sed -n '/^Leaked/,/^$/p' "$TEST_TMP/memory.txt")
echo "$leaked" | grep >/dev/null -E '^ +102400 +25  leak_site$' || fail "leak_site's 102400 bytes in 25 blocks not reported as leaked"
echo "$leaked" | grep >/dev/null -E '^ +2000 +20  leak_in_thread$' || fail "leak_in_thread's 2000 bytes in 20 blocks not reported as leaked"
if echo "$leaked" | grep >/dev/null -E 'temp_site|grow_site|peak_site|aligned_site|main$'; then
        fail "a call site that freed everything is listed as leaking"
fi
sed -n '/^Short-lived/,/^$/p' "$TEST_TMP/memory.txt" | grep >/dev/null -E '^ +1000 +512000  temp_site$' ||
        fail "temp_site's 1000 temporaries not reported"
sed -n '/^Allocated/,/^$/p' "$TEST_TMP/memory.txt" | grep >/dev/null -E '^ +2024 +2 +0  aligned_site$' ||
        fail "aligned_site's posix_memalign + aligned_alloc not one call site of 2024 bytes"
echo "ok: memory report names the leaks exactly"

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
