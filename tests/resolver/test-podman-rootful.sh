#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Rootful Podman: a container from a locally imported image. Every mapped file
# of its process must resolve to the right bytes, through /proc/PID/map_files,
# through the host's view of the overlay (mount translation), and through
# the storage's layer chain (overlay device aliased to the store's device).
source "$(dirname "$0")/lib.sh"
need podman runc

build_spin "$WORK/spin"
make_rootfs "$WORK/rootfs" "$WORK/spin"
image=$(podman_import "" "$WORK/rootfs" localhost/periscope-test-spin)
name=periscope-test-rootful-$$
cleanup "podman rm -f -t 0 $name"
podman run -d --network none --name "$name" "$image" >/dev/null 2>"$WORK/run.err" || { cat "$WORK/run.err"; fail "podman run failed"; }
pid=$(podman inspect -f '{{.State.Pid}}' "$name")
[ "$pid" -gt 0 ] || fail "no pid for $name"
id=$(podman inspect -f '{{.Id}}' "$name")

for methods in "" mount podman; do
        out=$WORK/out-${methods:-all}
        resolve "$out" "$WORK/copies" ${methods:+--methods=$methods} "$pid"
        grep -qP "^container\tengine=podman\tid=$id\tname=$name\timage=$image\towner=0$" "$out" ||
                { cat "$out"; fail "container not classified as podman $id $name $image"; }
        expect=${methods:-map-files}
        assert_resolved "$out" /bin/app "$expect" "$WORK/spin" "$WORK/copies"
        assert_resolved "$out" /usr/lib/x86_64-linux-gnu/libc.so.6 "$expect" /usr/lib/x86_64-linux-gnu/libc.so.6 "$WORK/copies"
        assert_resolved "$out" /lib64/ld-linux-x86-64.so.2 "$expect" /lib64/ld-linux-x86-64.so.2 "$WORK/copies"
done
host=$(map_field "$WORK/out-podman" /bin/app host)
[[ "$host" == /var/lib/containers/storage/overlay/*/diff/bin/app ]] || fail "storage path $host is not a layer of the rootful store"
grep -q "^layer	1	/var/lib/containers/storage/overlay/.*/diff$" "$WORK/out-podman" || fail "layer chain (container layer + image layer) missing"
assert_listed "$name" "$pid" podman
assert_listed "${id:0:12}" "$pid" podman
echo "PASS"
