#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# service-setuid-exec-race (issue 27, docs/security.md): a process of
# periscope-user that execs a setuid-root program after periscoped checked
# it and before the open lands in nothing of the user's: the open is held
# deterministically (strace delays it; the exec is done, and seen done,
# while the open waits), then
#   - `periscope record -p` (Record) is refused: no sample of the program,
#   - with Record's snapshot held instead (the maps open, after the events):
#     the capture has no MAP frame of the program,
#   - with the snapshot's read of the vdso held (its /proc/PID/mem open):
#     the memory of the program is not read (the re-check after the open),
#   - a child that inherited the events execs the program while recorded:
#     no sample of it (the kernel takes inherited events away at that exec),
#   - root's recording opens the events again after that exec on a fiber:
#     with the perf opener stopped, Version is answered meanwhile,
#   - the drop-in's PerfEventOpen refuses, its fd closed,
#   - the drop-in's GetProcFd refuses (its maps would be the program's),
#     and GetProcFile, whose read (of io, made at read time) is held;
# the plain variant next to each: an exec of a program that is not set-id,
# in the same window, is recorded and served.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${DEMO:?}" "${SYSPROF3_CLIENT:?}" "${CAPTURE_JSON:?}"
[ "$(id -u)" = 0 ] || fail "must run as root (a setuid-root program, strace on periscoped)"
command -v strace >/dev/null || fail "strace is missing: apt-get install strace (scripts/packages.txt)"
command -v ss >/dev/null || fail "ss is missing: apt-get install iproute2"
test_user_require periscope-user
periscoped_start_for_user periscope-user 755
# the drop-in on the same bus, with its own perf opener
"$PERISCOPED" --address="$BUS_ADDRESS" --sysprofd 2>>"$TEST_TMP/periscoped-sysprofd.log" &
sysprofd_pid=$!
private_bus_track $sysprofd_pid
private_bus_wait_name org.gnome.Sysprof3 10 $sysprofd_pid || fail "periscoped --sysprofd did not take org.gnome.Sysprof3"

# The programs exec'd: copies of the demo workload, one setuid root, on a
# file system that honours it.
if findmnt -n -o OPTIONS -T "$TEST_TMP" | tr , '\n' | grep >/dev/null -x nosuid; then
        fail "$TEST_TMP is on a nosuid file system: a setuid program cannot be made there"
fi
cp "$DEMO" "$TEST_TMP/setuid-demo" && chown root:root "$TEST_TMP/setuid-demo" && chmod 4755 "$TEST_TMP/setuid-demo"
cp "$DEMO" "$TEST_TMP/plain-demo" && chmod 755 "$TEST_TMP/plain-demo"

# racer_start PROGRAM: a busy shell of periscope-user (pid in $racer) that
# execs PROGRAM -t 3500 on SIGUSR1: 3.5 s of CPU time, so it outlives the
# 3 s hold below whatever the load (its CPU time cannot pass wall time).
racer_start() {
        setpriv --reuid="$user" --regid="$user" --clear-groups -- \
                bash -c 'trap "exec $0 -t 3500" USR1; while :; do :; done' "$1" &
        racer=$!
        private_bus_track $racer
        wait_for 5 owned_by_user "$racer" || fail "periscope-user's shell did not start"
}

# hold_open PID SYSCALL [strace filter…]: the next matching SYSCALL of
# process PID's main thread (periscoped and its perf opener run on one)
# waits $hold_us (3 s) before it runs; the opener's calls are held 0.7 s,
# less than periscoped waits for an answer before it gives
# the opener up (PERF_OPENER_TIMEOUT_MS); strace's log in $TEST_TMP/strace.log, its pid
# in $strace_pid. Not -f: the children periscoped forks meanwhile (the
# caller's file opener, the helper's bwrap) must not be traced.
hold_open() {
        local pid=$1 syscall=$2
        shift 2
        : >"$TEST_TMP/strace.log"
        strace -qq -o "$TEST_TMP/strace.log" "$@" -e trace="$syscall" \
                -e inject="$syscall":delay_enter="${hold_us:-3000000}":when=1 -p "$pid" &
        strace_pid=$!
        private_bus_track $strace_pid
        wait_for 5 tracing "$pid" || fail "strace did not attach to process $pid"
}
tracing() { [ "$(awk '/^TracerPid:/ {print $2}' /proc/"$1"/status)" != 0 ]; }
not_tracing() { ! tracing "$1"; }
not_alive() { ! kill -0 "$1" 2>/dev/null || [ "$(awk '/^State:/ {print $2}' /proc/"$1"/status 2>/dev/null)" = Z ]; }
owned_by_user() { [ "$(stat -c %u /proc/"$1")" = "$uid" ]; }
runs() { [ "$(readlink /proc/"$1"/exe)" = "$2" ]; }
held() { grep >/dev/null "$1(" "$TEST_TMP/strace.log"; }

