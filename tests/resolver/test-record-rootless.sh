#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# End to end: `periscope record -p PID` (private periscoped) of a process in
# a rootless fuse-overlayfs Podman container. Root cannot read its files
# through /proc, so the service must pin them through the resolver (user's
# store, identity checked), describe the container in the capture
# (periscope:container chunk, OVERLAY layers), and >= 95% of the samples must
# symbolize to the right functions from the recorded addresses.
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
: "${PERISCOPE:?}" "${PERISCOPED:?}"
need podman runc fuse-overlayfs runuser nm python3
rootless_user periscope-rl
cd /

build_spin "$WORK/spin"
make_rootfs "$WORK/rootfs" "$WORK/spin"
image=$(podman_import "$as_user" "$WORK/rootfs" localhost/periscope-test-spin)
name=periscope-test-record-rl-$$
$as_user podman run -d --network none --name "$name" "$image" >/dev/null 2>"$WORK/run.err" || { cat "$WORK/run.err"; fail "rootless podman run failed"; }
cleanup "$as_user podman rm -f -t 0 $name"
pid=$($as_user podman inspect -f '{{.State.Pid}}' "$name")
[ "$pid" -gt 0 ] || fail "no pid for $name"

export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$WORK/no-such-bus
PERISCOPED="$PERISCOPED" "$PERISCOPE" record --private -p "$pid" --duration=1 -o "$WORK/c.syscap" 2>"$WORK/rec.err" ||
        { cat "$WORK/rec.err"; fail "periscope record failed"; }
! grep -qE "Sanitizer|runtime error:" "$WORK/rec.err" || { cat "$WORK/rec.err"; fail "memory errors in periscoped"; }
"$PERISCOPE" dump --json "$WORK/c.syscap" >"$WORK/c.json" || fail "periscope dump failed"
CAPTURE="$WORK/c.syscap" python3 "$here/check-container-capture.py" "$WORK/c.json" "$pid" podman "$name" "$uid" "$WORK/spin" /bin/app resolver \
        "/home/$user/.local/share/containers/storage/overlay/" || fail "capture check failed"
echo "PASS"
