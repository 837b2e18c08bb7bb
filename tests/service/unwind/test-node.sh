#!/usr/bin/env bash
# Node (a 100 MB binary nobody here wrote, whose unwind table takes the
# helper a while to compile) recorded through periscoped: no sample is lost
# while its tables compile (they wait in the spill and the unwinder's
# queue), and its stacks go back to _start or a thread's start.
. "$(dirname "$0")/../../lib/periscoped-bus.sh"
: "${PERISCOPE:?}"
command -v node >/dev/null || fail "node missing: apt-get install -y nodejs (scripts/install-deps.sh does)"
private_bus_start
periscoped_start

"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$TEST_TMP/node.syscap" -- node "$(dirname "$0")/../../lib/fib.js" 3000 24 >"$TEST_TMP/out" 2>"$TEST_TMP/err" ||
        { cat "$TEST_TMP/err"; fail "recording node failed"; }
cat "$TEST_TMP/err"
grep -q done "$TEST_TMP/out" || fail "node did not run to its end"
lost=$(sed -n 's/.*recorded [0-9]* samples (\([0-9]*\) lost).*/\1/p' "$TEST_TMP/err")
[ -n "$lost" ] || fail "no record summary"
[ "$lost" = 0 ] || fail "$lost samples lost while node's tables compiled"
"$PERISCOPE" report --folded "$TEST_TMP/node.syscap" | "$PYTHON" -c '
import sys
total = whole = 0
for line in sys.stdin:
    stack, _, n = line.rstrip("\n").rpartition(" ")
    total += int(n)
    if {"_start", "__clone3", "start_thread"} & set(stack.split(";")):
        whole += int(n)
pct = 100.0 * whole / total if total else 0
print(f"node: {whole} of {total} samples reach _start or a thread start ({pct:.1f}%)")
sys.exit(0 if total >= 200 and pct >= 95 else 1)' || fail "node's stacks are not whole"
echo "ok: node recorded with no lost samples and whole stacks"
