#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# How recordings end: the client vanishing mid-recording (SIGKILL) still
# finalizes the capture; two recordings run at once; a duration ends one by
# itself; and when the service itself is SIGKILLed the capture is readable
# up to its last flush.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${DEMO:?}" "${CAPTURE_JSON:?}"
check() { "$PYTHON" "$(dirname "$0")/check-capture.py" "$CAPTURE_JSON" "$@"; }
# Waits (up to 30 s: sanitizer builds on a loaded machine are slow) until the
# capture being written already holds flushed samples.
wait_for_flushed_samples() {
        for _ in $(seq 300); do
                check "$1" partial --min-samples 5 >/dev/null 2>&1 && return 0
                sleep 0.1
        done
        fail "no samples were flushed to $1 within 30 s"
}
private_bus_start
periscoped_start
"$DEMO" -t 30000 & work=$!
private_bus_track $work

# Client vanishes: SIGKILL the CLI; the service notices it left the bus.
"$PERISCOPE" record --address "$BUS_ADDRESS" -p $work -o "$TEST_TMP/vanish.syscap" 2>/dev/null & cli=$!
wait_for_flushed_samples "$TEST_TMP/vanish.syscap"
kill -KILL $cli; wait $cli 2>/dev/null || true
for _ in $(seq 50); do
        grep -q "finished (client-vanished)" "$TEST_TMP/periscoped.log" && break
        sleep 0.1
done
grep -q "finished (client-vanished)" "$TEST_TMP/periscoped.log" || fail "the recording did not end when its client vanished"
check "$TEST_TMP/vanish.syscap" readable --min-samples 5 --reason client-vanished

# Two recordings at once, of the same process, each ending by its duration.
"$PERISCOPE" record --address "$BUS_ADDRESS" -p $work --duration 1.5 -o "$TEST_TMP/one.syscap" 2>"$TEST_TMP/one.err" & a=$!
"$PERISCOPE" record --address "$BUS_ADDRESS" -p $work --duration 1.5 -o "$TEST_TMP/two.syscap" 2>"$TEST_TMP/two.err" & b=$!
wait $a || { cat "$TEST_TMP/one.err"; fail "first concurrent recording failed"; }
wait $b || { cat "$TEST_TMP/two.err"; fail "second concurrent recording failed"; }
check "$TEST_TMP/one.syscap" readable --min-samples 5 --reason duration
check "$TEST_TMP/two.syscap" readable --min-samples 5 --reason duration

# The service is SIGKILLed mid-recording: what was flushed stays readable.
"$PERISCOPE" record --address "$BUS_ADDRESS" -p $work -o "$TEST_TMP/crash.syscap" >/dev/null 2>&1 & cli=$!
private_bus_track $cli
wait_for_flushed_samples "$TEST_TMP/crash.syscap"
kill -KILL "$PERISCOPED_PID"
sleep 0.3
check "$TEST_TMP/crash.syscap" partial --min-samples 5
