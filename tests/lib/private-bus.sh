# SPDX-License-Identifier: LGPL-2.1-or-later
# private-bus.sh: a private D-Bus "system" bus with polkitd (and whatever
# services a test adds) for tests that need the system bus without touching
# the machine's. Source it from bash:
#
#   . "$src/tests/lib/private-bus.sh"
#   trap 'private_bus_stop' EXIT                    # always: kills what was started
#   private_bus_start || exit 1                     # exports DBUS_SYSTEM_BUS_ADDRESS
#   private_polkit_start || exit 1                  # polkitd on that bus
#   /usr/libexec/sysprofd & private_bus_track $!
#   private_bus_wait_name org.gnome.Sysprof3 10 $! || exit 1
#
# The bus socket and the logs (dbus-daemon.log, polkitd.log) live in
# $PRIVATE_BUS_DIR, a fresh world-traversable directory under /tmp (polkitd
# drops to its own user and must reach the socket), removed by private_bus_stop.
# Every process started here (and every pid handed to private_bus_track) is
# killed by pid — never by name — in reverse order by private_bus_stop, which
# is idempotent. Functions print a reason and return non-zero on failure.
# polkitd needs a rule for the actions the test uses in /etc/polkit-1/rules.d/
# (see scripts/setup.d/*polkit*.sh); the machine's polkitd, if any, is left alone.

PRIVATE_BUS_PIDS=()
PRIVATE_BUS_DIR=
# sysprofd lowers kernel.perf_event_paranoid while it records and does not
# put it back when it is killed: private_bus_stop restores what it found.
PRIVATE_BUS_SAVED_PARANOID=
PRIVATE_BUS_SAVED_KPTR=

# private_bus_wait_output FILE REGEX PID SECONDS: until a line of FILE (what
# PID writes) matches REGEX; prints FILE and returns 1 if PID exits first or
# SECONDS pass.
private_bus_wait_output() {
        local deadline=$((SECONDS + $4))
        until grep -q "$2" "$1" 2>/dev/null; do
                if ! kill -0 "$3" 2>/dev/null || [ $SECONDS -gt $deadline ]; then
                        cat "$1"
                        echo "private-bus: no line '$2' from pid $3 in $1"
                        return 1
                fi
                sleep 0.1
        done
}

# private_bus_track PID…: kill these pids in private_bus_stop.
private_bus_track() {
        PRIVATE_BUS_PIDS+=("$@")
}

# private_bus_start: starts dbus-daemon (type "system", allow-all policy,
# EXTERNAL auth) listening on $PRIVATE_BUS_DIR/system_bus_socket and exports
# DBUS_SYSTEM_BUS_ADDRESS for everything started afterwards.
private_bus_start() {
        _private_bus_start_daemon
}

# The body of private_bus_start, under a second name so that
# periscoped-bus.sh can wrap private_bus_start.
_private_bus_start_daemon() {
        command -v dbus-daemon >/dev/null || { echo "private-bus: dbus-daemon is missing (apt-get install -y dbus)"; return 1; }
        local dir
        PRIVATE_BUS_SAVED_PARANOID=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)
        PRIVATE_BUS_SAVED_KPTR=$(cat /proc/sys/kernel/kptr_restrict 2>/dev/null)
        dir=$(mktemp -d /tmp/periscope-bus.XXXXXX) || return 1
        chmod 0755 "$dir" || return 1
        PRIVATE_BUS_DIR=$dir
        private_bus_config "unix:path=$dir/system_bus_socket" >"$dir/system.conf"
        dbus-daemon --config-file="$dir/system.conf" --nofork --nopidfile --print-address=3 \
                3>"$dir/address" >"$dir/dbus-daemon.log" 2>&1 &
        private_bus_track $!
        local i
        for i in $(seq 100); do
                [ -s "$dir/address" ] && break
                kill -0 "${PRIVATE_BUS_PIDS[-1]}" 2>/dev/null || break
                sleep 0.05
        done
        if [ ! -s "$dir/address" ]; then
                echo "private-bus: dbus-daemon did not start:"; cat "$dir/dbus-daemon.log"
                return 1
        fi
        export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$dir/system_bus_socket"
        return 0
}

# private_bus_config ADDRESS: prints the configuration of a "system" bus
# listening on ADDRESS with an allow-all policy and EXTERNAL auth (what
# private_bus_start runs; make-sysprof48-fixture.sh's bus in its root too).
private_bus_config() {
        cat <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>$1</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_type="method_return"/>
    <allow send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="signal"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
  </policy>
</busconfig>
EOF
}

# private_bus_has_name NAME: true if NAME has an owner on the private bus.
private_bus_has_name() {
        dbus-send --system --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
                org.freedesktop.DBus.NameHasOwner "string:$1" 2>/dev/null | grep >/dev/null true
}

