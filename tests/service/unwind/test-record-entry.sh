#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# End to end through the real periscoped: a program whose outermost frame,
# its own _start without call frame information, sits at the top of the
# stack. Its stacks end at _start: no invented outermost frame
# ("[unresolved: no mapping contains this address]") past it.
. "$(dirname "$0")/../../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${SRCDIR:?}"
w=$TEST_TMP/entry
gcc -O2 -g -fno-omit-frame-pointer -nostartfiles -o "$w" "$SRCDIR/workload-entry.c" || fail "cannot build the workload (gcc)"
cap=$TEST_TMP/entry.syscap
record_to "$cap" "$w" 1500
"$PERISCOPE" report --no-progress --folded "$cap" >"$TEST_TMP/folded" || fail "report failed"
"$PYTHON" - "$TEST_TMP/folded" <<'PY' || fail "stacks of a program whose outermost frame is _start"
import sys
total = spin = start = bogus = 0
for l in open(sys.argv[1]):
    s, _, n = l.rstrip("\n").rpartition(" ")
    frames, n = s.split(";"), int(n)
    total += n
    if "no mapping contains this address" in s:
        bogus += n
    if "entry_spin" in frames:
        spin += n
        if frames[:3] == ["_start", "entry_main", "entry_spin"]:
            start += n
print("%d samples: %d in entry_spin, %d of them start with _start;entry_main;entry_spin, %d with an invented frame"
      % (total, spin, start, bogus))
sys.exit(0 if spin >= 50 and start / spin >= 0.95 and bogus == 0 else 1)
PY
echo "ok: the stacks end at _start"
