#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Root records the whole system: many processes with their maps, samples
# from several processes, kernel stacks with the kernel context marker.
# Ctrl-C (SIGINT) stops a recording cleanly, and on a terminal a live line
# shows progress.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${DEMO:?}" "${CAPTURE_JSON:?}"
private_bus_start
periscoped_start
demo_start 60000 # killed at the end
# Something that spends its time in the kernel.
dd if=/dev/zero of=/dev/null bs=1 count=100000000 2>/dev/null & sys=$!
private_bus_track $sys

t0=$SECONDS
"$PERISCOPE" record --address "$BUS_ADDRESS" --system --duration 1.5 -o "$TEST_TMP/sys.syscap" 2>"$TEST_TMP/sys.err" ||
        { cat "$TEST_TMP/sys.err"; fail "system recording failed"; }
cat "$TEST_TMP/sys.err"; echo "(system recording took $((SECONDS - t0)) s in all)"
"$PYTHON" "$(dirname "$0")/check-capture.py" "$CAPTURE_JSON" "$TEST_TMP/sys.syscap" readable --min-samples 50 --reason duration
echo "at ${SECONDS}s: checking"
"$CAPTURE_JSON" "$TEST_TMP/sys.syscap" | "$PYTHON" "$(dirname "$0")/check-system-capture.py" $work $sys ||
        fail "the system recording lacks processes, the workloads or kernel stacks"

kill -0 $work || { wait $work; fail "the demo workload ended early with status $? after $SECONDS s"; }
echo "at ${SECONDS}s: SIGINT"
# SIGINT stops cleanly: exit 130, capture complete with reason "stopped".
"$PERISCOPE" record --address "$BUS_ADDRESS" -p $work -o "$TEST_TMP/int.syscap" 2>"$TEST_TMP/int.err" & cli=$!
sleep 2
kill -INT $cli || { cat "$TEST_TMP/int.err"; fail "periscope record ended before SIGINT"; }
st=0; wait $cli || st=$?
cat "$TEST_TMP/int.err"
[ $st = 130 ] || fail "periscope record exited $st after SIGINT (want 130, the capture complete)"
"$PYTHON" "$(dirname "$0")/check-capture.py" "$CAPTURE_JSON" "$TEST_TMP/int.syscap" readable --min-samples 5 --reason stopped
echo "at ${SECONDS}s: summary"
grep -q "capture written to $TEST_TMP/int.syscap" "$TEST_TMP/int.err" || fail "no summary after SIGINT"

echo "at ${SECONDS}s: terminal"
# On a terminal: the live line.
script -qec "$PERISCOPE record --address $BUS_ADDRESS -p $work --duration 1.2 -o $TEST_TMP/tty.syscap" "$TEST_TMP/tty.log" </dev/null >/dev/null ||
        { st=$?; cat -v "$TEST_TMP/tty.log"; fail "periscope record on a terminal exited $st"; }
grep -aqE "periscope: recording [0-9.]+ s, [0-9]+ samples, [0-9]+ lost" "$TEST_TMP/tty.log" || { cat -v "$TEST_TMP/tty.log"; fail "no live line on a terminal"; }
echo "ok: live line on a terminal"