# private_bus_wait_name NAME [SECONDS [PID]]: waits until NAME is owned
# (default 10 s); gives up early if PID (the service that should own it) exits.
private_bus_wait_name() {
        local name=$1 secs=${2:-10} pid=${3:-}
        local deadline=$((SECONDS + secs))
        while [ $SECONDS -le $deadline ]; do
                private_bus_has_name "$name" && return 0
                if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
                        echo "private-bus: the process that should own $name (pid $pid) exited"
                        return 1
                fi
                sleep 0.1
        done
        echo "private-bus: $name did not appear on the private bus within ${secs}s"
        return 1
}

# private_periscoped_start: starts $PERISCOPED --system on the private bus
# (its stderr in $PRIVATE_BUS_DIR/periscoped.log) and waits for its name.
private_periscoped_start() {
        "$PERISCOPED" --system 2>"$PRIVATE_BUS_DIR/periscoped.log" &
        private_bus_track $!
        private_bus_wait_name org.periscope.Profiler1 10 $!
}

# private_sysprofd_start LOGDIR: Sysprof's sysprofd and polkitd on the
# private bus (sysprofd.log in LOGDIR), for tests that record with Debian's
# sysprof-cli; checks its prerequisites first.
private_sysprofd_start() {
        [ "$(id -u)" = 0 ] || { echo "private-bus: must run as root (sysprofd opens perf events)"; return 1; }
        command -v sysprof-cli >/dev/null || { echo "private-bus: sysprof-cli is missing (apt-get install -y sysprof)"; return 1; }
        [ -x /usr/libexec/sysprofd ] || { echo "private-bus: /usr/libexec/sysprofd is missing (apt-get install -y sysprof)"; return 1; }
        grep -qs 'org.gnome.sysprof' /etc/polkit-1/rules.d/*.rules ||
                { echo "private-bus: no polkit rule lets root use sysprofd: run scripts/setup.d/20-polkit-sysprof.sh as root"; return 1; }
        private_bus_start || { echo "private-bus: the private system bus did not start"; return 1; }
        private_polkit_start || { echo "private-bus: polkitd did not start on the private bus"; return 1; }
        /usr/libexec/sysprofd >"$1/sysprofd.log" 2>&1 &
        private_bus_track $!
        private_bus_wait_name org.gnome.Sysprof3 10 $! || { cat "$1/sysprofd.log"; echo "private-bus: sysprofd did not start"; return 1; }
}

# private_polkit_start: starts polkitd on the private bus and waits for
# org.freedesktop.PolicyKit1.
private_polkit_start() {
        local polkitd
        for polkitd in /usr/lib/polkit-1/polkitd /usr/libexec/polkitd ""; do
                [ -x "$polkitd" ] && break
        done
        [ -n "$polkitd" ] || { echo "private-bus: polkitd is missing (apt-get install -y polkitd)"; return 1; }
        [ -n "${DBUS_SYSTEM_BUS_ADDRESS:-}" ] && [ -n "$PRIVATE_BUS_DIR" ] ||
                { echo "private-bus: call private_bus_start first"; return 1; }
        "$polkitd" >"$PRIVATE_BUS_DIR/polkitd.log" 2>&1 &
        private_bus_track $!
        if ! private_bus_wait_name org.freedesktop.PolicyKit1 15 $!; then
                cat "$PRIVATE_BUS_DIR/polkitd.log"
                return 1
        fi
}

# private_bus_stop: kills every tracked pid (newest first: services, polkitd,
# then the bus), waits up to 10 s for each, then SIGKILLs what is left.
private_bus_stop() {
        local i pid
        for ((i = ${#PRIVATE_BUS_PIDS[@]} - 1; i >= 0; i--)); do
                pid=${PRIVATE_BUS_PIDS[$i]}
                kill -TERM "$pid" 2>/dev/null || continue
                local n
                for n in $(seq 200); do # 10 s: a sanitized daemon writes its report first
                        kill -0 "$pid" 2>/dev/null || break
                        sleep 0.05
                done
                kill -KILL "$pid" 2>/dev/null || true
                wait "$pid" 2>/dev/null || true
        done
        PRIVATE_BUS_PIDS=()
        if [ -n "$PRIVATE_BUS_DIR" ] && [ -d "$PRIVATE_BUS_DIR" ]; then
                rm -rf "$PRIVATE_BUS_DIR"
        fi
        PRIVATE_BUS_DIR=
        if [ -n "$PRIVATE_BUS_SAVED_PARANOID" ]; then
                echo "$PRIVATE_BUS_SAVED_PARANOID" >/proc/sys/kernel/perf_event_paranoid 2>/dev/null || true
                echo "$PRIVATE_BUS_SAVED_KPTR" >/proc/sys/kernel/kptr_restrict 2>/dev/null || true
        fi
        PRIVATE_BUS_SAVED_PARANOID=
        return 0
}
