#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# End to end, as an unprivileged user through periscoped on a private system
# bus with a real polkitd (no rule grants org.periscope.profile-system to that
# user): periscope-ns runs a rootless Podman container whose workload runs as
# container uid 1000 (one of periscope-ns's sub-uids on the host) plus a
# second workload process as container root (periscope-ns's own uid).
# - ListTargets as periscope-ns lists that container with both pids (and the
#   sub-uid process as a target), not another user's container;
# - `periscope record --container NAME` as periscope-ns records both, and
#   >= 95% of their samples carry the right function names, and not the
#   other user's container of the same name; `-p SUBUID-PID` works too;
# - the same user asking for another user's rootless container, or for a
#   root-owned process, is denied with the reason and the polkit action.
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
: "${PERISCOPE:?}" "${PERISCOPED:?}"
need podman runc fuse-overlayfs runuser busctl dbus-daemon nm python3
[ -x /bin/busybox ] || fail "busybox missing: apt-get install -y busybox-static"
. "$here/../lib/private-bus.sh"
cleanup private_bus_stop

user=periscope-ns other=periscope-ns2
for u in $user $other; do
        id -u $u >/dev/null 2>&1 || fail "user $u missing: run scripts/setup.d/60-containers.sh (./test.sh does)"
done
uid=$(id -u $user) other_uid=$(id -u $other)
[ -f /usr/share/polkit-1/actions/org.periscope.policy ] ||
        fail "polkit action org.periscope.profile-system not installed: run scripts/setup.d/30-periscope-users.sh"
if grep -rqs "$user\"" /etc/polkit-1/rules.d/; then
        fail "a polkit rule names $user: this test needs a user that polkit does not authorize"
fi
podman_as() { # user, podman args…
        local u=$1; shift
        runuser -u "$u" -- env XDG_RUNTIME_DIR=/run/user/$(id -u "$u") \
                CONTAINERS_CONF=/home/$u/.config/containers/containers.conf podman "$@"
}
cd /

build_spin "$WORK/spin"
make_rootfs "$WORK/rootfs" "$WORK/spin"
# The other user's containers only sleep (no CPU taken from parallel tests).
cp /bin/busybox "$WORK/rootfs/bin/busybox"
ln -s busybox "$WORK/rootfs/bin/sleep"
name=periscope-test-ns-$$ other_name=periscope-test-ns2-$$
image=$(podman_import "runuser -u $user -- env XDG_RUNTIME_DIR=/run/user/$uid CONTAINERS_CONF=/home/$user/.config/containers/containers.conf" \
        "$WORK/rootfs" localhost/periscope-test-spin)
other_image=$(podman_import "runuser -u $other -- env XDG_RUNTIME_DIR=/run/user/$other_uid CONTAINERS_CONF=/home/$other/.config/containers/containers.conf" \
        "$WORK/rootfs" localhost/periscope-test-spin)
# The workload's debug info names this run's temporary directory, so every
# run imports a new image: remove it again (after the containers).
cleanup "podman_as $user rmi -f $image"
cleanup "podman_as $other rmi -f $other_image"

# The caller's container: the workload as container uid 1000 (a sub-uid on
# the host), then a second one as container root (the caller's own uid).
cleanup "podman_as $user rm -f -t 0 $name"
podman_as $user run -d --network none --user 1000:1000 --name "$name" "$image" /bin/app >/dev/null 2>"$WORK/run.err" ||
        { cat "$WORK/run.err"; fail "rootless podman run --user 1000 failed"; }
podman_as $user exec -d --user 0 "$name" /bin/app 2>"$WORK/exec.err" ||
        { cat "$WORK/exec.err"; fail "podman exec --user 0 failed"; }
sub_pid=$(podman_as $user inspect -f '{{.State.Pid}}' "$name")
[ "$sub_pid" -gt 0 ] || fail "no pid for $name"
sub_uid=$(awk '/^Uid:/ { print $3 }' /proc/$sub_pid/status)
[ "$sub_uid" != "$uid" ] && [ "$sub_uid" != 0 ] || fail "the workload runs as host uid $sub_uid, not as a sub-uid of $user"
root_pid=
for _ in $(seq 50); do
        root_pid=$(pgrep -u "$uid" -x app || true)
        [ -n "$root_pid" ] && break
        sleep 0.1
done
[ -n "$root_pid" ] && [ "$(wc -w <<<"$root_pid")" = 1 ] || fail "not one container-root workload process: '$root_pid'"
echo "ok: $name: workload pid $sub_pid as host uid $sub_uid (container uid 1000), pid $root_pid as uid $uid (container root)"

# Another user's rootless containers (one with the same name as the
# caller's: rootless names are per user), and a root-owned process.
cleanup "podman_as $other rm -f -t 0 $other_name"
cleanup "podman_as $other rm -f -t 0 $name"
for n in "$other_name" "$name"; do
        podman_as $other run -d --network none --user 1000:1000 --name "$n" "$other_image" /bin/sleep 600 >/dev/null 2>"$WORK/run2.err" ||
                { cat "$WORK/run2.err"; fail "rootless podman run as $other failed"; }
done
other_pid=$(podman_as $other inspect -f '{{.State.Pid}}' "$other_name")
twin_pid=$(podman_as $other inspect -f '{{.State.Pid}}' "$name")
sleep 60 &
root_proc=$!
cleanup "kill $root_proc"

