#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# End to end: `periscope record --container APP-ID` follows processes that
# join a Flatpak app during the recording.
# 1. The app is installed but not running: the recording waits, and a
#    `flatpak run` during it is recorded (>= 95% right names).
# 2. The app's only instance sleeps; during the recording: `flatpak enter
#    INSTANCE` runs the workload in it, a second `flatpak run` starts another
#    instance, a host shell waits a second (seen by the rescans as a host
#    process) and then enters the sandbox in place (`nsenter -m -r`, as
#    flatpak enter does) and execs the workload under the same pid (added
#    because the rescan looks again when a command changes), and a host
#    process with other function names starts. After Stop (SIGINT): the
#    three workload processes are described as the app (instance ids, its
#    /.flatpak-info), >= 95% of the samples of each carry
#    main;hot_outer;hot_inner; the host process has no frame;
#    periscope.stats counts the joined processes.
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
: "${PERISCOPE:?}" "${PERISCOPED:?}"
need flatpak pgrep nm python3
[ -x /bin/busybox ] || fail "busybox missing: apt-get install -y busybox-static"

app_id=org.periscope.FollowApp$$
build_spin "$WORK/spin"
flatpak_install_spin_app $app_id org.periscope.FollowPlatform$$ periscope-follow-$$ "$WORK/spin" joinapp
sed 's/hot_/outside_/g' "$WORK/spin.c" >"$WORK/outside.c"
gcc -O0 -g -fno-omit-frame-pointer -o "$WORK/outside" "$WORK/outside.c" || fail "cannot build the host workload"

# The pids of the processes named comm inside this app's sandboxes.
app_pids() { # comm
        local p
        for p in $(pgrep -x "$1" || true); do
                grep -qs "^name=$app_id$" "/proc/$p/root/.flatpak-info" && echo "$p"
        done
        return 0
}
kill_app() {
        local p
        for p in $(app_pids joinapp) $(app_pids sleep); do kill "$p"; done
}
cleanup kill_app

export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$WORK/no-such-bus
# First the app installed but not running: the recording waits for it, and
# `flatpak run` during the recording is recorded from its start.
PERISCOPED="$PERISCOPED" "$PERISCOPE" record --private --container=$app_id -o "$WORK/w.syscap" 2>"$WORK/rec-w.err" &
rec=$!
wait_for 30 grep -q "recording .* started" "$WORK/rec-w.err" || true
grep -q "container '$app_id' does not run now; its processes are added when it starts" "$WORK/rec-w.err" ||
        { cat "$WORK/rec-w.err"; fail "the recording of the installed app did not start waiting for it"; }
flatpak run $app_id >"$WORK/run0.log" 2>&1 &
for _ in $(seq 200); do [ -n "$(app_pids joinapp)" ] && break; sleep 0.05; done
[ -n "$(app_pids joinapp)" ] || { cat "$WORK/run0.log"; fail "flatpak run did not start the app"; }
sleep 2
stop_recording "$WORK/rec-w.err" "periscope record --container of the installed app"
"$PERISCOPE" dump --json "$WORK/w.syscap" >"$WORK/w.json" || fail "periscope dump failed"
SINCE_EXEC=1 CAPTURE="$WORK/w.syscap" python3 "$here/check-container-capture.py" "$WORK/w.json" all:1 flatpak $app_id 0 "$WORK/spin" /app/bin/joinapp map_files ||
        fail "capture check of the app started during the recording failed"
kill_app

flatpak run --command=sleep $app_id 1000 >"$WORK/run.log" 2>&1 &
sleeper=
for _ in $(seq 200); do sleeper=$(app_pids sleep | head -1); [ -n "$sleeper" ] && break; sleep 0.05; done
[ -n "$sleeper" ] || { cat "$WORK/run.log"; fail "the app did not start"; }
# The sleeping instance: the one of the app whose wrapper lives (flatpak ps
# may still list the instance of the first part, killed a moment ago).
instance=
for _ in $(seq 100); do
        instance=$(flatpak ps --columns=instance,pid,application | awk -v a=$app_id '$3 == a { print $1, $2 }' |
                while read -r i p; do kill -0 "$p" 2>/dev/null && { echo "$i"; break; }; done)
        [ -n "$instance" ] && break
        sleep 0.05
done
[ -n "$instance" ] || { flatpak ps; fail "flatpak ps does not list the instance"; }

PERISCOPED="$PERISCOPED" "$PERISCOPE" record --private --container=$app_id -o "$WORK/c.syscap" 2>"$WORK/rec.err" &
rec=$!
wait_for 30 grep -q "recording .* started" "$WORK/rec.err" || { cat "$WORK/rec.err"; fail "the recording did not start"; }

