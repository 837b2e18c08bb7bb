#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# kernel.perf_event_paranoid >= 3 (Debian's kernels: the kernel gives perf
# to no user) makes recording one's own processes polkit's action
# org.periscope.profile-own, with the real polkitd (issue 27):
# - at 3 periscope-user, in no active local session (polkit's allow_any:
#   auth_admin, and no agent), is refused with the action and the way to
#   allow it (a rules file) named; root records; periscope-admin records its
#   own process (org.periscope.profile-system implies profile-own);
# - a rules file in /etc/polkit-1/rules.d/ granting profile-own lets
#   periscope-user record (its program named), and once it is removed,
#   polkit refuses again;
# - at 2 periscope-user records without polkit (polkitd stopped), as the
#   kernel would let it; at 3 without polkit it is refused.
# This machine's kernel is at 2 and the sysctl is the whole machine's: the
# daemon reads the level from a file of the test's
# (periscoped --perf-event-paranoid-file, for tests only), which the test
# changes between calls; the daemon reads it at every call.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${DEMO:?}" "${CAPTURE_JSON:?}"
test_user_require periscope-user
id -u periscope-admin >/dev/null 2>&1 || fail "user periscope-admin is missing: run scripts/setup.d/30-periscope-users.sh as root"
grep >/dev/null 'org.periscope.profile-own' /usr/share/polkit-1/actions/org.periscope.policy 2>/dev/null ||
        fail "polkit action org.periscope.profile-own not installed: run scripts/setup.d/30-periscope-users.sh"
rule=/etc/polkit-1/rules.d/49-periscope-test-profile-own-$$.rules
trap 'st=$?; rm -f "$rule"; (exit $st); _periscoped_bus_cleanup' EXIT
trap 'exit 143' TERM INT

private_bus_start
private_polkit_start || fail "polkitd did not start on the private bus"
polkitd_pid=${PRIVATE_BUS_PIDS[-1]}
level=$TEST_TMP/perf_event_paranoid
echo 3 >"$level"
periscoped_start --perf-event-paranoid-file="$level"
dir=$TEST_TMP/out
mkdir "$dir"; chmod 777 "$dir"

record_as() { # USER PID: a 300 ms Record of PID; prints the reply or the error
        local pre=()
        [ "$1" = root ] || pre=(setpriv --reuid="$1" --regid="$1" --init-groups)
        "${pre[@]}" gdbus call --address "$BUS_ADDRESS" -d org.periscope.Profiler1 -o /org/periscope/Profiler1 \
                -m org.periscope.Profiler1.Record "{'pids': <[$2]>, 'duration-ms': <uint32 300>}" 3 \
                3>"$dir/cap" 2>&1 || true
}
own_process() { # USER: sets own to a sleep of USER's
        TEST_USER=$1 exec_as_user sleep 60 & own=$!
        private_bus_track $own
}
own_process periscope-user
user_proc=$own
own_process periscope-admin
admin_proc=$own
sleep 0.2

out=$(record_as periscope-user $user_proc)
echo "periscope-user at 3: $out"
echo "$out" | grep >/dev/null "org.periscope.Error.NotAuthorized.*recording your own processes at kernel.perf_event_paranoid=3" ||
        fail "periscope-user's own process at paranoid 3 was not refused for the level: $out"
echo "$out" | grep >/dev/null "polkit denied action org.periscope.profile-own" ||
        fail "the refusal does not name org.periscope.profile-own: $out"
echo "$out" | grep >/dev/null "/etc/polkit-1/rules.d/" || fail "the refusal does not say how to allow it: $out"
st=0
TEST_USER=periscope-user as_user \
        "$PERISCOPE" record --address "$BUS_ADDRESS" -o "$dir/cli.syscap" -- true >"$dir/cli.out" 2>&1 || st=$?
[ $st != 0 ] || fail "periscope record worked for periscope-user at paranoid 3"
grep >/dev/null "org.periscope.profile-own" "$dir/cli.out" || fail "periscope record does not name the action: $(cat "$dir/cli.out")"
echo "ok: periscope-user is refused at 3: $(cat "$dir/cli.out")"

out=$(record_as root $user_proc)
echo "$out" | grep >/dev/null "/org/periscope/Recording/" || fail "root could not record at paranoid 3: $out"
out=$(record_as periscope-admin $admin_proc)
echo "$out" | grep >/dev/null "/org/periscope/Recording/" ||
        fail "periscope-admin (profile-system, which implies profile-own) could not record its own process at 3: $out"
echo "ok: at 3 root records, and periscope-admin through org.periscope.profile-system"

# An administrator's rule grants it; polkitd reloads its rules when the
# directory changes.
cat >"$rule.tmp" <<'EOF'
// periscope tests (tests/service/test-authorization-paranoid.sh): removed at its end
polkit.addRule(function(action, subject) {
    if (action.id == "org.periscope.profile-own" && subject.user == "periscope-user") {
        return polkit.Result.YES;
    }
});
EOF
chmod 0644 "$rule.tmp"
mv "$rule.tmp" "$rule"
allowed() { record_as periscope-user $user_proc | grep >/dev/null "/org/periscope/Recording/"; }
wait_for 15 allowed || fail "periscope-user is still refused with a rule granting org.periscope.profile-own: $(record_as periscope-user $user_proc)"
TEST_USER=periscope-user as_user \
        "$PERISCOPE" record --address "$BUS_ADDRESS" -o "$dir/granted.syscap" -- "$DEMO" -t 500 >"$dir/granted.out" 2>&1 ||
        { cat "$dir/granted.out"; fail "periscope-user could not record its command with the rule"; }
"$PYTHON" "$(dirname "$0")/check-capture.py" "$CAPTURE_JSON" "$dir/granted.syscap" callchains "$DEMO"
echo "ok: a rules file granting org.periscope.profile-own lets periscope-user record at 3"
rm -f "$rule"
refused() { record_as periscope-user $user_proc | grep >/dev/null "polkit denied action org.periscope.profile-own"; }
wait_for 15 refused || fail "periscope-user is not refused again once the rule is gone: $(record_as periscope-user $user_proc)"
echo "ok: without the rule, refused again"

# At 2, polkit is not asked: with polkitd gone the user records.
kill "$polkitd_pid"
wait_for 10 bash -c '! kill -0 "$1" 2>/dev/null' _ "$polkitd_pid" || fail "polkitd did not stop"
echo 2 >"$level"
out=$(record_as periscope-user $user_proc)
echo "$out" | grep >/dev/null "/org/periscope/Recording/" || fail "periscope-user could not record its own process at 2: $out"
TEST_USER=periscope-user as_user \
        "$PERISCOPE" record --address "$BUS_ADDRESS" -o "$dir/two.syscap" -- "$DEMO" -t 300 >"$dir/two.out" 2>&1 ||
        { cat "$dir/two.out"; fail "periscope-user could not record its command at 2"; }
echo "ok: at 2 periscope-user records its own processes, polkit not asked (polkitd stopped)"
echo 3 >"$level"
out=$(record_as periscope-user $user_proc)
echo "$out" | grep >/dev/null "NotAuthorized.*org.periscope.profile-own.*polkit could not be asked" ||
        fail "at 3 without polkit periscope-user was not refused naming the action: $out"
echo "ok: at 3 without polkit, refused: $out"
