#!/usr/bin/env bash
# A recording whose unwind tables take the helper long to compile does not
# slow the service for anyone else (issue 12): node (a 99 MB binary) and
# python3 recorded with DWARF unwinding through periscoped while a probe
# reads the Profiler's Version over and over. The compiles run in the
# helper while the event loop serves the bus: the slowest Get stays under
# 100 ms, and the recording still loses no sample and gets whole stacks
# (the checks of service-unwind-node).
# In a session of its own: availability.sh raises its CPU share.
[ "$(ps -o sid= -p $$ | tr -d ' ')" = $$ ] || exec setsid -w "$0" "$@"
. "$(dirname "$0")/../../lib/periscoped-bus.sh"
. "$(dirname "$0")/../availability.sh"
: "${PERISCOPE:?}" "${PROBE:?}"
command -v node >/dev/null || fail "node missing: apt-get install -y nodejs (scripts/install-deps.sh does)"
availability_start

nice -n -10 "$PROBE" --profiler "$BUS_ADDRESS" "$TEST_TMP/stop" 180 >"$TEST_TMP/latency" 2>"$TEST_TMP/latency.err" &
probe=$!
private_bus_track $probe
sleep 0.5

# node's first samples need the table of its 99 MB binary, which nobody
# compiled yet (a fresh daemon)
"$PERISCOPE" record --address "$BUS_ADDRESS" --unwind dwarf -o "$TEST_TMP/node.syscap" -- \
        node "$(dirname "$0")/../../lib/fib.js" 3000 24 >"$TEST_TMP/out" 2>"$TEST_TMP/err" ||
        { cat "$TEST_TMP/err"; fail "recording node failed"; }
touch "$TEST_TMP/stop"
wait $probe || { cat "$TEST_TMP/latency" "$TEST_TMP/latency.err"; fail "the probe failed"; }
cat "$TEST_TMP/err" "$TEST_TMP/latency.err"
grep -E "unwind table|giving way" "$TEST_TMP/periscoped.log" || true
read -r _ gets _ max_ms _ slow_gets <"$TEST_TMP/latency"
echo "Properties.Get of the Profiler's Version: $gets calls, slowest $max_ms ms, $slow_gets over 50 ms"

# the measure means something only if a long compile happened meanwhile
compile_ms=$(sed -n 's/.*unwind table of [^ ]*node[^ ]* compiled in \([0-9]*\) ms.*/\1/p' "$TEST_TMP/periscoped.log" | head -1)
[ -n "$compile_ms" ] || fail "the daemon did not say how long node's table took to compile"
echo "node's table compiled in $compile_ms ms"
[ "$compile_ms" -ge 200 ] || fail "node's table compiled in $compile_ms ms: too fast to measure anything"
[ "$gets" -ge $((compile_ms / 100)) ] || fail "only $gets Gets while the table compiled for $compile_ms ms"
awk -v m="$max_ms" 'BEGIN { exit !(m < 100) }' ||
        fail "Properties.Get took $max_ms ms while node's recording compiled its tables (must be < 100 ms)"

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
echo "ok: node's table compiled off the event loop: no Get slowed, no sample lost, whole stacks"