# race PROGRAM SYSCALL: once the held SYSCALL waits, the racer execs
# PROGRAM; fails unless the exec was complete while the call still waited.
race() {
        wait_for 20 held "$2" || { cat "$TEST_TMP/strace.log"; fail "no $2 call was held"; }
        kill -USR1 "$racer"
        wait_for 2 runs "$racer" "$1" || fail "the racer did not exec $1"
        ! grep >/dev/null DELAYED "$TEST_TMP/strace.log" ||
                fail "the held $2 ran before the exec was complete (a loaded machine?): the race was not made"
        echo "(process $racer exec'd $(basename "$1") while $2 waited)"
}

hold_done() {
        wait_for 10 grep >/dev/null DELAYED "$TEST_TMP/strace.log" || fail "the held call never ran"
        kill "$strace_pid" 2>/dev/null || true
        wait_for 10 not_alive "$strace_pid" || fail "strace did not end on SIGTERM"
        wait "$strace_pid" 2>/dev/null || true
        wait_for 5 not_tracing "$1" || fail "strace did not detach"
}

opener_of() { # DAEMON-PID: its one child, the perf opener
        local o
        o=$(tr -s ' ' '\n' </proc/"$1"/task/"$1"/children | grep -v '^$' || true)
        [ "$(echo "$o" | wc -w)" = 1 ] || fail "periscoped $1 should have one child, its perf opener: '$o'"
        echo "$o"
}
opener=$(opener_of "$PERISCOPED_PID")
sysprofd_opener=$(opener_of "$sysprofd_pid")

# ---- Record ----
for kind in setuid plain; do
        racer_start "$TEST_TMP/$kind-demo"
        hold_us=700000 hold_open "$opener" perf_event_open
        # until the program exits
        as_user "$PERISCOPE" record --address "$BUS_ADDRESS" -p "$racer" -o "$dir/$kind.syscap" \
                >"$dir/$kind.out" 2>&1 &
        rec=$!
        race "$TEST_TMP/$kind-demo" perf_event_open
        st=0
        wait $rec || st=$?
        hold_done "$opener"
        cat "$dir/$kind.out"
        report=
        [ -s "$dir/$kind.syscap" ] && report=$("$PERISCOPE" report --no-progress "$dir/$kind.syscap" 2>&1 || true)
        kill "$racer" 2>/dev/null || true
        if [ $kind = setuid ]; then
                ! grep >/dev/null inner_c <<<"$report" ||
                        { echo "$report"; fail "periscope-user's capture holds samples of a setuid-root program"; }
                [ $st != 0 ] || fail "record -p of a process that became setuid root succeeded"
                grep >/dev/null "process $racer is not yours (any more" "$dir/$kind.out" ||
                        fail "the refusal does not say the process is no longer periscope-user's"
                grep >/dev/null "perf events of process $racer closed: the process is no longer uid $uid's" \
                        "$TEST_TMP/periscoped.log" || fail "periscoped did not log why it closed the events"
                echo "ok: Record: a setuid exec during the open is refused, no sample of the program"
        else
                [ $st = 0 ] || fail "record -p of periscope-user's own exec'd program failed"
                grep >/dev/null inner_c <<<"$report" ||
                        { echo "$report"; fail "periscope-user's own exec'd program was not recorded"; }
                echo "ok: Record: an exec of a program that is not set-id during the open is recorded"
        fi
done

