#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A user's hostile /.flatpak-info files do not slow the service for anyone
# else (issue 20): periscope-user starts 200 bubblewrap sandboxes of two
# apps, each with a 63 KiB /.flatpak-info (a plain `bwrap --ro-bind-data`
# imitates Flatpak) that the sandboxed helper must parse whenever the
# service looks at the process, asks ListTargets over and over, and records
# one app's 50 with --container (Record looks at all 200) while 50 more
# join. Meanwhile a probe reads the Profiler's Version: the slowest Get
# stays under 100 ms, since the parses run on fibers that give the event
# loop back while the helper works (before: 333 ms and 608 ms). ListTargets
# still lists both apps, LimitExceeded bounds one user's waiting calls,
# callers that leave break nothing, and the capture still describes every
# recorded sandbox, joined ones included.
# In a session of its own: availability.sh raises its CPU share.
[ "$(ps -o sid= -p $$ | tr -d ' ')" = $$ ] || exec setsid -w "$0" "$@"
. "$(dirname "$0")/../lib/periscoped-bus.sh"
. "$(dirname "$0")/availability.sh"
: "${PERISCOPE:?}" "${PROBE:?}"
command -v bwrap >/dev/null || fail "bwrap missing: apt-get install -y bubblewrap (scripts/install-deps.sh does)"
test_user_require periscope-user
dir=$TEST_TMP/$user
mkdir "$dir"; chown $user: "$dir"

# The hostile files: valid, just below the service's 64 KiB limit, most of
# them groups the helper's keyfile parser must build; two apps.
hostile_info() { # APP-ID INSTANCE-ID
        printf '[Application]\nname=%s\nruntime=runtime/org.hostile.Platform/x86_64/1\n' "$1"
        printf '[Instance]\ninstance-id=%s\napp-path=/nonexistent\n' "$2"
        local i=0
        while :; do
                printf '[G%05d]\nk=%s\nl=%s\n' $i "$(head -c 40 /dev/zero | tr '\0' x)" "$i;$i;$i;$i"
                i=$((i + 1))
                [ $i -lt 900 ] || break
        done
}
hostile_info org.hostile.App 666 >"$dir/flatpak-info"
hostile_info org.hostile.Other 667 >"$dir/flatpak-info-other"
size=$(stat -c %s "$dir/flatpak-info")
[ "$size" -gt 60000 ] && [ "$size" -lt 65536 ] || fail "the hostile /.flatpak-info is $size bytes"
chown $user: "$dir/flatpak-info" "$dir/flatpak-info-other"

# SANDBOXES N: N sandboxes of the user's, each sleeping, that end with the
# shell starting them (its pid in $dir/sandboxes.pid); waits until all run.
cat >"$dir/sandboxes.sh" <<'EOF'
#!/bin/sh
# sandboxes.sh N INFO PIDFILE [PAUSE]: N imitated Flatpak sandboxes (PAUSE
# seconds apart), then waits
echo $$ >"$3"
i=0
while [ $i -lt "$1" ]; do
        [ -z "${4:-}" ] || sleep "$4"
        bwrap --unshare-user --die-with-parent --tmpfs / --ro-bind /usr /usr --symlink usr/bin /bin \
                --symlink usr/lib /lib --symlink usr/lib64 /lib64 --proc /proc --dev /dev \
                --ro-bind-data 3 /.flatpak-info sleep 600 3<"$2" &
        i=$((i + 1))
done
wait
EOF
chmod 755 "$dir/sandboxes.sh"

count_sandboxes() { # processes of the user whose root holds /.flatpak-info
        local n=0 p
        for p in $(ps -u $user -o pid=); do
                [ -e /proc/$p/root/.flatpak-info ] 2>/dev/null && n=$((n + 1))
        done
        echo $n
}

availability_start

for app in "50" "150 -other"; do
        set -- $app
        app=${2:-}
        runuser -u $user -- "$dir/sandboxes.sh" $1 "$dir/flatpak-info$app" "$dir/sandboxes$app.pid" &
        for _ in $(seq 100); do [ -s "$dir/sandboxes$app.pid" ] && break; sleep 0.1; done
        [ -s "$dir/sandboxes$app.pid" ] || fail "the sandboxes did not start"
        private_bus_track "$(cat "$dir/sandboxes$app.pid")"
done
for _ in $(seq 300); do
        [ "$(count_sandboxes)" -ge 200 ] && break
        sleep 0.1
done
n=$(count_sandboxes)
[ "$n" -ge 200 ] || fail "only $n of 200 sandboxes run"
echo "200 sandboxes of $user run (50 of one app, 150 of the other), each with a $size-byte /.flatpak-info"

