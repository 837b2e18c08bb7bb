#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The service is stopped (systemctl stop, restart, try-restart: SIGTERM)
# while users record (issue 19). Every recording ends at once (reason
# shutdown), the post-stop stages get --stop-budget in all (10 s by
# default) and the daemon exits with status 0 within 15 s, whatever the
# recorded command does: lingering finished recordings do not hold it.
#  A: an unprivileged user records a 150 s command; --stop-budget=0, so the
#     names are cut short: `periscope record` leaves at once with status 3
#     and a message naming `periscope symbolize`, the command keeps running,
#     the capture is complete and says what is missing (`periscope info`),
#     and `periscope symbolize CAPTURE` then names >= 90% of the samples
#     from the binary on this machine, checked by build-id.
#  B: the symbolize stage waits for a debuginfod server that never answers
#     in time when SIGTERM comes: the stage is cut at the 10 s default, the
#     daemon exits 0 within 15 s, the capture is finalized and keeps the
#     stripped binary's build-id, so `periscope symbolize -d DIR` names it.
#     A Record call while it finishes is refused (it would hold the exit).
#  C: the default budget with nothing slow: the names are there at once,
#     `periscope record` still says the recording ended early (status 3).
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${DEMO:?}" "${CAPTURE_JSON:?}" "${SPIN_SOURCE:?}"
check() { "$PYTHON" "$(dirname "$0")/check-capture.py" "$CAPTURE_JSON" "$@"; }
command -v gdbus >/dev/null || fail "gdbus is missing: apt-get install -y libglib2.0-bin"
test_user_require periscope-user

