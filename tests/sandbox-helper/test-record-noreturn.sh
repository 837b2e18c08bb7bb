#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Return addresses are named by the call before them: a workload whose
# callers end in a call to a noreturn function (the return address is the
# next function's first byte) is recorded through the real periscoped, and
# the report must say main;start_loop;run_forever;leaf_work, never name the
# function that happens to follow start_loop.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
. "$(dirname "$0")/record-workload.sh"
build_workload noreturn workload-noreturn.c -O2 -g -fomit-frame-pointer -falign-functions=1 -fno-reorder-functions
w=$TEST_TMP/noreturn
# The premise: start_loop ends with its call, unrelated_next starts right there.
read -r start size < <(nm -S "$w" | awk '$4 == "start_loop" { print $1, $2 }')
next=$(nm "$w" | awk '$3 == "unrelated_next" { print $1 }')
[ -n "$start" ] && [ -n "$next" ] || fail "no start_loop/unrelated_next symbols in the workload"
[ $((16#$start + 16#$size)) = $((16#$next)) ] ||
        fail "the compiler placed unrelated_next elsewhere ($start+$size vs $next): the test's premise does not hold"

record_folded noreturn 1.5
python3 - "$TEST_TMP/noreturn.folded" <<'PY' || { sort -t' ' -k2 -nr "$TEST_TMP/noreturn.folded" | head -5; fail "wrong callers"; }
import folded, sys
total = right = 0
for s in folded.stacks(sys.argv[1], containing="leaf_work"):
    frames = s.frames
    total += s.count
    if "unrelated_next" in frames:
        print("FAIL: a caller named after the function that follows it:", s.line)
        sys.exit(1)
    i = frames.index("leaf_work")
    if frames[i - 3:i + 1] == ["main", "start_loop", "run_forever", "leaf_work"]:
        right += s.count
print("%d/%d samples in leaf_work have main;start_loop;run_forever;leaf_work" % (right, total))
sys.exit(0 if total >= 100 and right >= 0.95 * total else 1)
PY
echo "ok: return addresses after noreturn calls name their callers"
