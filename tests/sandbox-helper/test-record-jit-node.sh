#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# End to end through the real periscoped: node run with --perf-basic-prof
# writes /tmp/perf-PID.map; the recording pins it through the process's
# root, the sandboxed helper reads it, and the JavaScript function fib
# appears in `periscope report` as a named [jit] frame with its share of
# the samples (not as one "[unresolved …] anon" row). The names are in
# both symbol tables and in JITMAP frames, and the perf map's provenance
# is kept for the anonymous mapping.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
. "$(dirname "$0")/jit-checks.sh"
: "${PERISCOPE:?}"
command -v node >/dev/null || fail "node missing: apt-get install -y nodejs (scripts/install-deps.sh does)"
private_bus_start
periscoped_start

fib_js=$(cd "$(dirname "$0")/../lib" && pwd)/fib.js
cap=$TEST_TMP/node.syscap
cd "$TEST_TMP" # node --perf-basic-prof also writes a V8 log (isolate-*.log) where it runs
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$cap" -- node --perf-basic-prof "$fib_js" 2500 25 \
        >"$TEST_TMP/out" 2>"$TEST_TMP/err" || { cat "$TEST_TMP/err"; fail "recording node failed"; }
grep -q done "$TEST_TMP/out" || fail "node did not run to its end"
# The perf map was asked for (--perf-basic-prof): record keeps it (docs/jit.md);
# the test removes it (its pid is the capture's command).
maps=$(jit_node_perf_maps "$cap")
[ -n "$maps" ] || fail "no node process in the capture"
for m in $maps; do
        [ -f "$m" ] || fail "record removed $m, which the user asked node for with --perf-basic-prof"
done
rm -f $maps
jit_node_check "$cap" "$TEST_TMP"
echo "ok: node's JavaScript named from its perf map"