# ---- Record's snapshot: the exec after the events, while the maps open waits ----
# The kernel takes the events away at that exec; the maps opened after it
# would be the program's (its files, its layout).
for kind in setuid plain; do
        racer_start "$TEST_TMP/$kind-demo"
        hold_open "$PERISCOPED_PID" openat -P "/proc/$racer/maps"
        as_user "$PERISCOPE" record --address "$BUS_ADDRESS" -p "$racer" -o "$dir/snap-$kind.syscap" \
                >"$dir/snap-$kind.out" 2>&1 &
        rec=$!
        race "$TEST_TMP/$kind-demo" openat
        st=0
        wait $rec || st=$?
        hold_done "$PERISCOPED_PID"
        kill "$racer" 2>/dev/null || true
        cat "$dir/snap-$kind.out"
        [ $st = 0 ] || fail "record -p of a process that exec'd during the snapshot failed ($kind)"
        # (its PROCESS frame may come with the exec: its command line is anyone's to read)
        frames=$("$CAPTURE_JSON" "$dir/snap-$kind.syscap" | grep '"type":"MAP"' || true)
        report=$("$PERISCOPE" report --no-progress "$dir/snap-$kind.syscap" 2>&1 || true)
        if [ $kind = setuid ]; then
                ! grep >/dev/null setuid-demo <<<"$frames" ||
                        { grep setuid-demo <<<"$frames" | head -5; fail "periscope-user's capture holds the setuid-root program's maps"; }
                ! grep >/dev/null inner_c <<<"$report" || fail "periscope-user's capture holds samples of a setuid-root program"
                grep >/dev/null "maps of process $racer closed: the process is no longer uid $uid's" \
                        "$TEST_TMP/periscoped.log" || fail "periscoped did not log why it left out the maps"
                echo "ok: Record's snapshot: a setuid exec while the maps open waits leaves the program out"
        else
                grep >/dev/null plain-demo <<<"$frames" || fail "the snapshot lacks the maps of periscope-user's own program"
                grep >/dev/null inner_c <<<"$report" ||
                        { echo "$report"; fail "periscope-user's own exec'd program was not recorded"; }
                echo "ok: Record's snapshot: an exec of a program that is not set-id there is recorded"
        fi
done

# ---- Record's snapshot: the exec while the vdso's memory open waits ----
# The maps were read and checked before it; /proc/PID/mem opened after it
# would be the program's memory (vdso-image.c reads the vdso's range).
for kind in setuid plain; do
        racer_start "$TEST_TMP/$kind-demo"
        hold_open "$PERISCOPED_PID" openat -P "/proc/$racer/mem"
        as_user "$PERISCOPE" record --address "$BUS_ADDRESS" -p "$racer" -o "$dir/vdso-$kind.syscap" \
                >"$dir/vdso-$kind.out" 2>&1 &
        rec=$!
        race "$TEST_TMP/$kind-demo" openat
        st=0
        wait $rec || st=$?
        hold_done "$PERISCOPED_PID"
        kill "$racer" 2>/dev/null || true
        cat "$dir/vdso-$kind.out"
        [ $st = 0 ] || fail "record -p of a process that exec'd while its vdso was read failed ($kind)"
        report=$("$PERISCOPE" report --no-progress "$dir/vdso-$kind.syscap" 2>&1 || true)
        refused="vdso image (/proc/PID/mem) of process $racer closed: the process is no longer uid $uid's"
        if [ $kind = setuid ]; then
                grep >/dev/null -F "$refused" "$TEST_TMP/periscoped.log" ||
                        fail "periscoped read the vdso out of a process that became setuid root"
                ! grep >/dev/null inner_c <<<"$report" || fail "periscope-user's capture holds samples of a setuid-root program"
                echo "ok: Record's snapshot: a setuid exec while the vdso's memory opens leaves its bytes unread"
        else
                ! grep >/dev/null -F "$refused" "$TEST_TMP/periscoped.log" ||
                        fail "the vdso of periscope-user's own exec'd program was refused"
                grep >/dev/null inner_c <<<"$report" ||
                        { echo "$report"; fail "periscope-user's own exec'd program was not recorded"; }
                echo "ok: Record's snapshot: an exec of a program that is not set-id while the vdso's memory opens is recorded"
        fi
done

