#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# End to end: `periscope record --container NAME` follows processes that
# JOIN a rootful Podman container from outside during the recording. The
# container's only process sleeps; after the recording started, `podman
# exec` runs the workload in it, plus a shell that forks all the time, and a
# host process with other function names starts too. After Stop (SIGINT):
# the exec'd workload is in the capture, described as that container, with
# >= 95% of its samples carrying main;hot_outer;hot_inner; the host process
# has no sample and no frame; the shell's children are followed by inherit
# and none is attached a second time by a rescan; periscope.stats and the
# summary count the joined ones. Then the container is killed during a
# second recording (periscoped on a private system bus): its Processes
# property grows with a joined process, and with one that joins while the
# perf opener is stopped (SIGSTOP: Version is answered meanwhile, the join
# completes after SIGCONT); it goes on until Stop and says the container
# stopped.
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
: "${PERISCOPE:?}" "${PERISCOPED:?}"
need podman runc nm python3 pgrep busctl dbus-daemon ss
[ -x /bin/busybox ] || fail "busybox missing: apt-get install -y busybox-static"

spin_sh_image
name=periscope-test-join-$$
cleanup "podman rm -f -t 0 $name"
podman run -d --network none --name "$name" "$image" /bin/sleep 1000 >/dev/null 2>"$WORK/run.err" ||
        { cat "$WORK/run.err"; fail "podman run failed"; }
main_pid=$(podman inspect -f '{{.State.Pid}}' "$name")

# A host process, not in the container, with names of its own.
sed 's/hot_/outside_/g' "$WORK/spin.c" >"$WORK/outside.c"
gcc -O0 -g -fno-omit-frame-pointer -o "$WORK/outside" "$WORK/outside.c" || fail "cannot build the host workload"

export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$WORK/no-such-bus
# Starts `periscope record --private --container` in the background and
# waits until periscoped says the recording started.
start_recording() { # capture, log
        PERISCOPED="$PERISCOPED" "$PERISCOPE" record --private --container="$name" -o "$1" 2>"$2" &
        rec=$!
        wait_for 30 grep -q "recording .* started" "$2" || { cat "$2"; fail "the recording did not start"; }
}

start_recording "$WORK/c.syscap" "$WORK/rec.err"
# Joins the container from outside: not a descendant of any recorded process.
podman exec -d "$name" /bin/app >"$WORK/exec.out" 2>&1 || { cat "$WORK/exec.out"; fail "podman exec failed"; }
# A joined shell that forks all the time: its children inherit its events,
# the rescans must not attach them a second time.
podman exec -d "$name" /bin/sh -c 'while :; do sleep 0.02; done' >"$WORK/exec2.out" 2>&1 || { cat "$WORK/exec2.out"; fail "podman exec failed"; }
"$WORK/outside" &
outside=$!
cleanup "kill $outside"
cid=$(podman inspect -f '{{.Id}}' "$name")
app_pid=
for _ in $(seq 100); do
        for p in $(pgrep -x app || true); do
                grep -q "libpod-$cid" "/proc/$p/cgroup" 2>/dev/null && app_pid=$p
        done
        [ -n "$app_pid" ] && break
        sleep 0.05
done
[ -n "$app_pid" ] || fail "the exec'd workload did not start"
sleep 2.5
stop_recording "$WORK/rec.err"
kill $outside
grep -q "process .* joined container '$name'" "$WORK/rec.err" || { cat "$WORK/rec.err"; fail "periscoped did not log the joined process"; }
grep -q "of them joined the container during the recording" "$WORK/rec.err" ||
        { cat "$WORK/rec.err"; fail "the summary does not count the joined process"; }
echo "ok: $(grep "joined the container" "$WORK/rec.err")"

"$PERISCOPE" dump --json "$WORK/c.syscap" >"$WORK/c.json" || fail "periscope dump failed"
SINCE_EXEC=1 CAPTURE="$WORK/c.syscap" python3 "$here/check-container-capture.py" "$WORK/c.json" "$app_pid" podman "$name" 0 "$WORK/spin" /bin/app map_files \
        /var/lib/containers/storage/overlay/ || fail "capture check of the exec'd workload failed"
