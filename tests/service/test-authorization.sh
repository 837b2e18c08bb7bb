#!/usr/bin/env bash
# An unprivileged user (periscope-user, from scripts/setup.d/30-periscope-users.sh)
# cannot record root's processes or the whole system and is told why; it can
# record its own process, without kernel addresses (perf_event_paranoid is 2).
. "$(dirname "$0")/private-bus.sh"
: "${PERISCOPE:?}" "${DEMO:?}" "${CAPTURE_JSON:?}"
user=periscope-user
id -u $user >/dev/null 2>&1 || fail "user $user is missing: run scripts/setup.d/30-periscope-users.sh as root"
private_bus_start
periscoped_start
dir=$TEST_TMP/$user
mkdir "$dir"; chown $user: "$dir"
as_user() { runuser -u $user -- "$@"; }

sleep 60 & root_proc=$!
_cleanup_pids+=($root_proc)
if as_user "$PERISCOPE" record --address "$BUS_ADDRESS" -p $root_proc --duration 0.5 -o "$dir/root.syscap" 2>"$dir/err1"; then
        fail "$user recorded root's process $root_proc"
fi
cat "$dir/err1"
grep -q "recording process $root_proc (not yours, or not dumpable) needs authorization through polkit" "$dir/err1" ||
        fail "no clear error for root's process"

if as_user "$PERISCOPE" record --address "$BUS_ADDRESS" --system --duration 0.5 -o "$dir/sys.syscap" 2>"$dir/err2"; then
        fail "$user recorded the whole system"
fi
cat "$dir/err2"
grep -q "recording the whole system needs authorization through polkit" "$dir/err2" || fail "no clear error for --system"

if as_user "$PERISCOPE" record --address "$BUS_ADDRESS" -p $root_proc --no-kernel --duration 0.5 -o "$dir/k.syscap" 2>/dev/null; then
        fail "$user recorded root's process with --no-kernel"
fi

# Its own process works, and carries no kernel addresses.
as_user "$PERISCOPE" record --address "$BUS_ADDRESS" -o "$dir/own.syscap" -- "$DEMO" -t 800 2>"$dir/err3" ||
        { cat "$dir/err3"; fail "$user could not record its own command"; }
"$PYTHON" "$(dirname "$0")/check-capture.py" "$CAPTURE_JSON" "$dir/own.syscap" callchains "$DEMO"
"$CAPTURE_JSON" "$dir/own.syscap" | "$PYTHON" -c '
import json, sys
k = 2**64 - 128
bad = [f for f in map(json.loads, sys.stdin) if f["type"] == "SAMPLE" and (k in f["addrs"] or any(a >= 2**63 and a < 2**64 - 4095 for a in f["addrs"]))]
if bad:
    print("FAIL: kernel addresses in an unprivileged recording:", bad[0]); sys.exit(1)
print("ok: no kernel addresses for", sys.argv[1])' $user

# Asking for kernel stacks explicitly is refused with the reason.
setpriv --reuid=$user --regid=$user --clear-groups sleep 60 & own=$!
_cleanup_pids+=($own)
out=$(as_user gdbus call --address "$BUS_ADDRESS" -d org.periscope.Profiler1 -o /org/periscope/Profiler1 \
        -m org.periscope.Profiler1.Record "{'pids': <[$own]>, 'kernel': <true>}" 3 3>"$dir/x.syscap" 2>&1 || true)
echo "$out" | grep -q "org.periscope.Error.NotAuthorized.*option 'kernel'" || fail "kernel=true for $user: $out"
echo "ok: $user is told: $(echo "$out" | sed 's/.*NotAuthorized: //')"
