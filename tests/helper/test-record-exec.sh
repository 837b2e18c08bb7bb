#!/usr/bin/env bash
# A process that execs another program mid-recording: the exec replaces all
# its mappings, but the samples taken before it must still be named from
# the old image (its mappings are retired, not forgotten). The workload
# spins in before_exec_spin, then execs sleep; the report names
# before_exec_spin for its samples, with no "no mapping contains this
# address".
. "$SERVICE_TESTS/private-bus.sh"
: "${PERISCOPE:?}" "${SRCDIR:?}"
w=$TEST_TMP/exec
gcc -O2 -g -o "$w" "$SRCDIR/workload-exec.c" || fail "cannot build the workload (gcc)"
private_bus_start
periscoped_start
cap=$TEST_TMP/exec.syscap
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$cap" -- "$w" 1 /bin/sleep 0.3 >"$TEST_TMP/record.out" 2>&1 ||
        { cat "$TEST_TMP/record.out"; fail "record failed"; }
"$PERISCOPE" report --no-progress --folded "$cap" >"$TEST_TMP/folded.txt" || fail "report failed"
python3 - "$TEST_TMP/folded.txt" <<'PY' || { sort -t' ' -k2 -nr "$TEST_TMP/folded.txt" | head -5; fail "samples before the exec are not named"; }
import sys
total = named = lost = 0
for line in open(sys.argv[1]):
    stack, _, count = line.rstrip("\n").rpartition(" ")
    total += int(count)
    if "main;before_exec_spin" in stack:
        named += int(count)
    if "no mapping contains this address" in stack:
        lost += int(count)
print("%d/%d samples named main;before_exec_spin, %d with an address outside every mapping" % (named, total, lost))
sys.exit(0 if total >= 200 and named >= 0.9 * total and lost <= 0.01 * total else 1)
PY
echo "ok: samples taken before an exec are named from the image they ran"
