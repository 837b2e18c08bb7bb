#!/usr/bin/env bash
# A user's hostile /.flatpak-info files do not slow the service for anyone
# else (issue 20): periscope-user starts 200 bubblewrap sandboxes, each with
# a 63 KiB /.flatpak-info (a plain `bwrap --ro-bind-data` imitates Flatpak)
# that the sandboxed helper must parse whenever the service looks at the
# process, then asks ListTargets over and over, and records them with
# --container while 50 more join. Meanwhile a probe reads the Profiler's
# Version: the slowest Get stays under 100 ms, since the parses run on
# fibers that give the event loop back while the helper works. ListTargets
# still lists the sandboxes (as one Flatpak instance), and the capture
# still describes every recorded sandbox, joined ones included.
# In a session of its own: availability.sh raises its CPU share.
[ "$(ps -o sid= -p $$ | tr -d ' ')" = $$ ] || exec setsid -w "$0" "$@"
. "$(dirname "$0")/../lib/periscoped-bus.sh"
. "$(dirname "$0")/availability.sh"
: "${PERISCOPE:?}" "${PROBE:?}"
command -v bwrap >/dev/null || fail "bwrap missing: apt-get install -y bubblewrap (scripts/install-deps.sh does)"
test_user_require periscope-user
dir=$TEST_TMP/$user
mkdir "$dir"; chown $user: "$dir"

# The hostile file: valid, just below the service's 64 KiB limit, most of it
# groups the helper's keyfile parser must build.
{
        printf '[Application]\nname=org.hostile.App\nruntime=runtime/org.hostile.Platform/x86_64/1\n'
        printf '[Instance]\ninstance-id=666\napp-path=/nonexistent\n'
        i=0
        while :; do
                printf '[G%05d]\nk=%s\nl=%s\n' $i "$(head -c 40 /dev/zero | tr '\0' x)" "$i;$i;$i;$i"
                i=$((i + 1))
                [ $i -lt 900 ] || break
        done
} >"$dir/flatpak-info"
size=$(stat -c %s "$dir/flatpak-info")
[ "$size" -gt 60000 ] && [ "$size" -lt 65536 ] || fail "the hostile /.flatpak-info is $size bytes"
chown $user: "$dir/flatpak-info"

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

runuser -u $user -- "$dir/sandboxes.sh" 200 "$dir/flatpak-info" "$dir/sandboxes.pid" &
for _ in $(seq 100); do [ -s "$dir/sandboxes.pid" ] && break; sleep 0.1; done
[ -s "$dir/sandboxes.pid" ] || fail "the sandboxes did not start"
private_bus_track "$(cat "$dir/sandboxes.pid")"
for _ in $(seq 300); do
        [ "$(count_sandboxes)" -ge 200 ] && break
        sleep 0.1
done
n=$(count_sandboxes)
[ "$n" -ge 200 ] || fail "only $n of 200 sandboxes run"
echo "200 sandboxes of $user run, each with a $size-byte /.flatpak-info"

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
flatpaks = [t for t in targets if t.get("kind") == "flatpak" and t.get("name") == "org.hostile.App"]
assert len(flatpaks) == 1, flatpaks[:3]
pids = flatpaks[0].get("pids", [])
assert len(pids) >= 200, len(pids)
print("ok: ListTargets lists org.hostile.App (instance 666) with %d processes" % len(pids))
EOF

touch "$TEST_TMP/stop"
wait $probe || { cat "$TEST_TMP/latency" "$TEST_TMP/latency.err"; fail "the probe failed"; }
cat "$TEST_TMP/latency.err"
read -r _ gets _ max_ms _ slow <"$TEST_TMP/latency"
echo "while ListTargets parsed: Properties.Get of the Profiler's Version: $gets calls, slowest $max_ms ms, $slow over 50 ms"

# the attack, 2: the user records its sandboxes (--container: every
# process's file parsed when Record looks them up, again when the recording
# describes them) while 50 more join, one every 20 ms (the rescans find them)
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
assert len(described) >= 200 + int(sys.argv[2]), (len(described), sys.argv[2])
print("ok: the capture describes %d sandboxed processes as org.hostile.App" % len(described))
EOF

[ "$gets" -ge 20 ] || fail "only $gets Gets while ListTargets parsed: nothing measured"
[ "$gets2" -ge 20 ] || fail "only $gets2 Gets while the recording ran: nothing measured"
awk -v m="$max_ms" 'BEGIN { exit !(m < 100) }' ||
        fail "Properties.Get took $max_ms ms while ListTargets parsed hostile /.flatpak-info files (must be < 100 ms)"
awk -v m="$max2_ms" 'BEGIN { exit !(m < 100) }' ||
        fail "Properties.Get took $max2_ms ms while a recording parsed hostile /.flatpak-info files (must be < 100 ms)"
echo "ok: the service answered within 100 ms while it parsed $user's hostile files"
