#!/usr/bin/env bash
# The trace-fd merge gives way to the event loop (issue 12: post-stop
# stages never block the service): a program writes 30 MiB of marks into
# its SYSPROF_TRACE_FD (about 300 000 frames, near the 32 MiB read limit)
# while root records it through periscoped on a private bus; while the
# recording ends and finishes (the merge, then symbolization)
# Properties.Get of its State is answered in under 100 ms, and every frame the program wrote is
# merged (the daemon's log, `periscope record`'s summary, the capture).
# In a session of its own: availability.sh raises its CPU share.
# Needs PERISCOPED, PERISCOPE, WRITER (trace-writer), PROBE (property-latency).
[ "$(ps -o sid= -p $$ | tr -d ' ')" = $$ ] || exec setsid -w "$0" "$@"
. "$(dirname "$0")/../../lib/periscoped-bus.sh"
. "$(dirname "$0")/../availability.sh"
: "${PERISCOPE:?}" "${WRITER:?}" "${PROBE:?}"
MIB=30

availability_start

"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$TEST_TMP/flood.syscap" -- "$WRITER" flood $MIB \
        >"$TEST_TMP/writer.out" 2>"$TEST_TMP/record.err" &
rec=$!
private_bus_track $rec
recording_of_uid 0
probe_finishing "$path" 120
wait $rec || { cat "$TEST_TMP/record.err"; fail "recording the trace-fd flood failed"; }
cat "$TEST_TMP/record.err"
grep -E "recording $id( |:)" "$TEST_TMP/periscoped.log"

frames=$(sed -n 's/^frames //p' "$TEST_TMP/writer.out")
[ -n "$frames" ] && [ "$frames" -gt 200000 ] || fail "the writer wrote '$frames' frames: not a flood"
grep -q "recording $id: 1 trace fd(s): $frames frames merged, 0 refused" "$TEST_TMP/periscoped.log" ||
        fail "the daemon did not merge all $frames frames"
grep -q "periscope: $frames frames from the program's SYSPROF_TRACE_FD merged, 0 refused" "$TEST_TMP/record.err" ||
        fail "the summary does not count all $frames frames"
"$PERISCOPE" report --marks "$TEST_TMP/flood.syscap" >"$TEST_TMP/marks" || fail "report --marks failed"
grep -qE "^ +$frames .* flood +flood-mark$" "$TEST_TMP/marks" ||
        { head -20 "$TEST_TMP/marks"; fail "the capture does not hold the $frames marks"; }
echo "ok: $frames frames ($MIB MiB) merged, in the log, the summary and the capture"

# The Get sent before the recording ended and answered after the stages
# began spans the end sequence (the merge ran there, 0.3 s for 30 MiB,
# before it moved to a fiber); the Gets while finishing span the merge.
# (The first Get also sets up the connection: it is not counted.)
echo "Properties.Get: $gets calls, slowest $max_ms ms; across the end of the recording $stop_ms ms; $finishing_gets while finishing for $finishing_ms ms, slowest $max_finishing_ms ms"
[ "$finishing_gets" -ge 5 ] || fail "only $finishing_gets Gets while the recording finished: nothing measured"
awk -v m="$stop_ms" 'BEGIN { exit !(m < 100) }' ||
        fail "Properties.Get took $stop_ms ms across the end of the recording (must be < 100 ms)"
awk -v m="$max_finishing_ms" 'BEGIN { exit !(m < 100) }' ||
        fail "Properties.Get took $max_finishing_ms ms while the trace fd was merged (must be < 100 ms)"
echo "ok: the service answered within 100 ms while it merged $MIB MiB of trace fd"
