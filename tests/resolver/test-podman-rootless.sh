#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Rootless Podman with fuse-overlayfs: host root gets EACCES through
# /proc/PID/map_files and /proc/PID/root, so files must come from the user's
# store (~/.local/share/containers/storage), found through conmon's -c <id>
# and the layer chain, and accepted by identity (inode, fuse device aliased to
# the store's device).
source "$(dirname "$0")/lib.sh"
need podman runc fuse-overlayfs runuser
rootless_user periscope-rl
cd /

name=periscope-test-rootless-$$
rootless_spin_container "$name"
id=$($as_user podman inspect -f '{{.Id}}' "$name")
if cat "/proc/$pid/root/bin/app" >/dev/null 2>&1; then
        fail "root can read /proc/$pid/root/bin/app: this is not the fuse-overlayfs case the test is about"
fi

resolve "$WORK/out" "$WORK/copies" "$pid"
grep -qP "^container\tengine=podman\tid=$id\tname=$name\timage=$image\towner=$uid$" "$WORK/out" ||
        { cat "$WORK/out"; fail "container not classified as rootless podman $id $name (owner $uid)"; }
assert_resolved "$WORK/out" /bin/app podman "$WORK/spin" "$WORK/copies"
assert_resolved "$WORK/out" /usr/lib/x86_64-linux-gnu/libc.so.6 podman /usr/lib/x86_64-linux-gnu/libc.so.6 "$WORK/copies"
assert_resolved "$WORK/out" /lib64/ld-linux-x86-64.so.2 podman /lib64/ld-linux-x86-64.so.2 "$WORK/copies"
[[ "$(map_field "$WORK/out" /bin/app detail)" == *"map-files: Permission denied"* ]] || fail "map_files was expected to be denied"
[[ "$(map_field "$WORK/out" /bin/app host)" == /home/$user/.local/share/containers/storage/overlay/*/diff/bin/app ]] || fail "not from the user's store"
assert_listed "$name" "$pid" podman
echo "PASS"
