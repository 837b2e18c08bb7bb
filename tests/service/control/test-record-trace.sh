#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Sysprof's trace fd through the real periscoped:
#  - `periscope record --private -- trace-writer env|fd`: the program writes
#    a capture with Debian's libsysprof-capture-4 writer to SYSPROF_TRACE_FD;
#    its marks, logs and counter values are in the recording's capture at the
#    times and with the pid it wrote, Sysprof's reader reads the result, the
#    summary counts the merged frames;
#  - SYSPROF_TRACE_FD, GJS_TRACE_FD and GTK_TRACE_FD name one fd; none with
#    --no-trace-fd;
#  - a program that writes garbage: the recording succeeds with its samples
#    and good frames; the refused ones are counted and explained;
#  - Recording1.OpenTraceFd on the private bus (an IDE's way), refused to
#    another user.
# Needs PERISCOPED, PERISCOPE, WRITER (trace-writer), CHECK (trace-check),
# CLIENT (trace-fd-client).
. "$(dirname "$0")/../../lib/periscoped-bus.sh"
. "$(dirname "$0")/control-checks.sh"
: "${PERISCOPE:?}" "${WRITER:?}" "${CHECK:?}" "${CLIENT:?}"
TRACE_CHECK=$CHECK
user=periscope-user
id -u $user >/dev/null 2>&1 || fail "user $user is missing: run scripts/setup.d/30-periscope-users.sh as root"

# A private periscoped per recording (no bus at all).
record_private() { # NAME ARGS…
        local name=$1; shift
        DBUS_SYSTEM_BUS_ADDRESS=unix:path=$TEST_TMP/no-such-bus "$PERISCOPE" record --private -o "$TEST_TMP/$name.syscap" \
                "$@" >"$TEST_TMP/$name.out" 2>"$TEST_TMP/$name.err" || { cat "$TEST_TMP/$name.err" >&2; fail "record $name exited $?"; }
        cat "$TEST_TMP/$name.err"
        ! grep -qE "Sanitizer|runtime error:" "$TEST_TMP/$name.err" || fail "the private periscoped reported memory errors"
}

# 1. Sysprof's writer from the environment and from the fd.
for mode in env fd; do
        record_private $mode -- "$WRITER" $mode
        trace_check_writer $mode "$TEST_TMP/$mode.syscap" "$TEST_TMP/$mode.out" "$TEST_TMP/$mode.err"
done
trace_check_env_report "$TEST_TMP/env.syscap" "$TEST_TMP/env.out" "$TEST_TMP"

# 2. The three variables name one inherited fd; --no-trace-fd sets none.
record_private vars -- sh -c 'echo "$SYSPROF_TRACE_FD $GJS_TRACE_FD $GTK_TRACE_FD"; readlink /proc/self/fd/$SYSPROF_TRACE_FD'
read -r a b c <"$TEST_TMP/vars.out"
[ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" = "$c" ] || fail "trace fd variables: '$a' '$b' '$c'"
grep -q "^/memfd:periscope-trace" "$TEST_TMP/vars.out" || fail "SYSPROF_TRACE_FD is not an inherited memfd: $(cat "$TEST_TMP/vars.out")"
record_private novars --no-trace-fd -- sh -c 'echo "${SYSPROF_TRACE_FD-unset}${GJS_TRACE_FD-}${GTK_TRACE_FD-}"'
[ "$(cat "$TEST_TMP/novars.out")" = unset ] || fail "--no-trace-fd still set: $(cat "$TEST_TMP/novars.out")"
echo "ok: SYSPROF_TRACE_FD = GJS_TRACE_FD = GTK_TRACE_FD, a memfd; none with --no-trace-fd"

# 3. Garbage costs only the program's own bad frames.
record_private garbage -- "$WRITER" garbage
trace_check_writer garbage "$TEST_TMP/garbage.syscap" "$TEST_TMP/garbage.out" "$TEST_TMP/garbage.err"

# 4. Recording1.OpenTraceFd on a bus, as an IDE uses it.
private_bus_start
periscoped_start
# another user may not open a trace fd on root's recording
probe='busctl --address="$BUS" call org.periscope.Profiler1 "$PERISCOPE_RECORDING" org.periscope.Recording1 OpenTraceFd'
"$CLIENT" "$BUS_ADDRESS" "$TEST_TMP/bus.syscap" sh -c "
        BUS='$BUS_ADDRESS' runuser -u $user -- sh -c '$probe' >'$TEST_TMP/other.out' 2>&1 && exit 3
        exec '$WRITER' env" >"$TEST_TMP/bus.out" || fail "trace-fd-client exited $?"
cat "$TEST_TMP/other.out"
grep -q "only its owner or root may open a trace fd" "$TEST_TMP/other.out" || fail "another user was not refused clearly"
grep -v '^recording ' "$TEST_TMP/bus.out" >"$TEST_TMP/bus.expected"
"$CHECK" "$TEST_TMP/bus.syscap" "$TEST_TMP/bus.expected" || fail "OpenTraceFd: the capture is wrong"
echo "ok: OpenTraceFd over D-Bus; refused to another user"

# 5. The per-recording fd limits answer LimitExceeded, naming the limit.
"$CLIENT" "$BUS_ADDRESS" "$TEST_TMP/limits.syscap" env BUS="$BUS_ADDRESS" /usr/bin/python3 "$(dirname "$0")/fd-limits.py" \
        >"$TEST_TMP/limits.out" 2>&1 || { cat "$TEST_TMP/limits.out"; fail "the fd limits were not refused as LimitExceeded"; }
cat "$TEST_TMP/limits.out"
grep >/dev/null '^OpenControlFd 64$' "$TEST_TMP/limits.out" || fail "64 control fds were not all granted"
grep >/dev/null '^OpenTraceFd 15$' "$TEST_TMP/limits.out" || fail "the trace fds beside the client's one were not 15"
echo "ok: the 65th control fd and the 17th trace fd are refused with LimitExceeded"
