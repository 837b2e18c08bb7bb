#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# End to end: `periscope record --container NAME` of a rootless
# fuse-overlayfs Podman container whose only process sleeps; during the
# recording its owner runs the workload in it with `podman exec`. Rootless
# containers have no cgroup of their own here: the exec'd process is known
# as the container's by its environment (container=podman) and conmon above
# it naming the container, which holds only from its exec on (before, it is
# runc's init; a rescan then looks again when its command changes). After
# Stop: the workload
# is described as that container (owner uid, OVERLAY layers from the
# user's store), its files pinned through the resolver, >= 95% of its
# samples carry main;hot_outer;hot_inner. Then the same with the owner, not
# root, recording through periscoped on a private system bus: its own
# container's joining process is followed on its own rights (user namespace
# ownership, no polkit).
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
: "${PERISCOPE:?}" "${PERISCOPED:?}"
need podman runc fuse-overlayfs runuser setpriv nm python3 pgrep dbus-daemon
[ -x /bin/busybox ] || fail "busybox missing: apt-get install -y busybox-static"
rootless_user periscope-rl
cd /

build_spin "$WORK/spin"
make_rootfs "$WORK/rootfs" "$WORK/spin"
cp /bin/busybox "$WORK/rootfs/bin/busybox"
ln -s busybox "$WORK/rootfs/bin/sleep"
image=$(podman_import "$as_user" "$WORK/rootfs" localhost/periscope-test-spin-sleep)
name=periscope-test-rl-join-$$
$as_user podman run -d --network none --name "$name" "$image" /bin/sleep 1000 >/dev/null 2>"$WORK/run.err" ||
        { cat "$WORK/run.err"; fail "rootless podman run failed"; }
cleanup "$as_user podman rm -f -t 0 $name"
cid=$($as_user podman inspect -f '{{.Id}}' "$name")

export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$WORK/no-such-bus
PERISCOPED="$PERISCOPED" "$PERISCOPE" record --private --container="$name" -o "$WORK/c.syscap" 2>"$WORK/rec.err" &
rec=$!
wait_for 30 grep -q "recording .* started" "$WORK/rec.err" || { cat "$WORK/rec.err"; fail "the recording did not start"; }
$as_user podman exec -d "$name" /bin/app >"$WORK/exec.out" 2>&1 || { cat "$WORK/exec.out"; fail "podman exec failed"; }
# The exec'd workload: an `app` whose parent is this container's conmon.
wait_exec_app "$cid" "the exec'd workload did not start"
sleep 2.5
stop_recording "$WORK/rec.err"
grep -q "process $app_pid (.*) joined container '$name'" "$WORK/rec.err" ||
        { cat "$WORK/rec.err"; fail "periscoped did not log the exec'd workload $app_pid as joined"; }
"$PERISCOPE" dump --json "$WORK/c.syscap" >"$WORK/c.json" || fail "periscope dump failed"
SINCE_EXEC=1 CAPTURE="$WORK/c.syscap" python3 "$here/check-container-capture.py" "$WORK/c.json" "$app_pid" podman "$name" "$uid" "$WORK/spin" /bin/app resolver \
        "/home/$user/.local/share/containers/storage/overlay/" || fail "capture check of the exec'd workload failed"

# The owner records on its own rights (periscoped as root on a private
# system bus, no polkitd: owning the container's user namespace is enough).
kill "$app_pid"
. "$here/../lib/private-bus.sh"
cleanup private_bus_stop
private_bus_start || fail "no private bus"
private_periscoped_start || fail "periscoped did not start"
log=$PRIVATE_BUS_DIR/periscoped.log
out=$WORK/out
mkdir "$out" && chown "$user:" "$out"
# exec_as_user execs in place (runuser would stay the parent and not pass SIGINT on).
exec_as_user "$PERISCOPE" record --container="$name" -o "$out/u.syscap" 2>"$WORK/rec-u.err" &
rec=$!
wait_for 30 grep -q "recording .* started for uid $uid" "$log" || { cat "$log" "$WORK/rec-u.err"; fail "the owner's recording did not start"; }
before=$( (pgrep -x app || true) | tr '\n' ' ')
$as_user podman exec -d "$name" /bin/app >"$WORK/exec.out" 2>&1 || { cat "$WORK/exec.out"; fail "podman exec failed"; }
wait_exec_app "$cid" "the second exec'd workload did not start" "$before"
sleep 2.5
kill -INT $rec
st=0; wait $rec || st=$?
# Ctrl-C ends a recording with 130, its capture complete
[ $st = 130 ] || { cat "$WORK/rec-u.err" "$log"; fail "the owner's periscope record --container failed (exit $st after SIGINT, want 130)"; }
! grep -qE "Sanitizer|runtime error:" "$log" || { cat "$log"; fail "memory errors in periscoped"; }
grep -q "process $app_pid (.*) joined container '$name'" "$log" ||
        { cat "$log"; fail "the owner's recording did not add its exec'd workload $app_pid"; }
! grep -q "not recorded" "$log" || { cat "$log"; fail "a process of the owner's container was refused"; }
"$PERISCOPE" dump --json "$out/u.syscap" >"$WORK/u.json" || fail "periscope dump failed"
SINCE_EXEC=1 CAPTURE="$out/u.syscap" python3 "$here/check-container-capture.py" "$WORK/u.json" "$app_pid" podman "$name" "$uid" "$WORK/spin" /bin/app resolver \
        "/home/$user/.local/share/containers/storage/overlay/" || fail "capture check of the owner's recording failed"
echo "PASS"
