#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A debuginfod server that takes 2 s to answer does not stall the service
# (issue 12): the symbolize stage waits for the fetcher from the event loop
# (on its fiber), so while a recording with the 'debuginfod' option
# finishes, a probe's Properties.Get of the Profiler's Version stays under
# 100 ms, and the debug file the slow server sent still names the stripped
# workload's functions.
# In a session of its own: availability.sh raises its CPU share.
[ "$(ps -o sid= -p $$ | tr -d ' ')" = $$ ] || exec setsid -w "$0" "$@"
. "$(dirname "$0")/../lib/periscoped-bus.sh"
. "$(dirname "$0")/availability.sh"
: "${PERISCOPE:?}" "${PROBE:?}" "${SPIN_SOURCE:?}"
command -v gdbus >/dev/null || fail "gdbus is missing: apt-get install -y libglib2.0-bin"

w=$TEST_TMP/spin
# a build-id of its own: root's fetcher cache (/var/cache/periscope) keeps
# what earlier runs fetched
gcc -O2 -g -fno-omit-frame-pointer -Wl,--build-id=0x$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n') \
        -o "$w" "$SPIN_SOURCE" || fail "cannot build the workload"
mkdir "$TEST_TMP/served"
build_id=$(build_id_of "$w")
objcopy --only-keep-debug "$w" "$TEST_TMP/served/$build_id.debug"
strip --strip-all "$w"

# debuginfod's protocol (GET /buildid/ID/debuginfo), 2 s late on every answer
port=$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$PYTHON" - "$TEST_TMP/served" "$port" >"$TEST_TMP/server.log" 2>&1 <<'PY' &
import http.server, os, sys, time
served, port = sys.argv[1], int(sys.argv[2])
class Slow(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        time.sleep(2)
        parts = self.path.strip("/").split("/")
        path = os.path.join(served, parts[1] + ".debug") if len(parts) == 3 and parts[0] == "buildid" else None
        if parts[-1] != "debuginfo" or not path or not os.path.exists(path):
            self.send_error(404)
            return
        data = open(path, "rb").read()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    do_HEAD = do_GET
http.server.ThreadingHTTPServer(("127.0.0.1", port), Slow).serve_forever()
PY
private_bus_track $!
export DEBUGINFOD_URLS=http://127.0.0.1:$port
export DEBUGINFOD_CACHE_PATH=$TEST_TMP/cache
availability_start

"$w" 4000 & pid=$!
private_bus_track $pid
nice -n -10 "$PROBE" --profiler "$BUS_ADDRESS" "$TEST_TMP/stop" 120 >"$TEST_TMP/latency" 2>"$TEST_TMP/latency.err" &
probe=$!
private_bus_track $probe
record_debuginfod $pid "$TEST_TMP/on.syscap" || fail "Record refused the debuginfod option"
wait_for 60 grep -q "finished (duration)" "$TEST_TMP/periscoped.log" || true
touch "$TEST_TMP/stop"
kill $pid 2>/dev/null || true
grep -q "finished (duration)" "$TEST_TMP/periscoped.log" || fail "the recording did not finish"
wait $probe || { cat "$TEST_TMP/latency" "$TEST_TMP/latency.err"; fail "the probe failed"; }
cat "$TEST_TMP/latency.err"
grep -E "GET /buildid" "$TEST_TMP/server.log" || fail "the slow server was not asked"
read -r _ gets _ max_ms _ slow_gets <"$TEST_TMP/latency"
echo "Properties.Get of the Profiler's Version: $gets calls, slowest $max_ms ms, $slow_gets over 50 ms"

"$PERISCOPE" report --no-progress "$TEST_TMP/on.syscap" >"$TEST_TMP/on.txt" 2>&1 || { cat "$TEST_TMP/on.txt"; fail "report failed"; }
head -20 "$TEST_TMP/on.txt"
grep -q "spin_function" "$TEST_TMP/on.txt" || fail "the debug file the slow server sent did not name spin_function"
get_within_100ms "$max_ms" "while the fetcher waited for the slow server"
echo "ok: a slow debuginfod server's 2 s did not stall the service"
