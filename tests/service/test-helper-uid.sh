#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 20: the sandboxed helper of a root periscoped runs as an
# unprivileged host uid (the user periscope-helper, else 61871), never as
# root: bubblewrap mapped its uid 65534 onto root's, which gave it root's
# owner rights on every root-owned file under /usr. While root's and
# periscope-user's recordings run, every helper process (and the bwrap
# above it) has that uid in all four Uid: fields of /proc/PID/status, and
# the recordings still name their functions. A private periscoped started
# by periscope-user runs its helper as periscope-user. (That the helper
# cannot open a root-owned 0711 program: sandbox-helper-probe.)
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${DEMO:?}" "${CAPTURE_JSON:?}"
[ "$(id -u)" = 0 ] || fail "runs as root (./test.sh does): it checks the uid a root daemon gives its helper"
test_user_require periscope-user
want=$(id -u periscope-helper 2>/dev/null || echo 61871)
periscoped_start_for_user periscope-user 0755
cp "$DEMO" "$TEST_TMP/demo"
chmod 0755 "$TEST_TMP/demo"

# "pid uid-fields" of each process running the helper (argv[0]
# /run/periscope-helper inside its sandbox) or bwrap, descendants of $1.
sandbox_uids() { # ancestor pid
        local pid p found
        for pid in $(pgrep -f '^/run/periscope-helper ') $(pgrep -x bwrap); do
                found=0
                p=$pid
                while [ -n "$p" ] && [ "$p" -gt 1 ]; do
                        [ "$p" = "$1" ] && { found=1; break; }
                        p=$(awk '/^PPid:/ { print $2 }' "/proc/$p/status" 2>/dev/null) || break
                done
                [ $found = 1 ] || continue
                local prog uids
                # gone between pgrep and the reads (the reads fail): nothing to say of it
                prog=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | cut -d ' ' -f1) || continue
                uids=$(awk '/^Uid:/ { print $2, $3, $4, $5 }' "/proc/$pid/status" 2>/dev/null) || continue
                [ -n "$prog" ] && [ -n "$uids" ] || continue
                echo "$pid $prog $uids"
        done
}

# Watches the sandboxes under ancestor $1 while $2 (a pid) runs; writes
# their "pid program uids" lines, once each, to $3.
watch_sandboxes() { # ancestor watched-pid out
        : >"$3"
        while kill -0 "$2" 2>/dev/null; do
                sandbox_uids "$1" >>"$3"
                sleep 0.1
        done
        sort -u -o "$3" "$3"
}

check_uids() { # file want label
        local n
        n=$(grep -c "/run/periscope-helper" "$1" || true)
        [ "$n" -gt 0 ] || fail "$3: no helper process was seen while it recorded"
        if awk -v w="$2" '{ for (i = 3; i <= 6; i++) if ($i != w) bad = 1 } END { exit !bad }' "$1"; then
                cat "$1" >&2
                fail "$3: a sandbox process runs with another host uid than $2"
        fi
        echo "ok: $3: $(wc -l <"$1") sandbox processes seen, all with Uid: $2 $2 $2 $2 ($n helpers)"
}

# root's recording, then periscope-user's, through the root daemon
"$PERISCOPE" record --address "$BUS_ADDRESS" --unwind dwarf -o "$TEST_TMP/root.syscap" -- "$TEST_TMP/demo" -t 3000 \
        2>"$TEST_TMP/root.err" & rec=$!
watch_sandboxes "$PERISCOPED_PID" $rec "$TEST_TMP/root.uids"
wait $rec || { cat "$TEST_TMP/root.err"; fail "root could not record"; }
check_uids "$TEST_TMP/root.uids" "$want" "root's recording"
"$PYTHON" "$(dirname "$0")/check-capture.py" "$CAPTURE_JSON" "$TEST_TMP/root.syscap" callchains "$TEST_TMP/demo"

# (a copy of its own: unwind tables are kept per file, and root's recording
# compiled the demo's, so the user's helper would only live for the short
# symbolization after the stop, too short to be seen for sure)
cp "$TEST_TMP/demo" "$dir/demo-user" && chmod 0755 "$dir/demo-user"
as_user "$PERISCOPE" record --address "$BUS_ADDRESS" --unwind dwarf -o "$dir/user.syscap" -- "$dir/demo-user" -t 3000 \
        2>"$TEST_TMP/user.err" & rec=$!
watch_sandboxes "$PERISCOPED_PID" $rec "$TEST_TMP/user.uids"
wait $rec || { cat "$TEST_TMP/user.err"; fail "periscope-user could not record"; }
check_uids "$TEST_TMP/user.uids" "$want" "periscope-user's recording"
"$PYTHON" "$(dirname "$0")/check-capture.py" "$CAPTURE_JSON" "$dir/user.syscap" callchains "$dir/demo-user"

# periscope-user's own private daemon (no service on its bus): the helper is
# that user, and still names the functions
as_user env DBUS_SYSTEM_BUS_ADDRESS="unix:path=$TEST_TMP/no-such-bus" PERISCOPED="$PERISCOPED" \
        "$PERISCOPE" record --unwind dwarf -o "$dir/private.syscap" -- "$TEST_TMP/demo" -t 3000 \
        2>"$TEST_TMP/private.err" & rec=$!
watch_sandboxes $rec $rec "$TEST_TMP/private.uids"
wait $rec || { cat "$TEST_TMP/private.err"; fail "periscope-user's private daemon could not record"; }
! grep -E "Sanitizer|runtime error:" "$TEST_TMP/private.err" >/dev/null || { cat "$TEST_TMP/private.err"; fail "the private periscoped reported memory errors"; }
check_uids "$TEST_TMP/private.uids" "$uid" "periscope-user's private daemon"
"$PYTHON" "$(dirname "$0")/check-capture.py" "$CAPTURE_JSON" "$dir/private.syscap" callchains "$TEST_TMP/demo"
echo PASS