# the probe, as long as the attack lasts
nice -n -10 "$PROBE" --profiler "$BUS_ADDRESS" "$TEST_TMP/stop" 300 >"$TEST_TMP/latency" 2>"$TEST_TMP/latency.err" &
probe=$!
private_bus_track $probe
sleep 0.5

# the attack, 1: ListTargets, five times (each makes the helper parse every
# sandbox's file); the answer still lists them
for i in 1 2 3 4 5; do
        t0=$(date +%s%N)
        runuser -u $user -- "$PERISCOPE" list --json --address "$BUS_ADDRESS" >"$TEST_TMP/list.json" \
                2>"$TEST_TMP/list.err" || { cat "$TEST_TMP/list.err"; fail "ListTargets failed"; }
        echo "ListTargets $i answered in $((($(date +%s%N) - t0) / 1000000)) ms"
done
"$PYTHON" - "$TEST_TMP/list.json" <<'EOF' || fail "ListTargets does not list the sandboxes"
import json, sys
targets = json.load(open(sys.argv[1]))
for app, instance, n in ("org.hostile.App", "666", 50), ("org.hostile.Other", "667", 150):
        flatpaks = [t for t in targets if t.get("kind") == "flatpak" and t.get("name") == app]
        assert len(flatpaks) == 1 and flatpaks[0].get("id") == instance, flatpaks[:3]
        pids = flatpaks[0].get("pids", [])
        assert len(pids) == n, len(pids)
        print("ok: ListTargets lists %s (instance %s) with %d processes" % (app, instance, len(pids)))
EOF

touch "$TEST_TMP/stop"
wait $probe || { cat "$TEST_TMP/latency" "$TEST_TMP/latency.err"; fail "the probe failed"; }
cat "$TEST_TMP/latency.err"
read -r _ gets _ max_ms _ slow <"$TEST_TMP/latency"
echo "while ListTargets parsed: Properties.Get of the Profiler's Version: $gets calls, slowest $max_ms ms, $slow over 50 ms"

# callers that leave before their answer: nothing breaks; and one user's
# calls wait 8 at most (the others are told LimitExceeded)
for i in $(seq 6); do
        # (setpriv execs: the caller itself is killed, mid-call)
        timeout -s KILL 0.1 setpriv --reuid=$uid --regid="$(id -g $user)" --init-groups \
                "$PERISCOPE" list --address "$BUS_ADDRESS" >/dev/null 2>&1 || true
done
# (their calls still wait in the queue: a call of ours answers after them)
runuser -u $user -- "$PERISCOPE" list --address "$BUS_ADDRESS" >/dev/null 2>"$TEST_TMP/list.err" ||
        { cat "$TEST_TMP/list.err"; fail "ListTargets failed after callers left"; }
pids=()
for i in $(seq 14); do
        runuser -u $user -- "$PERISCOPE" list --json --address "$BUS_ADDRESS" >"$TEST_TMP/many.$i" \
                2>"$TEST_TMP/many.$i.err" &
        pids+=($!)
done
answered=0 refused=0
for i in $(seq 14); do
        if wait "${pids[$((i - 1))]}"; then
                answered=$((answered + 1))
        elif grep -q "too many of your calls wait" "$TEST_TMP/many.$i.err"; then
                refused=$((refused + 1))
        else
                cat "$TEST_TMP/many.$i.err"; fail "ListTargets failed otherwise"
        fi
done
echo "14 ListTargets at once: $answered answered, $refused told LimitExceeded"
[ "$answered" -ge 8 ] && [ "$refused" -ge 1 ] || fail "expected at least 8 answers and 1 LimitExceeded"
kill -0 $PERISCOPED_PID || fail "periscoped died"

# the attack, 2: the user records one app's sandboxes (--container: every
# process's file parsed when Record looks them up, the recorded ones' again
# when the recording describes them) while 50 more join, one every 20 ms
# (the rescans find them). (Recording 200 costs the loop ~100 ms at the
# start whatever the files: the snapshot and perf's events; 50 here.)
nice -n -10 "$PROBE" --profiler "$BUS_ADDRESS" "$TEST_TMP/stop2" 300 >"$TEST_TMP/latency2" 2>"$TEST_TMP/latency2.err" &
probe=$!
private_bus_track $probe
sleep 0.5
runuser -u $user -- "$PERISCOPE" record --address "$BUS_ADDRESS" -o "$dir/rec.syscap" --container org.hostile.App \
        --duration 5 >"$TEST_TMP/record.out" 2>"$TEST_TMP/record.err" &
