#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A bus-activated periscoped exits once idle (--idle-timeout), but never
# during a recording; it releases its name so D-Bus can start a new one.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${CAPTURE_JSON:?}"
private_bus_start
periscoped_start --idle-timeout=1
sleep 30 & work=$!
private_bus_track $work
# Busy for 2.5 s: longer than the idle timeout.
"$PERISCOPE" record --address "$BUS_ADDRESS" -p $work --duration 2.5 -o "$TEST_TMP/a.syscap" 2>"$TEST_TMP/err" ||
        { cat "$TEST_TMP/err"; fail "the recording failed (did the service exit while busy?)"; }
"$PYTHON" "$(dirname "$0")/check-capture.py" "$CAPTURE_JSON" "$TEST_TMP/a.syscap" readable --min-samples 0 --reason duration
periscoped_wait_exit 10 "periscoped still runs 10 s after its last recording (idle timeout 1 s)"
[ $PERISCOPED_STATUS = 0 ] ||
        { cat "$TEST_TMP/periscoped.log"; fail "periscoped exited with $PERISCOPED_STATUS when idle"; }
grep -q "idle for 1 s, exiting" "$TEST_TMP/periscoped.log" || fail "no idle message in the log"
busctl --address="$BUS_ADDRESS" status org.periscope.Profiler1 >/dev/null 2>&1 && fail "the name is still owned"
echo "ok: exited when idle, not while recording"
