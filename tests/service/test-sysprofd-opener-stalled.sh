#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The drop-in's PerfEventOpen awaits the perf opener on a fiber
# (service/fiber/), as Record's start does (issue 27): while the opener
# takes its time, every other caller of periscoped --sysprofd is served.
#  A: the opener is stopped (SIGSTOP) with a PerfEventOpen's request in its
#     socket: another client's Peer.Ping and ListProcesses are answered
#     while it is still stopped and the call still waits; after SIGCONT the
#     call completes with an fd.
#  B: a client that leaves the bus while its PerfEventOpen waits: after
#     SIGCONT the event is closed, never remembered for it (the daemon
#     holds no perf event fd), and the next client's call gets its fd.
#  C: the hostile variant: 64 calls of one user wait for the stopped
#     opener (each on a fiber); the 65th is refused at once with
#     LimitExceeded, Peer.Ping is still answered, and after SIGCONT all 64
#     get their fds.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${DEMO:?}" "${SYSPROF3_CLIENT:?}"
[ "$(id -u)" = 0 ] || fail "periscoped starts its perf opener as root: run this test as root"
command -v ss >/dev/null || fail "ss is missing: apt-get install iproute2"
private_bus_start
PERISCOPE_DEBUG=1 "$PERISCOPED" --address="$BUS_ADDRESS" --sysprofd 2>>"$TEST_TMP/periscoped.log" &
PERISCOPED_PID=$!
private_bus_track $PERISCOPED_PID
private_bus_wait_name org.gnome.Sysprof3 10 $PERISCOPED_PID || fail "periscoped --sysprofd did not take org.gnome.Sysprof3"
opener=$(tr -s ' ' '\n' </proc/"$PERISCOPED_PID"/task/"$PERISCOPED_PID"/children | grep -v '^$' || true)
[ "$(echo "$opener" | wc -w)" = 1 ] || fail "periscoped should have one child, its perf opener: '$opener'"
opener_state() { awk '{ print $3 }' /proc/"$opener"/stat 2>/dev/null || echo gone; }
# bytes waiting in the opener's end of its socket: a request it has not read
opener_queued() { ss -x -a -p 2>/dev/null | awk -v p="pid=$opener," 'index($0, p) { print $3; exit }'; }
request_queued() { [ "$(opener_queued)" -gt 0 ] 2>/dev/null; }
perf_fds() { # the perf events periscoped itself holds
        local n=0 f
        for f in /proc/"$PERISCOPED_PID"/fd/*; do
                [ "$(readlink "$f" 2>/dev/null)" = "anon_inode:[perf_event]" ] && n=$((n + 1))
        done
        echo $n
}
no_perf_fds() { [ "$(perf_fds)" = 0 ]; }
on_bus() { busctl --address="$BUS_ADDRESS" list --no-legend 2>/dev/null | awk '{ print $1 }' | grep >/dev/null -x "$1"; }
others_served() {
        busctl --address="$BUS_ADDRESS" call org.gnome.Sysprof3 /org/gnome/Sysprof3 org.freedesktop.DBus.Peer Ping ||
                fail "Peer.Ping was not answered while the perf opener is stopped"
        busctl --address="$BUS_ADDRESS" call org.gnome.Sysprof3 /org/gnome/Sysprof3 org.gnome.Sysprof3.Service \
                ListProcesses >"$TEST_TMP/processes" || fail "ListProcesses failed while the perf opener is stopped"
        grep >/dev/null -w "$work" "$TEST_TMP/processes" || fail "ListProcesses does not list the demo ($work)"
        [ "$(opener_state)" = T ] || fail "the perf opener is no longer stopped (state $(opener_state)): it was given up"
}
demo_start 60000

# A. Stopped, a PerfEventOpen's request waiting in its socket.
kill -STOP "$opener"
"$SYSPROF3_CLIENT" perf-open $work >"$TEST_TMP/stopped.out" 2>&1 & client=$!
wait_for 20 request_queued || fail "PerfEventOpen's request never reached the stopped perf opener"
others_served
kill -0 $client 2>/dev/null || { cat "$TEST_TMP/stopped.out"; fail "PerfEventOpen was answered while the perf opener is stopped"; }
echo "ok: Peer.Ping and ListProcesses answered while the perf opener is stopped and a PerfEventOpen waits for it"
kill -CONT "$opener"
st=0
wait $client || st=$?
cat "$TEST_TMP/stopped.out"
[ $st = 0 ] || fail "the PerfEventOpen that waited for the stopped opener failed ($st)"
grep >/dev/null "opened: perf event fd for process $work" "$TEST_TMP/stopped.out" ||
        fail "the PerfEventOpen that waited handed no fd"
echo "ok: after SIGCONT the PerfEventOpen completed with an fd"

# B. The caller leaves while its PerfEventOpen waits.
kill -STOP "$opener"
"$SYSPROF3_CLIENT" perf-open $work >/dev/null 2>&1 & client=$!
wait_for 20 request_queued || fail "the second PerfEventOpen's request never reached the stopped perf opener"
name=$(busctl --address="$BUS_ADDRESS" list --no-legend | awk -v p=$client '$2 == p { print $1; exit }')
[ -n "$name" ] || fail "the waiting client ($client) has no name on the bus"
kill -KILL $client
wait $client 2>/dev/null || true
# gone from the bus: periscoped hears it before anything asked after
wait_for 10 eval '! on_bus "$name"' || fail "the killed client $name is still on the bus"
others_served
kill -CONT "$opener"
wait_for 20 grep >/dev/null "left while its perf event (pid $work cpu -1) was opened: closed" "$TEST_TMP/periscoped.log" ||
        fail "the event of a client that left during its PerfEventOpen was not closed for it"
wait_for 10 no_perf_fds || fail "periscoped still holds $(perf_fds) perf event fd(s) after the client left"
"$SYSPROF3_CLIENT" perf-open $work >"$TEST_TMP/after.out" 2>&1 || { cat "$TEST_TMP/after.out"; fail "the next PerfEventOpen failed"; }
echo "ok: a client that left while its PerfEventOpen waited: its event closed, the next client served"

# C. One user's 65th waiting call.
waiting() { grep -c "PerfEventOpen of uid 0 waits for the perf opener" "$TEST_TMP/periscoped.log" || true; }
base=$(waiting)
kill -STOP "$opener"
clients=()
for i in $(seq 64); do
        "$SYSPROF3_CLIENT" perf-open $work >"$TEST_TMP/many-$i.out" 2>&1 &
        clients+=($!)
done
wait_for 60 eval '[ "$(waiting)" -ge $((base + 64)) ]' ||
        fail "only $(($(waiting) - base)) of the 64 PerfEventOpen calls wait for the stopped opener"
st=0
"$SYSPROF3_CLIENT" perf-open $work >"$TEST_TMP/65th.out" 2>&1 || st=$?
cat "$TEST_TMP/65th.out"
[ $st != 0 ] || fail "a 65th PerfEventOpen of one user was served while 64 wait"
grep >/dev/null "LimitExceeded" "$TEST_TMP/65th.out" || fail "the 65th PerfEventOpen was not refused with LimitExceeded"
grep >/dev/null "has 64 PerfEventOpen calls waiting for the perf opener" "$TEST_TMP/65th.out" ||
        fail "the 65th PerfEventOpen's refusal does not say why"
others_served
echo "ok: one user's 65th PerfEventOpen waiting for the opener refused with LimitExceeded, others served"
kill -CONT "$opener"
for i in $(seq 64); do
        st=0
        wait "${clients[$((i - 1))]}" || st=$?
        [ $st = 0 ] && grep >/dev/null "opened: perf event fd" "$TEST_TMP/many-$i.out" ||
                { cat "$TEST_TMP/many-$i.out"; fail "waiting PerfEventOpen $i of 64 failed ($st)"; }
done
echo "ok: after SIGCONT the 64 waiting PerfEventOpen calls got their fds"
kill -0 "$PERISCOPED_PID" || fail "periscoped exited"
echo PASS
