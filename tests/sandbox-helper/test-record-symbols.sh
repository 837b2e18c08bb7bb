#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# End to end through the real periscoped: `periscope record` a workload whose
# hot loop is inlined two levels deep, delete the binary, and the report and
# both embedded symbol tables still name the functions, inline frames marked.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${STAGE_TOOL:?}" "${SRCDIR:?}"
private_bus_start
periscoped_start
w=$TEST_TMP/spin
gcc -O2 -g -fno-omit-frame-pointer -o "$w" "$SRCDIR/workload-spin.c" || fail "cannot build the workload (gcc)"
cap=$TEST_TMP/spin.syscap
record_to "$cap" "$w" 1500
rm -f "$w"
[ ! -e "$w" ] || fail "binary still there"

"$PERISCOPE" report --no-progress "$cap" >"$TEST_TMP/report.txt" 2>&1 || { cat "$TEST_TMP/report.txt"; fail "report failed"; }
cat "$TEST_TMP/report.txt"
grep -q "spin_inner.*(inlined)" "$TEST_TMP/report.txt" || fail "the report does not show spin_inner as an inlined frame"
grep -q "spin_outer.*(inlined)" "$TEST_TMP/report.txt" || fail "the report does not show spin_outer as an inlined frame"
grep -q "spin_function" "$TEST_TMP/report.txt" || fail "the report does not name spin_function"
grep -q "unresolved: helper failed" "$TEST_TMP/report.txt" && fail "the helper failed during the recording"
echo "ok: report names the inlined hot loop after the binary was deleted"

# folded stacks: spin_inner sits directly on spin_outer on spin_function
"$PERISCOPE" report --no-progress --folded "$cap" >"$TEST_TMP/folded.txt"
grep -qE "spin_function[^;]*;spin_outer[^;]*;spin_inner" "$TEST_TMP/folded.txt" ||
        { head -20 "$TEST_TMP/folded.txt"; fail "inline frames are not in caller order under spin_function"; }
echo "ok: inline frames are in the right places"

# both tables: __symbols__ (Sysprof 3.46 layout) names each sampled address
# with the outermost function of the Periscope table's chain
python3 - "$PERISCOPE" "$STAGE_TOOL" "$cap" <<'PY'
import json, subprocess, sys, collections
periscope, tool, cap = sys.argv[1:]
doc = json.loads(subprocess.run([periscope, "dump", "--json", cap], capture_output=True, text=True, check=True).stdout)
samples = [f for f in doc["frames"] if f.get("type") == "SAMPLE"]
if not samples:
    sys.exit("FAIL: the capture has no samples")
by_pid = collections.defaultdict(set)
for s in samples:
    user = [int(x, 16) for x in s.get("addresses", [])]
    for a in [x for x in user if x < 0xffff800000000000][:3]:
        by_pid[s["pid"]].add(a)
pid, addrs = max(by_pid.items(), key=lambda kv: len(kv[1]))
out = subprocess.run([tool, "read", cap, str(pid)] + ["0x%x" % a for a in sorted(addrs)][:200],
                     capture_output=True, text=True, check=True).stdout
per = {}
sysp = {}
for l in out.splitlines():
    k, _, v = l.partition(": ")
    kind, addr = k.split()
    if kind == "periscope":
        per[addr] = [x.strip() for x in v.split("|") if x.strip()]
    elif kind == "sysprof":
        sysp[addr] = v
named = [a for a in per if per[a] and "[unresolved]" not in per[a][0]]
if len(named) < 1:
    print(out); sys.exit("FAIL: no sampled address of pid %d is named" % pid)
bad = [a for a in named if sysp.get(a) != per[a][-1].replace(" [inlined]", "")]
if bad:
    print(out); sys.exit("FAIL: __symbols__ disagrees with the Periscope table at %s" % bad[:5])
if not any(per[a][-1] == "spin_function" and per[a][0].startswith("spin_inner") for a in named):
    print(out); sys.exit("FAIL: no sampled address resolves to spin_inner inside spin_function")
print("ok: __symbols__ (3.46 layout) and the Periscope table name %d sampled addresses alike" % len(named))
PY
