#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# End to end: `periscope record --container NAME` of a rootful Podman
# container that exists but does not run (`podman create`): the recording
# starts and waits; `podman start` during the recording runs the workload,
# which is added by the rescans: described as that container, >= 95% of its
# samples carry main;hot_outer;hot_inner. A name that is neither running
# nor stopped nor an installed app is still refused.
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
: "${PERISCOPE:?}" "${PERISCOPED:?}"
need podman runc nm python3

build_spin "$WORK/spin"
make_rootfs "$WORK/rootfs" "$WORK/spin"
image=$(podman_import "" "$WORK/rootfs" localhost/periscope-test-spin)
name=periscope-test-start-$$
cleanup "podman rm -f -t 0 $name"
podman create --network none --name "$name" "$image" >/dev/null 2>"$WORK/create.err" || { cat "$WORK/create.err"; fail "podman create failed"; }

export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$WORK/no-such-bus
PERISCOPED="$PERISCOPED" "$PERISCOPE" record --private --container="$name" -o "$WORK/c.syscap" 2>"$WORK/rec.err" &
rec=$!
wait_for 30 grep -q "recording .* started" "$WORK/rec.err" || true
grep -q "container '$name' does not run now; its processes are added when it starts" "$WORK/rec.err" ||
        { cat "$WORK/rec.err"; fail "the recording of the stopped container did not start waiting for it"; }
podman start "$name" >/dev/null 2>"$WORK/start.err" || { cat "$WORK/start.err"; fail "podman start failed"; }
pid=$(podman inspect -f '{{.State.Pid}}' "$name")
[ "$pid" -gt 0 ] || fail "no pid for $name"
sleep 2.5
stop_recording "$WORK/rec.err"
# The rescan finds the workload itself, or a `runc init` that entered the
# container before it forked the workload (inherit then follows the child:
# a race seen on CI); either way the capture check below needs the
# workload's own container description and samples.
grep -qE "process [0-9]+ \(.*\) joined container '$name'" "$WORK/rec.err" ||
        { cat "$WORK/rec.err"; fail "no process of the started container was added"; }
"$PERISCOPE" dump --json "$WORK/c.syscap" >"$WORK/c.json" || fail "periscope dump failed"
SINCE_EXEC=1 CAPTURE="$WORK/c.syscap" python3 "$here/check-container-capture.py" "$WORK/c.json" "$pid" podman "$name" 0 "$WORK/spin" /bin/app map_files \
        /var/lib/containers/storage/overlay/ || fail "capture check of the started container failed"

if PERISCOPED="$PERISCOPED" "$PERISCOPE" record --private --container=no-such-container-$$ --duration=1 -o "$WORK/x.syscap" 2>"$WORK/nomatch.err"; then
        fail "recording an unknown container succeeded"
fi
grep -q "no running Podman container or Flatpak app matches 'no-such-container-$$', and no stopped container or installed app has that name" "$WORK/nomatch.err" ||
        { cat "$WORK/nomatch.err"; fail "no clear message for an unknown container"; }
echo "ok: unknown name refused: $(grep -o "option 'container'.*" "$WORK/nomatch.err" | head -c 160)"
echo "PASS"
