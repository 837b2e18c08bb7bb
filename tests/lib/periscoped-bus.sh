# SPDX-License-Identifier: LGPL-2.1-or-later
# periscoped-bus.sh: sourced by tests of the real periscoped. Starts a
# private system bus (private-bus.sh) and periscoped on it, both stopped on
# exit; a sanitizer report in the daemon's log fails the test. Needs
# PERISCOPED (the daemon to test).
#   private_bus_start            sets BUS_ADDRESS, exports DBUS_SYSTEM_BUS_ADDRESS
#   periscoped_start [ARGS…]     starts $PERISCOPED on it, sets PERISCOPED_PID
#   periscoped_start_for_user USER MODE   both, polkitd, and as_user for USER
#   pcall PATH IFACE METHOD…     busctl call on the service
#   fail, as_user, wait_for      from test-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/test-lib.sh" # fail, as_user, wait_for; set -euo pipefail
# The system interpreter: a pyenv shim in PATH costs seconds per start.
PYTHON=${PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}

: "${PERISCOPED:?PERISCOPED must name the periscoped binary to test}"
[ -x "$PERISCOPED" ] || fail "periscoped not found at $PERISCOPED"

. "$(dirname "${BASH_SOURCE[0]}")/private-bus.sh"
# folded.py for the checks' Python.
export PYTHONPATH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)${PYTHONPATH:+:$PYTHONPATH}"

TEST_TMP=$(mktemp -d /tmp/periscope-test.XXXXXX)
chmod 755 "$TEST_TMP"
_periscoped_bus_cleanup() {
        local st=$? bad=0 died=
        if [ $st != 0 ] && [ -n "${PERISCOPED_PID:-}" ] && ! kill -0 "$PERISCOPED_PID" 2>/dev/null; then
                wait "$PERISCOPED_PID" 2>/dev/null && died=0 || died=$?
                echo "periscoped (pid $PERISCOPED_PID) had ended before the test did, with status $died (128+N: signal N)" >&2
        fi
        private_bus_stop
        # A sanitizer report from the daemon fails the test.
        if grep -qE "Sanitizer|runtime error:" "$TEST_TMP"/periscoped*.log 2>/dev/null; then
                echo "FAIL: periscoped reported memory errors:" >&2
                cat "$TEST_TMP"/periscoped*.log >&2
                bad=1
        elif [ $st != 0 ]; then
                # a failed test shows how the daemon ended (CI keeps no work
                # directory): the last lines of its log, and whether it died
                for log in "$TEST_TMP"/periscoped*.log; do
                        [ -s "$log" ] || continue
                        echo "--- the last lines of $(basename "$log"):" >&2
                        tail -n 40 "$log" >&2
                done
        fi
        # PERISCOPE_TEST_KEEP=1 keeps the work directory (captures, the daemon's log) to look at
        if [ -n "${PERISCOPE_TEST_KEEP:-}" ]; then echo "kept: $TEST_TMP" >&2; else rm -rf "$TEST_TMP"; fi
        [ $bad = 0 ] || exit 1
        exit $st
}
trap _periscoped_bus_cleanup EXIT

# The private bus of private-bus.sh, its socket open to every user (tests
# call as unprivileged users too), its address in BUS_ADDRESS.
private_bus_start() {
        _private_bus_start_daemon || fail "dbus-daemon did not start"
        chmod 666 "$PRIVATE_BUS_DIR/system_bus_socket"
        BUS_ADDRESS=$DBUS_SYSTEM_BUS_ADDRESS
}

periscoped_start() {
        "$PERISCOPED" --address="$BUS_ADDRESS" "$@" 2>>"$TEST_TMP/periscoped.log" &
        PERISCOPED_PID=$!
        private_bus_track $PERISCOPED_PID
        for _ in $(seq 100); do
                busctl --address="$BUS_ADDRESS" status org.periscope.Profiler1 >/dev/null 2>&1 && return 0
                kill -0 $PERISCOPED_PID 2>/dev/null || { cat "$TEST_TMP/periscoped.log" >&2; fail "periscoped exited at start"; }
                sleep 0.05
        done
        fail "periscoped did not take its bus name"
}

_periscoped_gone() { ! kill -0 "$PERISCOPED_PID" 2>/dev/null; }

# Fails with MESSAGE unless periscoped leaves within SECONDS; its exit
# status then in PERISCOPED_STATUS.
periscoped_wait_exit() { # SECONDS MESSAGE
        wait_for "$1" _periscoped_gone || fail "$2"
        PERISCOPED_STATUS=0
        wait "$PERISCOPED_PID" || PERISCOPED_STATUS=$?
}

# Fails unless USER (made by scripts/setup.d/30-periscope-users.sh) exists;
# sets user and uid.
test_user_require() { # USER
        user=$1
        id -u "$user" >/dev/null 2>&1 || fail "user $user is missing: run scripts/setup.d/30-periscope-users.sh as root"
        uid=$(id -u "$user")
}

# For tests of what an unprivileged USER may do: the private bus, a real
# polkitd and periscoped on it; dir=$TEST_TMP/USER, owned by USER, with
# $TEST_TMP opened to MODE; as_user COMMAND… runs COMMAND as USER.
periscoped_start_for_user() { # USER MODE
        private_bus_start
        private_polkit_start || fail "polkitd did not start on the private bus"
        periscoped_start
        TEST_USER=$1
        dir=$TEST_TMP/$1
        mkdir "$dir"; chown "$1": "$dir"; chmod "$2" "$TEST_TMP"
}

# Starts $DEMO, the demo workload, for MILLISECONDS (killed at exit at the
# latest): sets work to its pid.
demo_start() { # milliseconds
        "$DEMO" -t "$1" &
        work=$!
        private_bus_track $work
}

# Records COMMAND… into CAPTURE with `periscope record` on the private
# bus (started here, with periscoped, if it is not yet); fails with
# record's output when it fails.
record_to() { # CAPTURE COMMAND…
        local cap=$1
        shift
        if [ -z "${PERISCOPED_PID:-}" ]; then
                private_bus_start
                periscoped_start
        fi
        "$PERISCOPE" record --address "$BUS_ADDRESS" -o "$cap" -- "$@" >"$TEST_TMP/record.out" 2>&1 ||
                { cat "$TEST_TMP/record.out"; fail "recording $* failed"; }
}

# Record() over D-Bus: one second of PID, frame pointers, debuginfod on;
# the capture goes to CAPTURE.
record_debuginfod() { # PID CAPTURE
        gdbus call --address "$BUS_ADDRESS" -d org.periscope.Profiler1 -o /org/periscope/Profiler1 \
                -m org.periscope.Profiler1.Record \
                "{'pids': <[$1]>, 'duration-ms': <uint32 1000>, 'unwind': <'fp'>, 'debuginfod': <true>}" 3 3>"$2" \
                >/dev/null
}

# Calls a method on the service with busctl: pcall PATH IFACE METHOD SIG ARGS…
pcall() {
        local path=$1 iface=$2; shift 2
        busctl --address="$BUS_ADDRESS" call org.periscope.Profiler1 "$path" "$iface" "$@"
}
