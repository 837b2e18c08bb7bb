#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The trace-fd merge gives way to the event loop (issue 12: post-stop
# stages never block the service): a program writes 30 MiB of marks into
# its SYSPROF_TRACE_FD (about 300 000 frames, near the 32 MiB read limit)
# while root records it through periscoped on a private bus; while the
# recording ends and finishes (the merge, then symbolization)
# Properties.Get of its State is answered in under 100 ms, and every frame the program wrote is
# merged (the daemon's log, `periscope record`'s summary, the capture).
# Then the service is stopped (SIGTERM) when it is to merge another such
# fd, with no time for the post-stop stages (--stop-budget=0): the merge is
# cancelled at its next slice, the capture is complete and readable, and the
# daemon exits cleanly (no sanitizer report in the sanitizer build).
# In a session of its own: availability.sh raises its CPU share.
# Needs PERISCOPED, PERISCOPE, WRITER (trace-writer), PROBE (property-latency).
[ "$(ps -o sid= -p $$ | tr -d ' ')" = $$ ] || exec setsid -w "$0" "$@"
. "$(dirname "$0")/../../lib/periscoped-bus.sh"
. "$(dirname "$0")/../availability.sh"
: "${PERISCOPE:?}" "${WRITER:?}" "${PROBE:?}"
MIB=30

availability_start --stop-budget=0

# Frame-pointer stacks: no unwind tables to compile meanwhile, so no
# spilled DWARF samples for the final drain to unwind (under ASan that drain
# alone can take a second); the end of the recording is then the merge's
# to slow down, as it did before it ran on a fiber.
"$PERISCOPE" record --address "$BUS_ADDRESS" --unwind=fp -o "$TEST_TMP/flood.syscap" -- "$WRITER" flood $MIB \
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
get_within_100ms "$stop_ms" "across the end of the recording"
get_within_100ms "$max_finishing_ms" "while the trace fd was merged"
echo "ok: the service answered within 100 ms while it merged $MIB MiB of trace fd"

# 2. SIGTERM when the merge is due: the recorded command sends it as it
# ends, after writing its 30 MiB (the daemon sees the command's end and the
# signal in either order: both leave the merge to be cancelled; polling
# State instead lost the race to a fast merge).
# Frame-pointer stacks again: with DWARF the SIGTERM may find the recording
# still waiting for unwind tables, before any stage (and the merge) began.
"$PERISCOPE" record --address "$BUS_ADDRESS" --unwind=fp -o "$TEST_TMP/cut.syscap" -- \
        sh -c "'$WRITER' flood $MIB && kill -TERM $PERISCOPED_PID" >"$TEST_TMP/cut.out" 2>"$TEST_TMP/cut.err" &
private_bus_track $!
st=0
timeout 60 tail --pid="$PERISCOPED_PID" -f /dev/null || fail "periscoped did not exit within 60 s (the command sends SIGTERM after its flood)"
wait "$PERISCOPED_PID" || st=$?
grep -E "recording 2( |:)|signal" "$TEST_TMP/periscoped.log"
[ $st = 0 ] || fail "periscoped exited $st after SIGTERM during the merge"
grep -qE "recording 2: 1 trace fd\(s\): [0-9]+ frames merged, 0 refused, 0 skipped \(cut short" "$TEST_TMP/periscoped.log" ||
        fail "the merge was not cut short by SIGTERM"
grep -q "recording 2: finished" "$TEST_TMP/periscoped.log" || fail "recording 2 did not finish"
"$PERISCOPE" report --marks "$TEST_TMP/cut.syscap" >"$TEST_TMP/cut.marks" 2>&1 ||
        { cat "$TEST_TMP/cut.marks"; fail "the capture of the recording cut short is not readable"; }
cut=$(awk '$NF == "flood-mark" { print $1 }' "$TEST_TMP/cut.marks")
[ "${cut:-0}" -lt "$frames" ] || fail "all $frames marks merged although the merge was cut short"
echo "ok: SIGTERM as the merge was due: cut short after ${cut:-0} of about $frames frames, capture readable, clean exit"
