# private-bus.sh: sourced by service tests. Starts a private dbus-daemon (a
# "system"-type bus with an allow-all policy, EXTERNAL auth) and periscoped
# on it, both cleaned up on exit. Needs PERISCOPED (the daemon to test).
#   private_bus_start            sets BUS_ADDRESS, exports DBUS_SYSTEM_BUS_ADDRESS
#   periscoped_start [ARGS…]     starts $PERISCOPED on it, sets PERISCOPED_PID
#   fail MESSAGE                 prints and exits 1
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }
# The system interpreter: a pyenv shim in PATH costs seconds per start.
PYTHON=${PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}

: "${PERISCOPED:?PERISCOPED must name the periscoped binary to test}"
[ -x "$PERISCOPED" ] || fail "periscoped not found at $PERISCOPED"
command -v dbus-daemon >/dev/null || fail "dbus-daemon missing: apt-get install -y dbus"

TEST_TMP=$(mktemp -d /tmp/periscope-test.XXXXXX)
chmod 755 "$TEST_TMP"
_cleanup_pids=()
_private_bus_cleanup() {
        local st=$? bad=0
        for p in "${_cleanup_pids[@]}"; do kill "$p" 2>/dev/null || true; done
        for p in "${_cleanup_pids[@]}"; do wait "$p" 2>/dev/null || true; done
        # A sanitizer report from the daemon fails the test.
        if grep -qE "Sanitizer|runtime error:" "$TEST_TMP"/periscoped*.log 2>/dev/null; then
                echo "FAIL: periscoped reported memory errors:" >&2
                cat "$TEST_TMP"/periscoped*.log >&2
                bad=1
        fi
        rm -rf "$TEST_TMP"
        [ $bad = 0 ] || exit 1
        exit $st
}
trap _private_bus_cleanup EXIT

private_bus_start() {
        cat >"$TEST_TMP/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$TEST_TMP/bus.socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="method_call"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
CONF
        dbus-daemon --config-file="$TEST_TMP/bus.conf" --nofork --nopidfile --print-address=3 3>"$TEST_TMP/bus.address" &
        _cleanup_pids+=($!)
        for _ in $(seq 100); do [ -s "$TEST_TMP/bus.address" ] && break; sleep 0.05; done
        [ -s "$TEST_TMP/bus.address" ] || fail "dbus-daemon did not start"
        chmod 666 "$TEST_TMP/bus.socket"
        BUS_ADDRESS=$(head -n1 "$TEST_TMP/bus.address")
        export DBUS_SYSTEM_BUS_ADDRESS=$BUS_ADDRESS
}

periscoped_start() {
        "$PERISCOPED" --address="$BUS_ADDRESS" "$@" 2>>"$TEST_TMP/periscoped.log" &
        PERISCOPED_PID=$!
        _cleanup_pids+=($PERISCOPED_PID)
        for _ in $(seq 100); do
                busctl --address="$BUS_ADDRESS" status org.periscope.Profiler1 >/dev/null 2>&1 && return 0
                kill -0 $PERISCOPED_PID 2>/dev/null || { cat "$TEST_TMP/periscoped.log" >&2; fail "periscoped exited at start"; }
                sleep 0.05
        done
        fail "periscoped did not take its bus name"
}

# Calls a method on the service with busctl: pcall PATH IFACE METHOD SIG ARGS…
pcall() {
        local path=$1 iface=$2; shift 2
        busctl --address="$BUS_ADDRESS" call org.periscope.Profiler1 "$path" "$iface" "$@"
}
