#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Per-user budgets of perf events and followed threads (docs/security.md,
# issue 27). The review's storm: periscope-user runs a 3000-thread program
# and starts four `record --off-cpu -p` of it at once (3000 threads x CPUs
# x 3 events each took the daemon to 18,025 fds and killed its perf
# opener). Now:
#  A: each of the four is refused with LimitExceeded naming the budget of
#     followed threads and its option, the daemon's fds stay far below the
#     budget, and periscope-admin's `periscope record -- demo` started
#     meanwhile completes with named stacks;
#  B: a few hundred threads fit the defaults (--off-cpu, all followed; the
#     capture's statistics say how many threads and events);
#  C: under --max-perf-events-per-user smaller than those threads' events
#     the same recording is refused naming the perf event budget, while a
#     command (one thread) still records.
#  D: a recording that grows past a budget: under --max-threads-per-user=1
#     periscope-admin (polkit) records root's shell, which execs a program
#     gaining capabilities (the kernel removes its events; the recording
#     would open them again): it is not followed, the daemon warns once,
#     the capture says not_followed=1, and the recording ends normally.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${DEMO:?}" "${CAPTURE_JSON:?}" "${MANY_THREADS:?}" "${EXEC_GAINS_CAPS:?}"
check() { "$PYTHON" "$(dirname "$0")/check-capture.py" "$CAPTURE_JSON" "$@"; }
stat_of() { # CAPTURE KEY: a value of its periscope.stats
        "$CAPTURE_JSON" "$1" | "$PYTHON" -c '
import json, sys
for line in sys.stdin:
    f = json.loads(line)
    if f["type"] == "METADATA" and f["id"] == "periscope.stats":
        print(dict(l.split("=", 1) for l in f["metadata"].splitlines() if "=" in l).get(sys.argv[1], "?"))' "$2"
}
test_user_require periscope-admin
test_user_require periscope-user
periscoped_start_for_user periscope-user 777
threads_of() { awk '/^Threads:/ { print $2 }' /proc/"$1"/status; }
start_threads() { # N: a process of periscope-user's with N idle threads; sets pid
        setpriv --reuid=$user --regid=$user --clear-groups "$MANY_THREADS" "$1" >"$TEST_TMP/threads-$1.out" &
        pid=$!
        private_bus_track $pid
        wait_for 60 grep -q ready "$TEST_TMP/threads-$1.out" || fail "$MANY_THREADS $1 did not start its threads"
}
fds_of_daemon() { ls /proc/"$PERISCOPED_PID"/fd | wc -l; }

# A. The storm beside a second user.
start_threads 3000
storm=$pid
echo "storm: pid $storm with $(threads_of $storm) threads; daemon holds $(fds_of_daemon) fds"
(
        max=0
        while kill -0 "$PERISCOPED_PID" 2>/dev/null && [ ! -e "$TEST_TMP/storm-done" ]; do
                n=$(fds_of_daemon 2>/dev/null || echo 0)
                [ "$n" -le "$max" ] || { max=$n; echo $max >"$TEST_TMP/max-fds"; }
                sleep 0.05
        done
) &
sampler=$!
recs=()
for i in 1 2 3 4; do
        as_user "$PERISCOPE" record --address "$BUS_ADDRESS" --off-cpu -p $storm --duration 5 \
                -o "$dir/storm$i.syscap" >"$dir/storm$i.out" 2>&1 &
        recs+=($!)
done
runuser -u periscope-admin -- "$PERISCOPE" record --address "$BUS_ADDRESS" -o "$TEST_TMP/admin.syscap" \
        -- "$DEMO" -t 1500 >"$TEST_TMP/admin.out" 2>&1 ||
        { cat "$TEST_TMP/admin.out"; fail "periscope-admin's recording failed during periscope-user's storm"; }
for i in 1 2 3 4; do
        st=0
        wait "${recs[i - 1]}" || st=$?
        [ $st != 0 ] || { cat "$dir/storm$i.out"; fail "recording $i of the 3000-thread process was not refused"; }
        grep >/dev/null "process $storm: per-user limit reached: uid $uid holds 0 followed threads (this needs 3001 more); the limit is 1024 followed threads per user (periscoped --max-threads-per-user); record fewer threads" "$dir/storm$i.out" ||
                { cat "$dir/storm$i.out"; fail "refusal $i does not name the budget of followed threads"; }
done
touch "$TEST_TMP/storm-done"
wait $sampler || true
cat "$dir/storm1.out"
max_fds=$(cat "$TEST_TMP/max-fds" 2>/dev/null || echo 0)
echo "daemon's fds at most $max_fds during the storm"
[ "$max_fds" -lt 2000 ] || fail "the daemon held $max_fds fds during refused recordings"
check "$TEST_TMP/admin.syscap" callchains "$DEMO" || fail "periscope-admin's capture lacks named stacks"
# the error's name, as a D-Bus client sees it
as_user gdbus call --address "$BUS_ADDRESS" -d org.periscope.Profiler1 -o /org/periscope/Profiler1 \
        -m org.periscope.Profiler1.Record "{'pids': <[$storm]>, 'off-cpu': <true>, 'duration-ms': <uint32 500>}" \
        3 3>"$dir/gdbus.syscap" >"$dir/gdbus.out" 2>&1 && fail "Record of the 3000-thread process succeeded"
