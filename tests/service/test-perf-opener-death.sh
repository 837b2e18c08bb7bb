#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# periscoped (root) loses its perf opener (docs/security.md, "The perf
# opener"); it cannot start another (its capabilities are dropped), so it
# finishes its recordings and exits with a failure, for systemd's
# Restart=on-failure (or the next bus activation) to start a new one.
#  A: the opener is killed (SIGKILL) during a recording: the recording ends
#     at once with a finalized, readable capture (reason shutdown), the
#     daemon exits non-zero saying why, and a new periscoped records a
#     command with named stacks.
#  B: the opener hangs (SIGSTOP): the next Record waits for it 10 s (on
#     a fiber: other callers are served meanwhile, test-perf-opener-stalled),
#     fails naming the opener, and the daemon exits non-zero again.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${DEMO:?}" "${CAPTURE_JSON:?}"
[ "$(id -u)" = 0 ] || fail "periscoped starts its perf opener as root: run this test as root"
check() { "$PYTHON" "$(dirname "$0")/check-capture.py" "$CAPTURE_JSON" "$@"; }
opener_of_daemon() { # its one child at start: the opener
        opener=$(tr -s ' ' '\n' </proc/"$PERISCOPED_PID"/task/"$PERISCOPED_PID"/children | grep -v '^$' || true)
        [ "$(echo "$opener" | wc -w)" = 1 ] || fail "periscoped should have one child, its perf opener: '$opener'"
}
private_bus_start

# A. Killed during a recording.
periscoped_start
opener_of_daemon
demo_start 60000
"$PERISCOPE" record --address "$BUS_ADDRESS" -p $work --duration 40 -o "$TEST_TMP/during.syscap" \
        >"$TEST_TMP/during.out" 2>&1 & rec=$!
for _ in $(seq 300); do
        check "$TEST_TMP/during.syscap" partial --min-samples 20 >/dev/null 2>&1 && break
        sleep 0.1
done
check "$TEST_TMP/during.syscap" partial --min-samples 20 >/dev/null || fail "no samples were flushed within 30 s"
kill -KILL "$opener"
wait_for 20 eval '! kill -0 $rec 2>/dev/null' || fail "periscope record still runs 20 s after the perf opener died"
st=0
wait $rec || st=$?
cat "$TEST_TMP/during.out"
echo "periscope record exited $st"
check "$TEST_TMP/during.syscap" readable --min-samples 20 --reason shutdown ||
        fail "the recording whose perf opener died did not end with a finalized capture"
echo "ok: the recording ended at once, its capture finalized and readable"
periscoped_wait_exit 15 "periscoped still runs 15 s after its perf opener died"
[ "$PERISCOPED_STATUS" != 0 ] || fail "periscoped exited with status 0 after losing its perf opener (systemd would not restart it)"
grep >/dev/null "perf opener is gone (pid $opener was killed by signal 9): finishing 1 recording" "$TEST_TMP/periscoped.log" ||
        fail "the log does not say that the perf opener was killed and the recordings end"
grep >/dev/null "exiting with a failure: the perf opener is gone" "$TEST_TMP/periscoped.log" ||
        fail "the log does not say why periscoped exits with a failure"
echo "ok: periscoped exited with status $PERISCOPED_STATUS, saying why"

# As systemd restarts it: a new periscoped records through its own opener.
periscoped_start
opener_of_daemon
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$TEST_TMP/again.syscap" -- "$DEMO" -t 1200 2>"$TEST_TMP/err" ||
        { cat "$TEST_TMP/err"; fail "the new periscoped does not record"; }
check "$TEST_TMP/again.syscap" callchains "$DEMO" || fail "the new periscoped's capture lacks named stacks"
echo "ok: a new periscoped records through its own opener"

# B. A hung opener: given up after 10 s, the daemon exits for a restart.
kill -STOP "$opener"
st=0
"$PERISCOPE" record --address "$BUS_ADDRESS" -p $work --duration 0.5 -o "$TEST_TMP/hung.syscap" 2>"$TEST_TMP/err" || st=$?
cat "$TEST_TMP/err"
[ $st != 0 ] || fail "a recording with a stopped perf opener succeeded"
grep >/dev/null "perf opener.*is gone (pid $opener did not answer within 10 s, and was killed)" "$TEST_TMP/err" ||
        fail "the error does not say that the perf opener did not answer"
periscoped_wait_exit 15 "periscoped still runs 15 s after giving its perf opener up"
[ "$PERISCOPED_STATUS" != 0 ] || fail "periscoped exited with status 0 after giving its perf opener up"
echo "ok: a hung opener is given up after 10 s, and periscoped exits for a restart"
echo PASS
