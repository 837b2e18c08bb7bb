#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A user's program floods its control ring with millions of distinct code
# addresses (issue 12, attack 3) while root records a CPU-bound program.
# The service stays available: the rings are drained 5 ms at a time (what
# is left at the Stop by the control-rings stage), the flood's
# symbolization runs in the event loop within its budget of distinct
# addresses, Properties.Get answers in under 100 ms (the slowest of
# repeated Gets) while the flood records, at its Stop and while it is
# finishing, root's recording loses under 1% of its samples, and the
# daemon's peak RSS stays bounded.
# In a session of its own: availability.sh raises its CPU share.
[ "$(ps -o sid= -p $$ | tr -d ' ')" = $$ ] || exec setsid -w "$0" "$@"
. "$(dirname "$0")/../lib/periscoped-bus.sh"
. "$(dirname "$0")/availability.sh"
: "${PERISCOPE:?}" "${DEMO:?}" "${FLOOD:?}" "${PROBE:?}"
test_user_require periscope-user
# A helper time budget of 250 ms: the flood's symbolization is cut there (a
# helper failure, the capture still complete). Symbolizing libc's 200000
# addresses takes the helper 1.5 s on the fastest machine seen (CI) and
# about 10 s here under load, so the budget runs out on any machine.
availability_start --symbolize-budget=0.25
dir=$TEST_TMP/$user
mkdir "$dir"; chown $user: "$dir"

# root's recording of a CPU-bound program, for the whole test
demo_start 120000
"$PERISCOPE" record --address "$BUS_ADDRESS" -p $work -o "$TEST_TMP/victim.syscap" 2>"$TEST_TMP/victim.err" &
victim=$!
private_bus_track $victim
sleep 1

# the flood: 4 processes, 4 s, as the unprivileged user
runuser -u $user -- "$PERISCOPE" record --address "$BUS_ADDRESS" -o "$dir/flood.syscap" -- \
        "$FLOOD" 4 4 >"$TEST_TMP/flood.out" 2>"$TEST_TMP/flood.err" &
flood=$!
private_bus_track $flood
recording_of_uid $uid
probe_finishing "$path" 240
# Its 250 ms helper budget runs out before the helper names anything: the
# capture is complete, and record exits 1 saying it has no names (the
# documented status for a capture whose helper named nothing).
st=0; wait $flood || st=$?
[ $st = 0 ] || { [ $st = 1 ] && grep >/dev/null "the helper named nothing" "$TEST_TMP/flood.err" &&
                 grep >/dev/null "capture written to" "$TEST_TMP/flood.err"; } ||
        { cat "$TEST_TMP/flood.err"; fail "the flood's recording failed (exit $st)"; }
cat "$TEST_TMP/flood.out"
# the peak while both recordings ran and the flood's finished
rss_kb=$(awk '/^VmHWM:/ { print $2 }' /proc/$PERISCOPED_PID/status)

kill -INT $victim
st=0; wait $victim || st=$?
# 130: ended by Ctrl-C, as a shell reports it, capture complete
[ $st = 130 ] || { cat "$TEST_TMP/victim.err"; fail "root's recording failed ($st)"; }

grep -E "recording $id( |:)|giving way" "$TEST_TMP/periscoped.log"
grep -q "recording $id: symbolized" "$TEST_TMP/periscoped.log" || fail "no symbolize statistics for the flood"
echo "Properties.Get: $gets calls, $finishing_gets while finishing ($finishing_ms ms), slowest ${max_finishing_ms} ms while finishing, ${max_ms} ms overall, ${stop_ms} ms across the Stop (final drain of the flood's rings)"
[ "$finishing_gets" -ge 5 ] || fail "the flood's recording was finishing for only $finishing_gets Gets: nothing measured"
get_within_100ms "$max_finishing_ms" "while the flood's recording finished"
[ "$gets" -ge $((finishing_gets + 100)) ] || fail "only $((gets - finishing_gets)) Gets while the flood recorded: nothing measured"
get_within_100ms "$max_ms" "while the flood recorded or stopped"
# Whether the flood left frames in its rings at its end depends on timing
# (here the daemon sometimes drains all of it before the flood exits);
# service-control-ring-backlog checks the control-rings drain itself.
grep -E "recording $id: control rings: [0-9.]+ MiB left at the Stop copied from the event loop" "$TEST_TMP/periscoped.log" ||
        echo "the flood's rings were empty at its Stop: nothing for the control-rings stage"

"$PERISCOPE" info "$dir/flood.syscap" >"$TEST_TMP/flood.info" || fail "periscope info cannot read the flood's capture"
grep -E "^(Samples|Lost samples|Addresses not symbolized|Symbolization stopped)" "$TEST_TMP/flood.info"
grep -q "^Addresses not symbolized (past the budget of 200000 distinct addresses; shown as module+0xOFFSET): [1-9]" \
        "$TEST_TMP/flood.info" || fail "the flood's capture does not say that addresses were past the budget"
# the budget ends the flood's symbolization, and the capture says so
grep -q "^Symbolization stopped: the helper's time budget (250 ms) ran out" "$TEST_TMP/flood.info" ||
        fail "the flood's capture does not say that the helper's time budget ran out"

"$PERISCOPE" info "$TEST_TMP/victim.syscap" >"$TEST_TMP/victim.info" || fail "periscope info cannot read root's capture"
samples=$(sed -n 's/^Samples: //p' "$TEST_TMP/victim.info")
lost=$(sed -n 's/^Lost samples: //p' "$TEST_TMP/victim.info")
echo "root's recording: $samples samples, $lost lost; periscoped peak RSS $((rss_kb / 1024)) MiB"
[ "$samples" -ge 500 ] || fail "root's recording has only $samples samples"
[ $((lost * 100)) -lt "$samples" ] || fail "root's recording lost $lost of $samples samples (must be < 1%)"
[ "$rss_kb" -lt $((512 * 1024)) ] || fail "periscoped's peak RSS is $((rss_kb / 1024)) MiB (must stay under 512 MiB)"
echo "ok: the flood cost only its own recording"