# ---- a child followed through inherit execs setuid while recorded ----
# Its inherited events exist before its exec, which takes them away (the
# kernel: perf_event_exit_task at a non-dumpable exec).
recordings() { busctl --address="$BUS_ADDRESS" tree --list org.periscope.Profiler1 2>/dev/null | grep '^/org/periscope/Recording/' || true; }
new_recording() { [ "$(recordings)" != "$1" ] && [ -n "$(recordings)" ]; }
for kind in setuid plain; do
        setpriv --reuid="$user" --regid="$user" --clear-groups -- \
                bash -c 'trap "( exec $0 -t 1000 ); exit 0" USR1; while :; do :; done' "$TEST_TMP/$kind-demo" &
        racer=$!
        private_bus_track $racer
        wait_for 5 owned_by_user "$racer" || fail "periscope-user's shell did not start"
        before=$(recordings)
        as_user "$PERISCOPE" record --address "$BUS_ADDRESS" -p "$racer" -o "$dir/child-$kind.syscap" \
                >"$dir/child-$kind.out" 2>&1 &
        rec=$!
        wait_for 20 new_recording "$before" || fail "the recording of process $racer did not start"
        kill -USR1 "$racer" # its events are open: the child inherits them
        st=0
        wait $rec || st=$?
        cat "$dir/child-$kind.out"
        [ $st = 0 ] || fail "record -p of a shell whose child execs $kind-demo failed"
        report=$("$PERISCOPE" report --no-progress "$dir/child-$kind.syscap" 2>&1 || true)
        if [ $kind = setuid ]; then
                ! grep >/dev/null inner_c <<<"$report" ||
                        { echo "$report"; fail "a child's setuid-root program was sampled through inherit"; }
                grep >/dev/null "exec'd a program that uid $uid may not profile" "$TEST_TMP/periscoped.log" ||
                        fail "periscoped did not say the kernel stopped sampling the child"
                echo "ok: inherit: a child's setuid exec ends its sampling"
        else
                grep >/dev/null inner_c <<<"$report" || { echo "$report"; fail "the child's own program was not recorded"; }
                echo "ok: inherit: a child's exec of a program that is not set-id is recorded"
        fi
done

# ---- root's recording: its events again after the exec, the opener stopped ----
# Root may record the program: the events the kernel took away at the exec
# are opened again, on the recording's attach fiber, so a stopped perf
# opener stalls only them while periscoped serves everyone else.
opener_queued() { ss -x -a -p 2>/dev/null | awk -v p="pid=$opener," 'index($0, p) { print $3; exit }'; }
request_queued() { [ "$(opener_queued)" -gt 0 ] 2>/dev/null; }
racer_start "$TEST_TMP/setuid-demo"
before=$(recordings)
"$PERISCOPE" record --address "$BUS_ADDRESS" -p "$racer" -o "$dir/reattach.syscap" >"$dir/reattach.out" 2>&1 &
rec=$!
wait_for 20 new_recording "$before" || fail "root's recording of process $racer did not start"
kill -STOP "$opener"
kill -USR1 "$racer"
wait_for 5 runs "$racer" "$TEST_TMP/setuid-demo" || fail "the racer did not exec setuid-demo"
wait_for 20 request_queued || fail "the re-attach after the exec never reached the stopped perf opener"
busctl --address="$BUS_ADDRESS" get-property org.periscope.Profiler1 /org/periscope/Profiler1 \
        org.periscope.Profiler1 Version >/dev/null || fail "Version was not answered while the re-attach waits"
[ "$(awk '{ print $3 }' /proc/"$opener"/stat)" = T ] || fail "the perf opener is no longer stopped: it was given up"
echo "ok: root's re-attach after a setuid exec waits for the stopped opener; Version answered meanwhile"
kill -CONT "$opener"
st=0
wait $rec || st=$?
kill "$racer" 2>/dev/null || true
cat "$dir/reattach.out"
[ $st = 0 ] || fail "root's recording of a process that exec'd setuid-demo failed ($st)"
grep >/dev/null "process $racer exec'd a program with other privileges (the kernel stopped sampling it): sampled again" \
        "$TEST_TMP/periscoped.log" || fail "periscoped did not sample process $racer again after its exec"
