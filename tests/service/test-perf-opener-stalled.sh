#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A Record's perf events are opened on a fiber (service/fiber/): while the
# perf opener takes its time, every other caller is served (issue 27).
#  A: the opener is stopped (SIGSTOP) with a Record's request in its
#     socket: another client's Properties.Get and ListTargets are answered
#     while it is still stopped and the Record still waits (a second
#     Record waits for its turn); after SIGCONT both recordings start and
#     end with named stacks.
#  B: each perf_event_open in the opener takes 0.3 s (strace's fault
#     injection): Version is answered after the first of the Record's
#     events is open and before the last (the start logged), and the
#     recording completes.
#  C: a client that leaves the bus while its Record waits for the stopped
#     opener: its recording (no duration) ends as it starts, after SIGCONT
#     (its face cannot watch a sender that is gone).
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${DEMO:?}" "${CAPTURE_JSON:?}"
[ "$(id -u)" = 0 ] || fail "periscoped starts its perf opener as root: run this test as root"
command -v strace >/dev/null || fail "strace is missing: apt-get install strace"
command -v ss >/dev/null || fail "ss is missing: apt-get install iproute2"
check() { "$PYTHON" "$(dirname "$0")/check-capture.py" "$CAPTURE_JSON" "$@"; }
opener_of_daemon() { # its one child at start: the opener
        opener=$(tr -s ' ' '\n' </proc/"$PERISCOPED_PID"/task/"$PERISCOPED_PID"/children | grep -v '^$' || true)
        [ "$(echo "$opener" | wc -w)" = 1 ] || fail "periscoped should have one child, its perf opener: '$opener'"
}
opener_state() { awk '{ print $3 }' /proc/"$opener"/stat 2>/dev/null || echo gone; }
# bytes waiting in the opener's end of its socket: a request it has not read
opener_queued() { ss -x -a -p 2>/dev/null | awk -v p="pid=$opener," 'index($0, p) { print $3; exit }'; }
request_queued() { [ "$(opener_queued)" -gt 0 ] 2>/dev/null; }
started() { grep -c "recording $1: started for uid" "$TEST_TMP/periscoped.log" || true; }
version() {
        busctl --address="$BUS_ADDRESS" get-property org.periscope.Profiler1 /org/periscope/Profiler1 \
                org.periscope.Profiler1 Version
}
private_bus_start
periscoped_start
opener_of_daemon
demo_start 60000

# A. Stopped, a request of a Record waiting in its socket.
kill -STOP "$opener"
"$PERISCOPE" record --address "$BUS_ADDRESS" -p $work --duration 2 -o "$TEST_TMP/stopped.syscap" \
        >"$TEST_TMP/stopped.out" 2>&1 & rec=$!
wait_for 20 request_queued || fail "Record's first request never reached the stopped perf opener"
"$PERISCOPE" record --address "$BUS_ADDRESS" -p $work --duration 2 -o "$TEST_TMP/second.syscap" \
        >"$TEST_TMP/second.out" 2>&1 & rec2=$!
version >"$TEST_TMP/version" || fail "Properties.Get of Version failed while the perf opener is stopped"
pcall /org/periscope/Profiler1 org.periscope.Profiler1 ListTargets >"$TEST_TMP/targets" ||
        fail "ListTargets failed while the perf opener is stopped"
[ "$(opener_state)" = T ] || fail "the perf opener is no longer stopped (state $(opener_state)): it was given up"
[ "$(started 1)" = 0 ] || fail "the Record started although the perf opener is stopped"
kill -0 $rec 2>/dev/null || fail "periscope record ended while the perf opener is stopped"
kill -0 $rec2 2>/dev/null || fail "the second periscope record ended while the perf opener is stopped"
grep -q '^s "' "$TEST_TMP/version" || fail "Version reads '$(cat "$TEST_TMP/version")'"
grep -q "\"pid\" i $work" "$TEST_TMP/targets" || fail "ListTargets does not list the demo ($work)"
echo "ok: Version and ListTargets answered while the perf opener is stopped and a Record waits for it"
kill -CONT "$opener"
st=0
wait $rec || st=$?
cat "$TEST_TMP/stopped.out"
[ $st = 0 ] || fail "the recording that waited for the stopped opener failed ($st)"
check "$TEST_TMP/stopped.syscap" callchains "$DEMO" || fail "the capture lacks named stacks of the demo"
st=0
wait $rec2 || st=$?
cat "$TEST_TMP/second.out"
[ $st = 0 ] || fail "the Record that waited for its turn failed ($st)"
check "$TEST_TMP/second.syscap" callchains "$DEMO" || fail "the second capture lacks named stacks of the demo"
echo "ok: after SIGCONT both recordings started and completed with named stacks"

# B. Every perf_event_open delayed 0.3 s.
strace -f -qq -o "$TEST_TMP/strace.out" -e trace=perf_event_open -e inject=perf_event_open:delay_enter=300000 -p "$opener" &
tracer=$!
wait_for 10 eval '[ "$(awk "/TracerPid/ { print \$2 }" /proc/$opener/status)" != 0 ]' ||
        fail "strace did not attach to the perf opener"
"$PERISCOPE" record --address "$BUS_ADDRESS" -p $work --off-cpu --duration 1 -o "$TEST_TMP/slow.syscap" \
        >"$TEST_TMP/slow.out" 2>&1 & rec=$!
# the first of its six events (two CPUs, three events) opened, 0.3 s each
wait_for 20 grep -q perf_event_open "$TEST_TMP/strace.out" ||
        fail "the second Record's requests never reached the perf opener"
version >/dev/null || fail "Properties.Get of Version failed while the perf opener is slow"
[ "$(started 3)" = 0 ] || fail "Version was answered only after the Record's events were all open"
echo "ok: Version answered while the Record's events are being opened"
st=0
wait $rec || st=$?
kill $tracer 2>/dev/null || true
wait $tracer 2>/dev/null || true
cat "$TEST_TMP/slow.out"
[ $st = 0 ] || fail "the recording through the slow opener failed ($st)"
check "$TEST_TMP/slow.syscap" callchains "$DEMO" || fail "the slow opener's capture lacks named stacks"
echo "ok: the recording through the slow opener completed with named stacks"

# C. The caller leaves while its Record waits.
kill -STOP "$opener"
gdbus call --address "$BUS_ADDRESS" -d org.periscope.Profiler1 -o /org/periscope/Profiler1 \
        -m org.periscope.Profiler1.Record "{'pids': <[$work]>}" 3 3>"$TEST_TMP/gone.syscap" >/dev/null 2>&1 & client=$!
wait_for 20 request_queued || fail "the third Record's request never reached the stopped perf opener"
kill -KILL $client
wait $client 2>/dev/null || true
version >/dev/null || fail "Properties.Get of Version failed while the perf opener is stopped"
kill -CONT "$opener"
wait_for 30 grep -qE "recording 4: finished \((shutdown|client-vanished)\)" "$TEST_TMP/periscoped.log" ||
        fail "the recording of a client that left during its start did not end as it started"
echo "ok: a client that left while its recording started: the recording ended as it started"
kill -0 "$PERISCOPED_PID" || fail "periscoped exited"
echo PASS
