# SPDX-License-Identifier: LGPL-2.1-or-later
# lib.sh: sourced by the service-sysprof3-* tests: a private system bus
# (tests/lib/private-bus.sh, its socket open to every user), polkitd on it,
# and periscoped --sysprofd owning org.gnome.Sysprof3 there, checked to be
# the name's owner: no sysprofd anywhere on that bus (it has no activation
# directory, so nothing else can be started for the name).
set -uo pipefail
# With pipefail, `producer | grep -q` fails when grep -q leaves at its first
# match and the producer, still writing, dies of SIGPIPE (CI saw it with
# `echo "$text" | grep -q`): the tests read a pipe to its end with
# `| grep >/dev/null PATTERN`.
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
. "$src/tests/lib/private-bus.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../../lib/test-lib.sh" # fail, as_user, wait_for
set +e # this test checks exit statuses itself
: "${PERISCOPED:?}" "${SYSPROF3_CLIENT:?}"
[ "$(id -u)" = 0 ] || fail "must run as root (periscoped opens perf events for others)"
# a failed test shows the end of the daemon's log (the bus directory goes)
_sysprof3_cleanup() {
        local st=$?
        if [ $st != 0 ] && [ -n "${PRIVATE_BUS_DIR:-}" ] && [ -s "$PRIVATE_BUS_DIR/periscoped.log" ]; then
                echo "--- the last lines of periscoped's log:" >&2
                tail -n 40 "$PRIVATE_BUS_DIR/periscoped.log" >&2
        fi
        private_bus_stop
        exit $st
}
trap _sysprof3_cleanup EXIT

# sysprof3_start [ARGS...]: the bus, polkitd and periscoped --sysprofd ARGS
# (debug log in $PRIVATE_BUS_DIR/periscoped.log); sets PERISCOPED_PID and
# OUT (a directory every user may write).
sysprof3_start() {
        private_bus_start || fail "no private bus"
        chmod 666 "$PRIVATE_BUS_DIR/system_bus_socket"
        private_polkit_start || fail "no polkitd"
        _sysprof3_daemon_start "$@"
        local owner
        owner=$(busctl --system call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus \
                GetConnectionUnixProcessID s org.gnome.Sysprof3 | awk '{print $2}')
        [ "$owner" = "$PERISCOPED_PID" ] || fail "org.gnome.Sysprof3 is owned by pid $owner, not periscoped ($PERISCOPED_PID)"
        OUT=$PRIVATE_BUS_DIR/out
        mkdir -p "$OUT" && chmod 777 "$OUT"
}

_sysprof3_daemon_start() {
        PERISCOPE_DEBUG=1 "$PERISCOPED" --system --sysprofd "$@" 2>>"$PRIVATE_BUS_DIR/periscoped.log" &
        PERISCOPED_PID=$!
        private_bus_track $PERISCOPED_PID
        private_bus_wait_name org.gnome.Sysprof3 10 $PERISCOPED_PID || { cat "$PRIVATE_BUS_DIR/periscoped.log"; fail "periscoped --sysprofd did not take org.gnome.Sysprof3"; }
}

# sysprof3_restart [ARGS...]: periscoped --sysprofd again, with ARGS, on
# the same bus (its log goes on in the same file).
sysprof3_restart() {
        kill $PERISCOPED_PID
        wait $PERISCOPED_PID 2>/dev/null
        for _ in $(seq 50); do
                private_bus_has_name org.gnome.Sysprof3 || break
                sleep 0.1
        done
        _sysprof3_daemon_start "$@"
}

# sysprof3_check_log: no sanitizer report from the daemon.
sysprof3_check_log() {
        if grep -qE "Sanitizer|runtime error:" "$PRIVATE_BUS_DIR/periscoped.log"; then
                cat "$PRIVATE_BUS_DIR/periscoped.log"
                fail "periscoped reported memory errors"
        fi
}
