#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A client that hands over a pipe and never reads it cannot stall the
# service: its recording ends with a write error (Finished ok=false) while
# another recording, and the bus API, keep working.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${DEMO:?}" "${CAPTURE_JSON:?}"
private_bus_start
periscoped_start
demo_start 60000 # killed at the end
mkfifo "$TEST_TMP/fifo"
# Hold the read end open without ever reading.
sleep 60 <"$TEST_TMP/fifo" & holder=$!
private_bus_track $holder
exec 5>"$TEST_TMP/fifo"
gdbus call --address "$BUS_ADDRESS" -d org.periscope.Profiler1 -o /org/periscope/Profiler1 \
        -m org.periscope.Profiler1.Record "{'pids': <[$work]>, 'frequency': <uint32 4999>, 'duration-ms': <uint32 30000>}" 5 >"$TEST_TMP/rec"
exec 5>&-
stalled=$(grep -o "/org/periscope/Recording/[0-9]*" "$TEST_TMP/rec") || fail "Record on a pipe failed"
# Meanwhile a normal recording works and the API answers promptly.
"$PERISCOPE" record --address "$BUS_ADDRESS" -p $work --duration 2 -o "$TEST_TMP/ok.syscap" 2>"$TEST_TMP/ok.err" ||
        { cat "$TEST_TMP/ok.err"; fail "a second recording failed while a reader stalled"; }
"$PYTHON" "$(dirname "$0")/check-capture.py" "$CAPTURE_JSON" "$TEST_TMP/ok.syscap" readable --min-samples 5 --reason duration
t0=$SECONDS
timeout 5 busctl --address="$BUS_ADDRESS" get-property org.periscope.Profiler1 /org/periscope/Profiler1 org.periscope.Profiler1 Version >/dev/null ||
        fail "the service does not answer while a reader stalls"
# The stalled recording gives up with a write error.
for _ in $(seq 150); do
        grep -q "recording ${stalled##*/}: finished (error)" "$TEST_TMP/periscoped.log" && break
        sleep 0.1
done
grep -q "recording ${stalled##*/}: finished (error)" "$TEST_TMP/periscoped.log" ||
        { cat "$TEST_TMP/periscoped.log"; fail "the stalled recording did not end with an error"; }
grep "recording ${stalled##*/}:" "$TEST_TMP/periscoped.log" | head -2
echo "ok: a stalled reader cost only its own recording"
