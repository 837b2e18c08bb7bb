# SPDX-License-Identifier: LGPL-2.1-or-later
# debuginfod-server.sh (sourced by helper tests, after
# tests/lib/periscoped-bus.sh): a real debuginfod on 127.0.0.1.
#   debuginfod_start DIR   serves the debug files in DIR, waits until it has
#                          scanned one, sets DEBUGINFOD_URL; stopped on exit
debuginfod_start() {
        local dir=$1 port n=0
        command -v debuginfod >/dev/null || fail "debuginfod is missing: apt-get install -y debuginfod"
        port=$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        debuginfod -F -p "$port" -d "$TEST_TMP/debuginfod.sqlite" -t 1 "$dir" >"$TEST_TMP/debuginfod.log" 2>&1 &
        private_bus_track $!
        for _ in $(seq 200); do
                n=$( (curl -s "http://127.0.0.1:$port/metrics" 2>/dev/null || true) |
                        awk '/^scanned_files_total/ {s += $NF} END {print s + 0}')
                [ "${n:-0}" -ge 1 ] 2>/dev/null && break
                sleep 0.1
        done
        [ "${n:-0}" -ge 1 ] 2>/dev/null || fail "debuginfod did not scan $dir"
        DEBUGINFOD_URL=http://127.0.0.1:$port
}