grep >/dev/null "org.periscope.Error.LimitExceeded: process $storm: per-user limit reached" "$dir/gdbus.out" ||
        { cat "$dir/gdbus.out"; fail "the refusal is not org.periscope.Error.LimitExceeded"; }
kill $storm
echo "ok: four storms refused with LimitExceeded naming the thread budget; a second user recorded meanwhile"

# B. A few hundred threads fit the defaults.
start_threads 400
as_user "$PERISCOPE" record --address "$BUS_ADDRESS" --off-cpu -p $pid --duration 1 -o "$dir/400.syscap" \
        >"$dir/400.out" 2>&1 || { cat "$dir/400.out"; fail "an off-CPU recording of 400 threads failed"; }
threads=$(stat_of "$dir/400.syscap" followed_threads)
events=$(stat_of "$dir/400.syscap" perf_events)
echo "400 threads: followed_threads=$threads perf_events=$events"
[ "$threads" = 401 ] || fail "the capture says $threads followed threads (401 expected)"
[ "$events" = $((401 * 3 * $(nproc --all))) ] || fail "the capture says $events perf events (401 x 3 x CPUs expected)"
echo "ok: an off-CPU recording of 401 threads fits the defaults"

# C. A small event budget.
kill -TERM "$PERISCOPED_PID"
periscoped_wait_exit 20 "periscoped did not stop"
periscoped_start --max-perf-events-per-user=1000
st=0
as_user "$PERISCOPE" record --address "$BUS_ADDRESS" --off-cpu -p $pid --duration 1 -o "$dir/small.syscap" \
        >"$dir/small.out" 2>&1 || st=$?
cat "$dir/small.out"
[ $st != 0 ] || fail "401 threads' events fit a budget of 1000 events"
grep >/dev/null "process $pid: per-user limit reached: uid $uid holds 0 perf events (this needs $((401 * 3 * $(nproc --all))) more); the limit is 1000 perf events per user (periscoped --max-perf-events-per-user); record fewer threads, or without --off-cpu" "$dir/small.out" ||
        fail "the refusal does not name the perf event budget"
as_user "$PERISCOPE" record --address "$BUS_ADDRESS" -o "$dir/cmd.syscap" -- "$DEMO" -t 800 >"$dir/cmd.out" 2>&1 ||
        { cat "$dir/cmd.out"; fail "a command's recording failed under a budget of 1000 events"; }
echo "ok: a small perf event budget refuses 401 threads' events, naming it, and a command records"
kill $pid

# D. Past the budget during a recording.
kill -TERM "$PERISCOPED_PID"
periscoped_wait_exit 20 "periscoped did not stop"
periscoped_start --max-threads-per-user=1
# (the program outlives --duration whatever the load: it ends by duration)
mkfifo "$TEST_TMP/go"
log_lines=$(wc -l <"$TEST_TMP/periscoped.log")
sh -c 'read -r _ <"$0"; exec "$1" "$2" -t 6000' "$TEST_TMP/go" "$EXEC_GAINS_CAPS" "$DEMO" & shell=$!
private_bus_track $shell
runuser -u periscope-admin -- "$PERISCOPE" record --address "$BUS_ADDRESS" -p $shell --duration 4 \
        -o "$TEST_TMP/grow.syscap" >"$TEST_TMP/grow.out" 2>&1 & rec=$!
wait_for 30 eval 'tail -n +$((log_lines + 1)) "$TEST_TMP/periscoped.log" | grep >/dev/null "started for uid $(id -u periscope-admin)"' ||
        { cat "$TEST_TMP/grow.out"; fail "periscope-admin's recording of the shell did not start"; }
echo go >"$TEST_TMP/go"
wait $rec || { cat "$TEST_TMP/grow.out"; fail "the recording that grew past the thread budget failed"; }
tail -n +$((log_lines + 1)) "$TEST_TMP/periscoped.log" | grep >/dev/null "process (exec'd a program with other privileges) $shell: not followed, nor any new thread or process from now on: per-user limit reached: uid $(id -u periscope-admin) holds 1 followed threads (this needs 1 more); the limit is 1 followed threads per user" ||
        fail "periscoped did not warn that the process is not followed past the thread budget"
[ "$(stat_of "$TEST_TMP/grow.syscap" not_followed)" = 1 ] || fail "the capture does not count the process not followed"
check "$TEST_TMP/grow.syscap" readable --min-samples 0 --reason duration || fail "the capture is not finalized"
echo "ok: past the thread budget during a recording, the process is not followed, warned and counted"
echo PASS
