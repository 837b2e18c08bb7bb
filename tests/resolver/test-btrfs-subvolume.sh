#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A binary on a btrfs subvolume, mounted (subvol=) at another path in another
# mount namespace. The kernel reports the superblock's device in
# /proc/PID/maps while stat() gives the subvolume's anonymous device: the
# resolver must translate the path through the mountinfo root field and
# accept the same inode on the aliased device.
# With PERISCOPE_E2E=1 (test record-btrfs-subvolume) the same workload is
# recorded through periscoped instead: >= 95% of the samples named right.
source "$(dirname "$0")/lib.sh"
need mkfs.btrfs btrfs unshare mount umount

build_spin "$WORK/spin"
truncate -s 200M "$WORK/btrfs.img"
mkfs.btrfs -q -f "$WORK/btrfs.img" >/dev/null 2>&1 || fail "mkfs.btrfs failed"
mkdir -p "$WORK/top" "$WORK/ns-data"
mount -o loop "$WORK/btrfs.img" "$WORK/top" || fail "cannot loop-mount btrfs"
cleanup "umount -l $WORK/top"
btrfs subvolume create "$WORK/top/@data" >/dev/null
mkdir -p "$WORK/top/@data/sub"
cp "$WORK/spin" "$WORK/top/@data/sub/spin"
dev=$(findmnt -no SOURCE "$WORK/top")

# The program runs from the subvolume mounted at $WORK/ns-data, a mount only
# its own namespace has.
unshare -m --propagation private -- sh -c "mount -o subvol=@data '$dev' '$WORK/ns-data' && exec '$WORK/ns-data/sub/spin'" &
pid=$!
cleanup "kill $pid"
wait_for 5 mapped "$pid" ns-data/sub/spin || fail "workload did not start from the subvolume"
findmnt -n "$WORK/ns-data" >/dev/null && fail "the subvolume mount leaked into the host namespace"

maps_dev=$(awk '/ns-data\/sub\/spin/ { print $4; exit }' "/proc/$pid/maps")
stat_dev=$(stat -c '%Hd:%Ld' "$WORK/top/@data/sub/spin")
[ "$(printf '%d:%d' 0x${maps_dev%:*} 0x${maps_dev#*:})" != "$stat_dev" ] || fail "no device-number trap here (maps $maps_dev, stat $stat_dev)"

if [ -n "${PERISCOPE_E2E:-}" ]; then
        record_e2e_spin "$pid" "$WORK/ns-data/sub/spin"
        echo "PASS"
        exit 0
fi

resolve "$WORK/out" "$WORK/copies" --methods=mount "$pid"
assert_resolved "$WORK/out" "$WORK/ns-data/sub/spin" mount "$WORK/spin" "$WORK/copies"
[ "$(map_field "$WORK/out" "$WORK/ns-data/sub/spin" host)" = "$WORK/top/@data/sub/spin" ] || fail "not translated to the host's view of the subvolume"
map_field "$WORK/out" "$WORK/ns-data/sub/spin" detail | grep >/dev/null 'btrfs subvol=/@data' || fail "provenance does not name the subvolume"
[ "$(map_field "$WORK/out" "$WORK/ns-data/sub/spin" verdict)" = match-alias ] || fail "expected a device alias match"

# With every method the live mapping wins; identity still matches.
resolve "$WORK/out-all" "$WORK/copies" "$pid"
assert_resolved "$WORK/out-all" "$WORK/ns-data/sub/spin" map-files "$WORK/spin" "$WORK/copies"
echo "PASS"