rec=$!
private_bus_track $rec
recording_of_uid $uid
runuser -u $user -- "$dir/sandboxes.sh" 50 "$dir/flatpak-info" "$dir/joiners.pid" 0.02 &
for _ in $(seq 100); do [ -s "$dir/joiners.pid" ] && break; sleep 0.1; done
[ -s "$dir/joiners.pid" ] || fail "the joining sandboxes did not start"
private_bus_track "$(cat "$dir/joiners.pid")"
wait $rec || { cat "$TEST_TMP/record.err"; fail "the recording failed"; }
cat "$TEST_TMP/record.err"
grep -E "recording $id: snapshot" "$TEST_TMP/periscoped.log"
joined=$(grep -c "recording $id: process [0-9]* (.*) joined container" "$TEST_TMP/periscoped.log" || true)
echo "$joined processes joined the recording"
touch "$TEST_TMP/stop2"
wait $probe || { cat "$TEST_TMP/latency2" "$TEST_TMP/latency2.err"; fail "the probe failed"; }
cat "$TEST_TMP/latency2.err"
read -r _ gets2 _ max2_ms _ slow2 <"$TEST_TMP/latency2"
echo "while the recording ran: $gets2 Gets, slowest $max2_ms ms, $slow2 over 50 ms"

# the capture still describes the recorded sandboxes
"$PERISCOPE" dump --json "$dir/rec.syscap" >"$TEST_TMP/rec.json" || fail "periscope dump failed"
[ "$joined" -ge 25 ] || fail "only $joined of 50 sandboxes joined the recording"
"$PYTHON" - "$TEST_TMP/rec.json" "$joined" <<'EOF' || fail "the capture does not describe the sandboxes"
import base64, json, sys
d = json.load(open(sys.argv[1]))
described = set()
for f in d["frames"]:
        if f["type"] == "FILE_CHUNK" and f["path"] == "periscope:container":
                text = base64.b64decode(f["data_base64"])
                if b"engine=flatpak" in text and b"name=org.hostile.App" in text:
                        described.add(f["pid"])
assert len(described) >= 50 + int(sys.argv[2]), (len(described), sys.argv[2])
print("ok: the capture describes %d sandboxed processes as org.hostile.App" % len(described))
EOF

# the attack, 3: a command that starts 30 sandboxes and ends 0.3 s later:
# whatever still waits for its parse at the Stop is described after it
runuser -u $user -- "$PERISCOPE" record --address "$BUS_ADDRESS" -o "$dir/short.syscap" -- \
        sh -c '"$1" 30 "$2" "$3" & sleep 0.3; kill $(cat "$3")' sh "$dir/sandboxes.sh" "$dir/flatpak-info" \
        "$dir/short.pid" >"$TEST_TMP/short.out" 2>"$TEST_TMP/short.err" ||
        { cat "$TEST_TMP/short.err"; fail "the short recording failed"; }
grep -E "recording 2: [0-9]+ sandboxed processes described after sampling" "$TEST_TMP/periscoped.log" ||
        echo "(none waited at the Stop)"
"$PERISCOPE" dump --json "$dir/short.syscap" >"$TEST_TMP/short.json" || fail "periscope dump failed"
"$PYTHON" - "$TEST_TMP/short.json" <<'EOF' || fail "the short capture does not describe its sandboxes"
import base64, json, sys
d = json.load(open(sys.argv[1]))
sleeps = {f["pid"] for f in d["frames"] if f["type"] == "PROCESS" and f.get("cmdline", "").startswith("sleep 600")}
described = {f["pid"] for f in d["frames"] if f["type"] == "FILE_CHUNK" and f["path"] == "periscope:container"
             and b"name=org.hostile.App" in base64.b64decode(f["data_base64"])}
assert len(sleeps) >= 25 and sleeps <= described, (len(sleeps), len(described), sorted(sleeps - described)[:5])
print("ok: the short capture describes all %d sandboxed sleeps" % len(sleeps))
EOF

[ "$gets" -ge 20 ] || fail "only $gets Gets while ListTargets parsed: nothing measured"
[ "$gets2" -ge 20 ] || fail "only $gets2 Gets while the recording ran: nothing measured"
get_within_100ms "$max_ms" "while ListTargets parsed hostile /.flatpak-info files"
get_within_100ms "$max2_ms" "while a recording parsed hostile /.flatpak-info files"
echo "ok: the service answered within 100 ms while it parsed $user's hostile files"
