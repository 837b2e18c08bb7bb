#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
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
"$PERISCOPE" report --folded "$TEST_TMP/node.syscap" | "$PYTHON" "$(dirname "$0")/whole-stacks.py" node 200 \
        || fail "node's stacks are not whole"
echo "ok: node recorded with no lost samples and whole stacks"