grep -o "process [0-9]* (.*) joined" "$WORK/rec.err" | awk '{ print $2 }' >"$WORK/joined.txt"
python3 "$here/check-host-process-absent.py" "$WORK/c.json" "$outside" || fail "capture contents"
python3 - "$WORK/c.json" "$outside" "$main_pid" "$app_pid" "$WORK/joined.txt" <<'PY' || fail "capture contents"
import json, sys
d = json.load(open(sys.argv[1]))
outside, main_pid, app_pid = map(int, sys.argv[2:5])
joined = set(map(int, open(sys.argv[5]).read().split()))
frames = d["frames"]
def fail(m):
    print("FAIL:", m, file=sys.stderr); sys.exit(1)
# Both the sleeping main process (at start) and the exec'd one (joined).
procs = {f["pid"]: f["cmdline"] for f in frames if f["type"] == "PROCESS"}
for pid, what in ((main_pid, "/bin/sleep"), (app_pid, "/bin/app")):
    if what not in procs.get(pid, ""):
        fail("no PROCESS frame %s for pid %d: %r" % (what, pid, procs.get(pid)))
print("ok: PROCESS frames: %d %s, %d %s" % (main_pid, procs[main_pid], app_pid, procs[app_pid]))
# The joined shell's children came through inherit (FORK frames), and none
# of them was attached again by a rescan (its samples would count twice).
children = {f["child_pid"] for f in frames if f["type"] == "FORK"}
if len(children) < 10:
    fail("only %d FORK frames: the joined shell's children were not followed" % len(children))
if children & joined:
    fail("pids both inherited and joined (events twice): %r" % sorted(children & joined))
if app_pid not in joined:
    fail("the exec'd workload %d is not among the joined pids %r" % (app_pid, sorted(joined)))
print("ok: %d joined pids, %d children followed by inherit, none attached twice" % (len(joined), len(children)))
stats = [f["metadata"] for f in frames if f["type"] == "METADATA" and f["id"] == "periscope.stats"]
if not stats:
    fail("no periscope.stats")
kv = dict(l.split("=", 1) for l in stats[-1].splitlines() if "=" in l)
if int(kv.get("container_joined", 0)) < 1 or int(kv.get("processes", 0)) < 2 or kv.get("container_stopped") != "false":
    fail("periscope.stats: %r" % kv)
print("ok: periscope.stats processes=%s container_joined=%s container_stopped=%s" %
      (kv["processes"], kv["container_joined"], kv["container_stopped"]))
PY
"$PERISCOPE" report --folded --no-progress "$WORK/c.syscap" >"$WORK/folded.txt" || fail "periscope report failed"
! grep -q outside_ "$WORK/folded.txt" || fail "samples of the host process are in the report"
echo "ok: no outside_* function in the report"

# The container stops during the recording: the recording goes on until
# Stop. Through periscoped on a private system bus, to read the recording's
# Processes property while it records.
# The forking shell of the first part ends first: only the exec may change
# the count.
for p in $(pgrep -x sh || true); do grep -qs "libpod-$cid" "/proc/$p/cgroup" && kill "$p"; done
. "$here/../lib/private-bus.sh"
cleanup private_bus_stop
private_bus_start || fail "no private bus"
private_periscoped_start || fail "periscoped did not start"
log=$PRIVATE_BUS_DIR/periscoped.log
"$PERISCOPE" record --container="$name" -o "$WORK/s.syscap" 2>"$WORK/rec2.err" &
rec=$!
wait_for 30 grep -q "recording .* started" "$log" || { cat "$log" "$WORK/rec2.err"; fail "the recording did not start"; }
recording=$(busctl --system --list tree org.periscope.Profiler1 | grep -m1 '^/org/periscope/Recording/')
processes() { busctl --system get-property org.periscope.Profiler1 "$recording" org.periscope.Recording1 Processes | awk '{ print $2 }'; }
before=$(processes)
podman exec -d "$name" /bin/app >/dev/null 2>&1 || fail "podman exec failed"
after=$before
for _ in $(seq 100); do after=$(processes); [ "$after" -gt "$before" ] && break; sleep 0.05; done
[ "$after" -gt "$before" ] || { cat "$log"; fail "Processes stayed $before after podman exec"; }
echo "ok: Processes property $before before podman exec, $after after"
# A process joining while the perf opener is stopped: its events wait for
# it on the recording's attach fiber, and periscoped answers meanwhile.
daemon=$(busctl --system call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus \
        GetConnectionUnixProcessID s org.periscope.Profiler1 | awk '{ print $2 }')