# Into the running sandbox with `flatpak enter`, and a second instance of
# the app. Then a process that is a host shell for a second (the rescans see
# it, not a member) and enters the sandbox in place, as `flatpak enter`
# does (its mount namespace and root), then execs the workload: same pid,
# so the rescan must look at it again when its command changes.
flatpak enter "$instance" /app/bin/joinapp >"$WORK/enter.log" 2>&1 &
sh -c 'sleep 1; exec nsenter -t "$1" -m -r -w /app/bin/joinapp' sh "$sleeper" >"$WORK/nsenter.log" 2>&1 &
enter_pid=$!
flatpak run $app_id >"$WORK/run2.log" 2>&1 &
"$WORK/outside" &
outside=$!
cleanup "kill $outside"
for _ in $(seq 200); do [ "$(app_pids joinapp | wc -l)" -ge 3 ] && break; sleep 0.05; done
[ "$(app_pids joinapp | wc -l)" -ge 3 ] || { cat "$WORK/enter.log" "$WORK/run2.log"; fail "flatpak enter / the second flatpak run did not start the workload"; }
# The in-place joiner is seen at a rescan's second look (about a second; more
# on a loaded machine under ASan): wait for all three to be logged (at most
# 15 s), then give them two seconds of samples.
for _ in $(seq 300); do
        [ "$(grep -c "process .* joined container '$app_id'" "$WORK/rec.err")" -ge 3 ] && break
        sleep 0.05
done
sleep 2
kill -INT $rec
st=0; wait $rec || st=$?
# Ctrl-C ends a recording with 130, its capture complete
[ $st = 130 ] || { cat "$WORK/rec.err"; fail "periscope record --container failed (exit $st after SIGINT, want 130)"; }
kill $outside
! grep -qE "Sanitizer|runtime error:" "$WORK/rec.err" || { cat "$WORK/rec.err"; fail "memory errors in periscoped"; }
[ "$(grep -c "process .* joined container '$app_id'" "$WORK/rec.err")" -ge 3 ] ||
        { cat "$WORK/rec.err"; fail "periscoped did not log three joined processes"; }
grep -q "process $enter_pid (.*) joined container '$app_id'" "$WORK/rec.err" ||
        { cat "$WORK/rec.err"; fail "the host shell $enter_pid that entered the sandbox in place was not added"; }
echo "ok: $(grep "process $enter_pid " "$WORK/rec.err")"

"$PERISCOPE" dump --json "$WORK/c.syscap" >"$WORK/c.json" || fail "periscope dump failed"
SINCE_EXEC=1 CAPTURE="$WORK/c.syscap" python3 "$here/check-container-capture.py" "$WORK/c.json" all:3 flatpak $app_id 0 "$WORK/spin" /app/bin/joinapp map_files ||
        { cat "$WORK/rec.err"; fail "capture check of the joined workloads failed"; }
python3 "$here/check-host-process-absent.py" "$WORK/c.json" "$outside" || fail "capture contents"
python3 - "$WORK/c.json" "$outside" "$sleeper" "$app_id" "$instance" <<'PY' || fail "capture contents"
import base64, json, sys
d = json.load(open(sys.argv[1]))
outside, sleeper = int(sys.argv[2]), int(sys.argv[3])
app_id, instance = sys.argv[4], sys.argv[5]
frames = d["frames"]
def fail(m):
    print("FAIL:", m, file=sys.stderr); sys.exit(1)
workers = sorted({f["pid"] for f in frames if f["type"] == "MAP" and f["filename"] == "/app/bin/joinapp"})
ids = {}
for pid in workers + [sleeper]:
    desc = b"".join(base64.b64decode(f["data_base64"]) for f in frames
                    if f["type"] == "FILE_CHUNK" and f["path"] == "periscope:container" and f["pid"] == pid).decode()
    kv = dict(l.split("=", 1) for l in desc.splitlines() if "=" in l)
    info = b"".join(base64.b64decode(f["data_base64"]) for f in frames
                    if f["type"] == "FILE_CHUNK" and f["path"] == "/.flatpak-info" and f["pid"] == pid)
    if kv.get("name") != app_id or b"name=" + app_id.encode() not in info:
        fail("pid %d: container %r, /.flatpak-info %r" % (pid, kv, info[:100]))
    ids[pid] = kv["id"]
# Two workers entered the sleeping instance, the other is a new instance.
if ids[sleeper] != instance or sorted(ids[p] == instance for p in workers) != [False, True, True]:
    fail("instances: sleeper %s, workers %r (entered instance %s)" % (ids[sleeper], ids, instance))
print("ok: instances: %r (the sleeping one: %s)" % (ids, instance))
kv = dict(l.split("=", 1) for f in frames if f["type"] == "METADATA" and f["id"] == "periscope.stats"
          for l in f["metadata"].splitlines() if "=" in l)
if int(kv.get("container_joined", 0)) < 3:
    fail("periscope.stats: %r" % kv)
print("ok: periscope.stats processes=%s container_joined=%s" % (kv["processes"], kv["container_joined"]))
PY
"$PERISCOPE" report --folded --no-progress "$WORK/c.syscap" >"$WORK/folded.txt" || fail "periscope report failed"
! grep -q outside_ "$WORK/folded.txt" || fail "samples of the host process are in the report"
echo "ok: no outside_* function in the report"
echo "PASS"