private_bus_start || fail "no private bus"
private_polkit_start || fail "no polkitd"
private_periscoped_start || fail "periscoped did not start"
out=$WORK/out
mkdir "$out" && chown $user: "$out"

# ListTargets as the caller: its container with both pids, nobody else's.
as_user busctl --json=short call org.periscope.Profiler1 /org/periscope/Profiler1 org.periscope.Profiler1 ListTargets \
        >"$WORK/targets.json" || fail "ListTargets as $user failed"
python3 - "$WORK/targets.json" "$name" "$other_name" "$uid" "$sub_pid" "$root_pid" "$other_pid" "$root_proc" "$twin_pid" <<'PY' ||
import json, sys
path, name, other_name = sys.argv[1:4]
uid, sub_pid, root_pid, other_pid, root_proc, twin_pid = map(int, sys.argv[4:10])
targets = [{k: x["data"] for k, x in t.items()} for t in json.load(open(path))["data"][0]]
mine = [t for t in targets if t.get("kind") == "container" and t.get("name") == name]
assert len(mine) == 1, "container %s not listed once: %r" % (name, targets)
t = mine[0]
assert t["engine"] == "podman" and t["owner-uid"] == uid, t
assert sub_pid in t["pids"] and root_pid in t["pids"], "pids %r lack %d or %d" % (t["pids"], sub_pid, root_pid)
print("ok: ListTargets as uid %d lists %s with pids %s" % (uid, name, t["pids"]))
procs = {t["pid"]: t for t in targets if t.get("kind") == "process"}
assert sub_pid in procs, "the sub-uid process %d is not a target" % sub_pid
others = [t for t in targets if t.get("kind") == "container" and t.get("owner-uid") != uid]
assert not others, "other users' containers listed: %r" % others
for p in (other_pid, root_proc, twin_pid):
    assert p not in procs and not any(p in t.get("pids", []) for t in targets), "pid %d of another user listed" % p
print("ok: no other user's container or process listed (%s pid %d, %s's namesake pid %d, root's pid %d)" % (other_name, other_pid, name, twin_pid, root_proc))
PY
        fail "ListTargets as $user is wrong"

# Recording its own container (not the other user's namesake): both
# processes, the right names.
as_user "$PERISCOPE" record --container="$name" --duration=2 -o "$out/c.syscap" 2>"$WORK/rec.err" ||
        { cat "$WORK/rec.err" "$PRIVATE_BUS_DIR/periscoped.log"; fail "$user could not record its own rootless container"; }
"$PERISCOPE" dump --json "$out/c.syscap" >"$WORK/c.json" || fail "periscope dump failed"
CAPTURE="$out/c.syscap" python3 "$here/check-container-capture.py" "$WORK/c.json" all:2 podman "$name" "$uid" "$WORK/spin" /bin/app resolver \
        "/home/$user/.local/share/containers/storage/overlay/" || fail "capture check failed"
python3 - "$WORK/c.json" "$twin_pid" "$sub_pid" "$root_pid" <<'PY' || fail "the capture has the wrong processes"
import json, sys
d = json.load(open(sys.argv[1]))
sampled = {f["pid"] for f in d["frames"] if f["type"] == "SAMPLE"}
twin = int(sys.argv[2])
for p in map(int, sys.argv[3:]):
    assert p in sampled, "no samples of pid %d" % p
assert twin not in {f["pid"] for f in d["frames"]}, "the other user's namesake container (pid %d) was recorded" % twin
print("ok: samples of the sub-uid process and of the container-root process, none of the other user's namesake")
PY

# The pids option with the sub-uid process alone.
as_user "$PERISCOPE" record -p "$sub_pid" --duration=1 -o "$out/p.syscap" 2>"$WORK/recp.err" ||
        { cat "$WORK/recp.err"; fail "$user could not record its container's sub-uid process $sub_pid with -p"; }
"$PERISCOPE" dump --json "$out/p.syscap" >"$WORK/p.json" || fail "periscope dump failed"
CAPTURE="$out/p.syscap" python3 "$here/check-container-capture.py" "$WORK/p.json" "$sub_pid" podman "$name" "$uid" "$WORK/spin" /bin/app resolver ||
        fail "capture check (-p) failed"

# Another user's rootless container and root's process: denied, with why
# and what to do.
if as_user "$PERISCOPE" record --container="$other_name" --duration=1 -o "$out/x.syscap" 2>"$WORK/deny1.err"; then
        fail "$user recorded $other's container $other_name"
fi
cat "$WORK/deny1.err"
grep -q "recording container '$other_name' (its process [0-9]* is not yours.*polkit denied action org.periscope.profile-system" "$WORK/deny1.err" ||
        fail "no clear denial for another user's container"
if as_user "$PERISCOPE" record -p "$root_proc" --duration=1 -o "$out/y.syscap" 2>"$WORK/deny2.err"; then
        fail "$user recorded root's process $root_proc"
fi
cat "$WORK/deny2.err"
grep -q "recording process $root_proc (not yours to record, or it does not exist).*polkit denied action org.periscope.profile-system" "$WORK/deny2.err" ||
        fail "no clear denial for root's process"
! grep -qE "Sanitizer|runtime error:" "$PRIVATE_BUS_DIR/periscoped.log" || { cat "$PRIVATE_BUS_DIR/periscoped.log"; fail "memory errors in periscoped"; }
echo "PASS"
