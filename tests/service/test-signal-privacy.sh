#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Signal privacy (docs/security.md): while root records, an eavesdropping
# user (periscope-user) listening with a match rule on the service's name
# (watch-signals.py) and with `gdbus monitor` receives none of the
# recording's PropertiesChanged, Progress and Finished signals, and reading
# its properties is refused with AccessDenied. The owner's connection gets
# them all; root gets a user's recording's signals once it has read its
# properties. Real users, real polkitd, the service on a private system bus.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
user=periscope-user
id -u $user >/dev/null 2>&1 || fail "user $user is missing: run scripts/setup.d/30-periscope-users.sh as root"
/usr/bin/python3 -c 'import dbus, gi' 2>/dev/null || fail "python3-dbus and python3-gi are missing (scripts/install-deps.sh)"
periscoped_start_for_user $user 755
# exec_as_user, not as_user: this test kills the pid it tracks, and
# `exec_as_user CMD &` is the watcher itself.
watch=("/usr/bin/python3" "$(dirname "$0")/watch-signals.py" "$BUS_ADDRESS")
wait_file() { # FILE: waits up to 60 s for it
        for _ in $(seq 600); do [ -e "$1" ] && return 0; sleep 0.1; done
        fail "$1 did not appear"
}
signals_of() { # JSON PATH: "member member …" of the signals for PATH
        /usr/bin/python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(" ".join(sorted({s[2] for s in r["signals"] if s[0] == sys.argv[2]})))' "$1" "$2"
}

sleep 120 & root_proc=$!
private_bus_track $root_proc
setpriv --reuid=$user --regid=$user --clear-groups sleep 120 & own=$!
private_bus_track $own

# 1. The eavesdroppers, as the user: a match rule on the service's signals, and gdbus monitor.
exec_as_user "${watch[@]}" "$dir/eve.json" --seconds 120 --until "$TEST_TMP/root-done" --ready "$dir/eve.ready" & eve=$!
private_bus_track $eve
setpriv --reuid=$user --regid=$user --init-groups gdbus monitor --address "$BUS_ADDRESS" --dest org.periscope.Profiler1 >"$dir/monitor.log" 2>&1 & monitor=$!
private_bus_track $monitor
wait_file "$dir/eve.ready"
for _ in $(seq 200); do grep -q "is owned by" "$dir/monitor.log" && break; sleep 0.1; done
grep -q "is owned by" "$dir/monitor.log" || { cat "$dir/monitor.log"; fail "gdbus monitor did not start watching the service"; }

# 2. Root records its process for 3 s on a connection that listens as well.
"${watch[@]}" "$TEST_TMP/root.json" --record $root_proc "$TEST_TMP/root.syscap" 3000 --path-file "$TEST_TMP/root.path" &
rootw=$!
private_bus_track $rootw
wait_file "$TEST_TMP/root.path"
rpath=$(cat "$TEST_TMP/root.path")
out=$(as_user gdbus call --address "$BUS_ADDRESS" -d org.periscope.Profiler1 -o "$rpath" \
        -m org.freedesktop.DBus.Properties.GetAll org.periscope.Recording1 2>&1) &&
        fail "$user read the properties of root's recording: $out"
echo "GetAll as $user: $out"
[[ $out == *"org.freedesktop.DBus.Error.AccessDenied"*"belongs to uid 0; only its owner or root may read its properties"* ]] ||
        fail "GetAll on root's recording was not refused with AccessDenied: $out"
out=$(as_user busctl --address="$BUS_ADDRESS" get-property org.periscope.Profiler1 "$rpath" org.periscope.Recording1 Samples 2>&1) &&
        fail "$user read root's recording's Samples: $out"
[[ $out == *"Access denied"* ]] || fail "Get Samples on root's recording: $out"
out=$(as_user gdbus call --address "$BUS_ADDRESS" -d org.periscope.Profiler1 -o "$rpath" -m org.periscope.Recording1.Stop 2>&1) &&
        fail "$user stopped root's recording"
echo "ok: $user cannot read root's recording's properties (GetAll, Get) nor stop it"
wait $rootw || fail "root's watcher failed"
sleep 0.5; touch "$TEST_TMP/root-done"  # the eavesdropper listened through all of root's recording
got=$(signals_of "$TEST_TMP/root.json" "$rpath")
echo "root's own connection got: $got"
[[ $got == *Finished*PropertiesChanged* ]] || fail "root's connection did not get its recording's Finished and PropertiesChanged"
"$CAPTURE_JSON" "$TEST_TMP/root.syscap" >/dev/null 2>&1 || true

wait $eve || fail "the eavesdropper failed"
eve_got=$(/usr/bin/python3 -c 'import json, sys
print(len([s for s in json.load(open(sys.argv[1]))["signals"] if s[0].startswith("/org/periscope/Recording")]))' "$dir/eve.json")
[ "$eve_got" = 0 ] || fail "the eavesdropper received $eve_got signals of root's recording: $(cat "$dir/eve.json")"
kill $monitor 2>/dev/null; wait $monitor 2>/dev/null || true
! grep -q "/org/periscope/Recording" "$dir/monitor.log" || { cat "$dir/monitor.log"; fail "gdbus monitor as $user saw root's recording's signals"; }
echo "ok: $user's match rule and gdbus monitor received none of root's recording's signals"

# 3. The user's own recording: its connection gets the signals; root gets
# them too once it has read the recording's properties.
exec_as_user "${watch[@]}" "$dir/own.json" --record $own "$dir/own.syscap" 3000 --path-file "$dir/own.path" & ownw=$!
private_bus_track $ownw
wait_file "$dir/own.path"
upath=$(cat "$dir/own.path")
"${watch[@]}" "$TEST_TMP/rootwatch.json" --watch "$upath" || fail "root's watcher of $user's recording failed"
wait $ownw || fail "$user's recording client failed"
got=$(signals_of "$dir/own.json" "$upath")
echo "$user's connection got: $got"
[[ $got == *Finished*PropertiesChanged* ]] || fail "$user did not get its own recording's signals"
got=$(signals_of "$TEST_TMP/rootwatch.json" "$upath")
echo "root, watching $user's recording, got: $got"
grep -q '"State"' "$TEST_TMP/rootwatch.json" || fail "root could not read $user's recording's properties"
[[ $got == *Finished* ]] || fail "root did not get the Finished of $user's recording it watched"
echo "ok: the owner's connection and a watching root connection get the signals"