wait_for_flushed_samples() { # capture
        for _ in $(seq 300); do
                check "$1" partial --min-samples 20 >/dev/null 2>&1 && return 0
                sleep 0.1
        done
        fail "no samples were flushed to $1 within 30 s"
}
# Waits up to $2 s for pid $1 (a child of this shell) to end; sets gone_after
# (seconds, 0.1 s steps) and status; fails if it still runs.
wait_ends() { # pid seconds what
        local i
        for i in $(seq $(($2 * 10))); do
                kill -0 "$1" 2>/dev/null || break
                sleep 0.1
        done
        kill -0 "$1" 2>/dev/null && fail "$3 still runs $2 s after the daemon's SIGTERM"
        gone_after=$(awk -v i="$i" 'BEGIN { printf "%.1f", i / 10 }')
        status=0
        wait "$1" || status=$?
}
# The share of the samples of process $2 in capture $1 whose stack holds
# function $3, in percent.
share_with() { # capture pid function
        "$PERISCOPE" report --folded --no-progress -p "$2" "$1" >"$1.folded" || fail "periscope report failed on $1"
        "$PYTHON" - "$1.folded" "$3" <<'PY'
import folded, sys
total = named = 0
for s in folded.stacks(sys.argv[1]):
    total += s.count
    named += s.count if sys.argv[2] in s.frames else 0
print(100 * named // total if total else 0)
PY
}
stop_daemon() { # what [command to run 1 s after SIGTERM]; sets took
        local t0
        t0=$(date +%s.%N)
        kill -TERM "$PERISCOPED_PID"
        if [ $# -gt 1 ]; then sleep 1; "${@:2}"; fi
        wait_ends "$PERISCOPED_PID" 15 "periscoped"
        took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
        awk -v t="$took" 'BEGIN { exit !(t <= 15) }' || fail "$1: periscoped took $took s to exit after SIGTERM (wanted <= 15 s)"
        [ "$status" = 0 ] || fail "$1: periscoped exited with status $status after SIGTERM (wanted 0: the unit's Result=success)"
        echo "$1: periscoped exited 0, $took s after SIGTERM"
}

# stop_during_command CASE CAPTURE ERR OWNER: once CAPTURE has samples,
# stops periscoped under `periscope record` ($cli) of OWNER's burn (found
# in $cmd), which must end with status 3 (its stderr, ERR, shown).
stop_during_command() {
        wait_for_flushed_samples "$2"
        cmd=$(pgrep -u "$4" -f "^$dir/burn -t 150000\$" || true)
        [ -n "$cmd" ] || fail "$1: the recorded command does not run"
        private_bus_track $cmd
        stop_daemon "$1"
        wait_ends $cli 5 "$1: periscope record"
        cat "$3"
        [ "$status" = 3 ] || fail "$1: periscope record exited $status after the service stopped (wanted 3)"
}

private_bus_start
private_polkit_start || fail "polkitd did not start on the private bus"
dir=$TEST_TMP/$user
mkdir "$dir"; chown "$user": "$dir"
cp "$DEMO" "$dir/burn"; chown "$user": "$dir/burn"

# --- A: a user's long command, names cut short at once ---
periscoped_start --stop-budget=0
runuser -u "$user" -- "$PERISCOPE" record --address "$BUS_ADDRESS" -o "$dir/a.syscap" -- "$dir/burn" -t 150000 \
        >/dev/null 2>"$dir/a.err" &
cli=$!
private_bus_track $cli
stop_during_command A "$dir/a.syscap" "$dir/a.err" "$user"
grep -F "periscope symbolize $dir/a.syscap" "$dir/a.err" >/dev/null ||
        fail "A: periscope record does not say how to add the missing names (periscope symbolize CAPTURE)"
grep -F "ended early" "$dir/a.err" >/dev/null || fail "A: periscope record does not say the recording ended early"
kill -0 "$cmd" 2>/dev/null || fail "A: the recorded command did not survive the service's stop"
grep -F "is still running" "$dir/a.err" >/dev/null || fail "A: periscope record does not say the command runs on"
kill "$cmd"
check "$dir/a.syscap" readable --min-samples 20 --reason shutdown
"$PERISCOPE" info "$dir/a.syscap" >"$dir/a.info" || fail "A: periscope info failed"
grep -E "^Names missing: cut short by shutdown" "$dir/a.info" ||
        { cat "$dir/a.info"; fail "A: periscope info does not say the names are missing"; }
before=$(share_with "$dir/a.syscap" "$cmd" run_workload)
[ "$before" -lt 10 ] || fail "A: $before% of the samples are named although the names were cut short"
runuser -u "$user" -- "$PERISCOPE" symbolize "$dir/a.syscap" >"$dir/a.sym" 2>&1 ||
        { cat "$dir/a.sym"; fail "A: periscope symbolize failed on the cut-short capture"; }
cat "$dir/a.sym"
after=$(share_with "$dir/a.syscap" "$cmd" run_workload)
[ "$after" -ge 90 ] || { head -5 "$dir/a.syscap.folded"; fail "A: after periscope symbolize only $after% of the samples are named (wanted >= 90%)"; }
a_after=$after
echo "A: $before% of the samples named in the cut-short capture, $after% after periscope symbolize"

# --- B: SIGTERM while the symbolize stage waits for a stalled debuginfod ---
w=$TEST_TMP/spin
gcc -O2 -g -fno-omit-frame-pointer -Wl,--build-id=0x$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n') \
        -o "$w" "$SPIN_SOURCE" || fail "cannot build the workload"
build_id=$(build_id_of "$w")
mkdir -p "$TEST_TMP/debug/.build-id/${build_id:0:2}"
objcopy --only-keep-debug "$w" "$TEST_TMP/debug/.build-id/${build_id:0:2}/${build_id:2}.debug"
strip --strip-all "$w"
port=$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$PYTHON" - "$port" >"$TEST_TMP/server.log" 2>&1 <<'PY' &
import http.server, sys, time
class Stalled(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        print("GET", self.path, flush=True)
        time.sleep(120)
        self.send_error(404)
    do_HEAD = do_GET
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Stalled).serve_forever()
PY
private_bus_track $!
DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$TEST_TMP/cache periscoped_start
"$w" 60000 & spin=$!
private_bus_track $spin
record_debuginfod $spin "$TEST_TMP/b.syscap" || fail "B: Record refused the debuginfod option"
wait_for 30 grep -q "^GET /buildid/$build_id" "$TEST_TMP/server.log" ||
        fail "B: the symbolize stage did not ask the debuginfod server"
# while it finishes, a new recording is refused: it would hold the exit
refused_while_stopping() {
        if gdbus call --address "$BUS_ADDRESS" -d org.periscope.Profiler1 -o /org/periscope/Profiler1 \
                -m org.periscope.Profiler1.Record "{'pids': <[$spin]>}" 3 3>"$TEST_TMP/late.syscap" \
                >/dev/null 2>"$TEST_TMP/late.err"; then
                fail "B: a Record call during the stop was accepted"
        fi
        grep -F "periscoped is stopping" "$TEST_TMP/late.err" >/dev/null ||
                { cat "$TEST_TMP/late.err"; fail "B: a Record call during the stop was refused without saying why"; }
}
stop_daemon B refused_while_stopping
awk -v t="$took" 'BEGIN { exit !(t >= 9) }' || fail "B: periscoped left after $took s: the stage was not given its 10 s"
kill $spin
check "$TEST_TMP/b.syscap" readable --min-samples 5 --reason duration
"$PERISCOPE" info "$TEST_TMP/b.syscap" >"$TEST_TMP/b.info" || fail "B: periscope info failed"
grep -E "^Names missing: cut short by shutdown" "$TEST_TMP/b.info" ||
        { cat "$TEST_TMP/b.info"; fail "B: periscope info does not say the names are missing"; }
"$PERISCOPE" symbolize -d "$TEST_TMP/debug" "$TEST_TMP/b.syscap" >"$TEST_TMP/b.sym" 2>&1 ||
        { cat "$TEST_TMP/b.sym"; fail "B: periscope symbolize failed on the cut-short capture"; }
cat "$TEST_TMP/b.sym"
after=$(share_with "$TEST_TMP/b.syscap" "$spin" spin_function)
[ "$after" -ge 90 ] || fail "B: after periscope symbolize only $after% of the samples are named (wanted >= 90%)"
echo "B: cut at the budget; $after% of the samples named after periscope symbolize -d"

# --- C: the default budget, nothing slow: the names are in at once ---
periscoped_start
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$TEST_TMP/c.syscap" -- "$dir/burn" -t 150000 >/dev/null 2>"$TEST_TMP/c.err" &
cli=$!
private_bus_track $cli
stop_during_command C "$TEST_TMP/c.syscap" "$TEST_TMP/c.err" root
kill -0 "$cmd" 2>/dev/null || fail "C: the recorded command did not survive the service's stop"
kill "$cmd"
check "$TEST_TMP/c.syscap" readable --min-samples 20 --reason shutdown
named=$(share_with "$TEST_TMP/c.syscap" "$cmd" run_workload)
[ "$named" -ge 90 ] || fail "C: only $named% of the samples are named (the stages had their budget)"
echo "ok: stops during recordings are clean (A: ${before}% -> ${a_after}% named after periscope symbolize; B: cut at the budget; C: ${named}% named; periscoped exited 0 each time)"