report=$("$PERISCOPE" report --no-progress "$dir/reattach.syscap" 2>&1 || true)
grep >/dev/null inner_c <<<"$report" || { echo "$report"; fail "root's capture lacks the exec'd program's samples"; }
echo "ok: after SIGCONT root's recording samples the exec'd program again"

# ---- the drop-in: PerfEventOpen ----
for kind in setuid plain; do
        racer_start "$TEST_TMP/$kind-demo"
        hold_us=700000 hold_open "$sysprofd_opener" perf_event_open
        as_user "$SYSPROF3_CLIENT" perf-open "$racer" >"$dir/perf-open-$kind.out" 2>&1 &
        client=$!
        race "$TEST_TMP/$kind-demo" perf_event_open
        st=0
        wait $client || st=$?
        hold_done "$sysprofd_opener"
        kill "$racer" 2>/dev/null || true
        cat "$dir/perf-open-$kind.out"
        if [ $kind = setuid ]; then
                [ $st != 0 ] || fail "PerfEventOpen handed over an event on a setuid-root program"
                grep >/dev/null "process $racer is not yours any more" "$dir/perf-open-$kind.out" ||
                        fail "PerfEventOpen's refusal does not say why"
                echo "ok: PerfEventOpen: a setuid exec during the open is refused, the fd closed"
        else
                [ $st = 0 ] || fail "PerfEventOpen on periscope-user's own exec'd program failed"
                echo "ok: PerfEventOpen: an exec of a program that is not set-id during the open is served"
        fi
done

# ---- the drop-in: GetProcFd (the open of maps held in the daemon) ----
for kind in setuid plain; do
        racer_start "$TEST_TMP/$kind-demo"
        hold_open "$sysprofd_pid" openat2 -P "/proc/$racer"
        as_user "$SYSPROF3_CLIENT" proc-fd "/proc/$racer/maps" >"$dir/proc-fd-$kind.out" 2>&1 &
        client=$!
        race "$TEST_TMP/$kind-demo" openat2
        st=0
        wait $client || st=$?
        hold_done "$sysprofd_pid"
        kill "$racer" 2>/dev/null || true
        cat "$dir/proc-fd-$kind.out"
        if [ $kind = setuid ]; then
                [ $st != 0 ] || fail "GetProcFd served the maps of a setuid-root program"
                grep >/dev/null "process $racer is not yours (any more)" "$dir/proc-fd-$kind.out" ||
                        fail "GetProcFd's refusal does not say why"
                echo "ok: GetProcFd: a setuid exec during the open is refused"
        else
                [ $st = 0 ] || fail "GetProcFd of periscope-user's own exec'd program failed"
                grep >/dev/null "plain-demo" "$dir/proc-fd-$kind.out" || fail "GetProcFd did not serve the new program's maps"
                echo "ok: GetProcFd: an exec of a program that is not set-id during the open is served"
        fi
done

# ---- the drop-in: GetProcFile (the daemon's read of io held) ----
# io is made at read time, with the reader's rights checked then: the
# daemon's (root's) here, so the process is checked again after the read.
for kind in setuid plain; do
        racer_start "$TEST_TMP/$kind-demo"
        hold_open "$sysprofd_pid" read -P "/proc/$racer/io"
        as_user "$SYSPROF3_CLIENT" proc-file "/proc/$racer/io" >"$dir/proc-file-$kind.out" 2>&1 &
        client=$!
        race "$TEST_TMP/$kind-demo" read
        st=0
        wait $client || st=$?
        hold_done "$sysprofd_pid"
        kill "$racer" 2>/dev/null || true
        cat "$dir/proc-file-$kind.out"
        if [ $kind = setuid ]; then
                [ $st != 0 ] || fail "GetProcFile served the io of a setuid-root program"
                grep >/dev/null "process $racer is not yours (any more)" "$dir/proc-file-$kind.out" ||
                        fail "GetProcFile's refusal does not say why"
                echo "ok: GetProcFile: a setuid exec during the read is refused"
        else
                [ $st = 0 ] || fail "GetProcFile of periscope-user's own exec'd program failed"
                grep >/dev/null "contents: rchar:" "$dir/proc-file-$kind.out" || fail "GetProcFile did not serve io"
                echo "ok: GetProcFile: an exec of a program that is not set-id during the read is served"
        fi
done