opener=
for c in $(tr -s ' ' '\n' </proc/"$daemon"/task/"$daemon"/children); do
        [ "$(cat /proc/"$c"/comm 2>/dev/null)" = periscoped ] && opener="$opener $c"
done
[ "$(echo $opener | wc -w)" = 1 ] || fail "periscoped $daemon should have one periscoped child, its perf opener: '$opener'"
opener=$(echo $opener)
opener_queued() { ss -x -a -p 2>/dev/null | awk -v p="pid=$opener," 'index($0, p) { print $3; exit }'; }
request_queued() { [ "$(opener_queued)" -gt 0 ] 2>/dev/null; }
before=$after
kill -STOP "$opener"
podman exec -d "$name" /bin/app >/dev/null 2>&1 || { kill -CONT "$opener"; fail "podman exec failed"; }
wait_for 10 request_queued || { kill -CONT "$opener"; cat "$log"; fail "the joining process's request never reached the stopped perf opener"; }
busctl --system get-property org.periscope.Profiler1 /org/periscope/Profiler1 org.periscope.Profiler1 Version >/dev/null ||
        { kill -CONT "$opener"; fail "Version was not answered while a joining process waits for the stopped opener"; }
[ "$(awk '{ print $3 }' /proc/"$opener"/stat)" = T ] || fail "the perf opener is no longer stopped: it was given up"
echo "ok: a process joining while the perf opener is stopped waits for it; Version answered meanwhile"
kill -CONT "$opener"
for _ in $(seq 100); do after=$(processes); [ "$after" -gt "$before" ] && break; sleep 0.05; done
[ "$after" -gt "$before" ] || { cat "$log"; fail "Processes stayed $before after the stopped opener went on"; }
echo "ok: after SIGCONT the joining process is recorded: Processes $before, then $after"
sleep 1
podman kill "$name" >/dev/null 2>&1 || fail "podman kill failed"
wait_for 5 grep -q "container '$name' has no process left" "$log" || { cat "$log"; fail "periscoped did not notice the stopped container"; }
sleep 0.5
kill -0 $rec || fail "the recording ended with the container"
[ "$(busctl --system get-property org.periscope.Profiler1 "$recording" org.periscope.Recording1 State)" = 's "recording"' ] ||
        fail "the recording is not recording any more after the container stopped"
stop_recording "$WORK/rec2.err"
! grep -qE "Sanitizer|runtime error:" "$log" || { cat "$log"; fail "memory errors in periscoped"; }
grep -q "(ended: stopped)" "$WORK/rec2.err" || { cat "$WORK/rec2.err"; fail "the recording did not run until Stop"; }
grep -q "the container had no process left at the end" "$WORK/rec2.err" || { cat "$WORK/rec2.err"; fail "the summary does not say the container stopped"; }
"$PERISCOPE" dump --json "$WORK/s.syscap" | python3 -c '
import json, sys
d = json.load(sys.stdin)
kv = dict(l.split("=", 1) for f in d["frames"] if f["type"] == "METADATA" and f["id"] == "periscope.stats" for l in f["metadata"].splitlines() if "=" in l)
assert kv.get("container_stopped") == "true" and kv.get("reason") == "stopped" and int(kv.get("container_joined", 0)) >= 1, kv
n = sum(1 for f in d["frames"] if f["type"] == "SAMPLE")
assert n >= 20, n
print("ok: container stopped during the recording: reason=%s container_stopped=%s, %d samples" % (kv["reason"], kv["container_stopped"], n))' ||
        fail "stats of the recording whose container stopped"
echo "PASS"
