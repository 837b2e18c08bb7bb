#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A process may call itself conmon and say `-c ID` (prctl, argv), and its
# children may say container=podman, but it cannot fake its uid: an
# unprivileged user's fake conmon claiming a rootful container's id must not
# make its child a process of that container (which `record --container`
# would then sample into root's capture), while the container's real
# processes stay listed.
source "$(dirname "$0")/lib.sh"
: "${FAKE_CONMON:?}"
need podman runc runuser
user=periscope-rl
id -u "$user" >/dev/null 2>&1 || fail "user $user missing: run scripts/setup.d/60-containers.sh"
cd /

build_spin "$WORK/spin"
make_rootfs "$WORK/rootfs" "$WORK/spin"
image=$(podman_import "" "$WORK/rootfs" localhost/periscope-test-spin)
name=periscope-test-fake-conmon-$$
cleanup "podman rm -f -t 0 $name"
podman run -d --network none --name "$name" "$image" >/dev/null 2>"$WORK/run.err" || { cat "$WORK/run.err"; fail "podman run failed"; }
cid=$(podman inspect -f '{{.Id}}' "$name")
pid=$(podman inspect -f '{{.State.Pid}}' "$name")
[ "$pid" -gt 0 ] || fail "no pid for $name"

mkdir -p "$WORK/bin"
install -m 755 "$FAKE_CONMON" "$WORK/bin/conmon"
chmod a+rx "$WORK" "$WORK/bin"
runuser -u "$user" -- "$WORK/bin/conmon" -c "$cid" >"$WORK/fake.out" 2>/dev/null </dev/null &
wait_for 5 test -s "$WORK/fake.out" || true
child=$(cat "$WORK/fake.out")
[ -n "$child" ] && [ -d "/proc/$child" ] || fail "the fake conmon's child did not start"
cleanup "kill $child 2>/dev/null"  # the fake conmon exits with it
tr '\0' '\n' <"/proc/$child/environ" | grep >/dev/null -x container=podman || fail "the child does not say container=podman"

out=$("$PERISCOPE_RESOLVE" --container="$cid") || fail "--container=$cid found nothing"
grep -qP "pids=(.*,)?$pid(,.*)?$" <<<"$out" || { echo "$out"; fail "the container's own process $pid is not listed"; }
if grep -qP "pids=(.*,)?$child(,.*)?$" <<<"$out"; then
        echo "$out"
        fail "the child $child of $user's fake conmon was counted as a process of root's container $name"
fi
echo "ok: a fake conmon run by $user does not place its child in root's container; the real process $pid is listed"
