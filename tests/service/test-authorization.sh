#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# An unprivileged user (periscope-user, from scripts/setup.d/30-periscope-users.sh)
# cannot record root's processes or the whole system and is told why; it can
# record its own process, with kernel addresses only where perf_event_paranoid
# and kptr_restrict allow them.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${DEMO:?}" "${CAPTURE_JSON:?}"
user=periscope-user
id -u $user >/dev/null 2>&1 || fail "user $user is missing: run scripts/setup.d/30-periscope-users.sh as root"
private_bus_start
periscoped_start
dir=$TEST_TMP/$user
mkdir "$dir"; chown $user: "$dir"

sleep 60 & root_proc=$!
private_bus_track $root_proc
if as_user "$PERISCOPE" record --address "$BUS_ADDRESS" -p $root_proc --duration 0.5 -o "$dir/root.syscap" 2>"$dir/err1"; then
        fail "$user recorded root's process $root_proc"
fi
cat "$dir/err1"
grep -q "recording process $root_proc (not yours to record, or it does not exist) needs authorization through polkit" "$dir/err1" ||
        fail "no clear error for root's process"

if as_user "$PERISCOPE" record --address "$BUS_ADDRESS" --system --duration 0.5 -o "$dir/sys.syscap" 2>"$dir/err2"; then
        fail "$user recorded the whole system"
fi
cat "$dir/err2"
grep -q "recording the whole system needs authorization through polkit" "$dir/err2" || fail "no clear error for --system"

if as_user "$PERISCOPE" record --address "$BUS_ADDRESS" -p $root_proc --no-kernel --duration 0.5 -o "$dir/k.syscap" 2>/dev/null; then
        fail "$user recorded root's process with --no-kernel"
fi

# Whether this system lets users see kernel addresses right now (another
# program may change the sysctls while the suite runs: the checks below use
# the setting read around each step and retry when it changed meanwhile).
kernel_allowed() {
        [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 1 ] && [ "$(cat /proc/sys/kernel/kptr_restrict)" = 0 ] && echo true || echo false
}

# Its own process works; kernel addresses only if the system allows them.
for attempt in 1 2 3; do
        before=$(kernel_allowed)
        as_user "$PERISCOPE" record --address "$BUS_ADDRESS" -o "$dir/own.syscap" -- "$DEMO" -t 800 2>"$dir/err3" ||
                { cat "$dir/err3"; fail "$user could not record its own command"; }
        [ "$(kernel_allowed)" = "$before" ] && break
done
"$PYTHON" "$(dirname "$0")/check-capture.py" "$CAPTURE_JSON" "$dir/own.syscap" callchains "$DEMO"
"$CAPTURE_JSON" "$dir/own.syscap" | "$PYTHON" -c '
import json, sys
allowed = sys.argv[2] == "true"
frames = [json.loads(l) for l in sys.stdin]
stats = [f["metadata"] for f in frames if f["type"] == "METADATA" and f["id"] == "periscope.stats"][0]
kernel = "kernel=true" in stats.splitlines()
k = 2**64 - 128
bad = [f for f in frames if f["type"] == "SAMPLE" and (k in f["addrs"] or any(a >= 2**63 and a < 2**64 - 4095 for a in f["addrs"]))]
if kernel != allowed:
    print(f"FAIL: kernel stacks {kernel} for {sys.argv[1]} but the system allows them: {allowed}"); sys.exit(1)
if bad and not kernel:
    print("FAIL: kernel addresses in an unprivileged recording:", bad[0]); sys.exit(1)
print(f"ok: kernel addresses for {sys.argv[1]}: {kernel} (perf_event_paranoid/kptr_restrict allow: {allowed})")' $user "$before"

# Asking for kernel stacks explicitly: refused with the reason unless allowed.
setpriv --reuid=$user --regid=$user --clear-groups sleep 60 & own=$!
private_bus_track $own
sleep 0.2
for attempt in 1 2 3; do
        before=$(kernel_allowed)
        out=$(as_user gdbus call --address "$BUS_ADDRESS" -d org.periscope.Profiler1 -o /org/periscope/Profiler1 \
                -m org.periscope.Profiler1.Record "{'pids': <[$own]>, 'kernel': <true>, 'duration-ms': <uint32 200>}" 3 3>"$dir/x.syscap" 2>&1 || true)
        [ "$(kernel_allowed)" = "$before" ] && break
done
if [ "$before" = true ]; then
        echo "$out" | grep >/dev/null "/org/periscope/Recording/" || fail "kernel=true refused although the system allows it: $out"
        echo "ok: kernel=true allowed (perf_event_paranoid <= 1, kptr_restrict 0)"
else
        echo "$out" | grep >/dev/null "org.periscope.Error.NotAuthorized.*option 'kernel'" || fail "kernel=true for $user: $out"
        echo "ok: $user is told: $(echo "$out" | sed 's/.*NotAuthorized: //')"
fi
