#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A process in a mount namespace whose root is an OSTree deployment (booted
# like: deploy dir bind-mounted, /usr read-only, pivot_root). Its mountinfo
# root field reads /ostree/deploy/OS/deploy/<checksum>.0; the resolver maps
# that onto the host's mount of the sysroot and checks the identity.
# With PERISCOPE_E2E=1 (test record-ostree-deployment) the same workload is
# recorded through periscoped instead: >= 95% of the samples named right.
source "$(dirname "$0")/lib.sh"
need ostree mkfs.ext4 unshare pivot_root chattr

build_spin "$WORK/spin"
S=$WORK/sysroot
truncate -s 150M "$WORK/sysroot.img"
mkfs.ext4 -q -F "$WORK/sysroot.img" || fail "mkfs.ext4 failed"
mkdir -p "$S"
mount -o loop "$WORK/sysroot.img" "$S" || fail "cannot loop-mount the sysroot image"
cleanup "umount -l $S"

T=$WORK/tree
mkdir -p "$T/usr/bin" "$T/usr/lib/x86_64-linux-gnu" "$T/usr/lib64" "$T/usr/etc" "$T/usr/lib/modules/6.0.0" "$T/sysroot"
printf 'ID=periscope-test\nNAME="Periscope test OS"\n' >"$T/usr/lib/os-release"
cp "$T/usr/lib/os-release" "$T/usr/etc/os-release"
echo kernel >"$T/usr/lib/modules/6.0.0/vmlinuz"
cp "$WORK/spin" "$T/usr/bin/app"
cp /usr/lib/x86_64-linux-gnu/libc.so.6 "$T/usr/lib/x86_64-linux-gnu/"
cp /lib64/ld-linux-x86-64.so.2 "$T/usr/lib64/"
ln -s usr/lib64 "$T/lib64"
ln -s usr/lib "$T/lib"
ln -s usr/bin "$T/bin"

ostree admin init-fs "$S" >/dev/null 2>&1 || fail "ostree admin init-fs failed"
ostree admin os-init --sysroot="$S" ptos >/dev/null 2>&1 || fail "ostree admin os-init failed"
ostree --repo="$S/ostree/repo" commit -b ptos/x86_64/test --tree=dir="$T" >/dev/null 2>"$WORK/commit.err" || { cat "$WORK/commit.err"; fail "ostree commit failed"; }
ostree admin deploy --sysroot="$S" --os=ptos ptos/x86_64/test >/dev/null 2>"$WORK/deploy.err" || { cat "$WORK/deploy.err"; fail "ostree admin deploy failed"; }
D=$(ls -d "$S"/ostree/deploy/ptos/deploy/*.0 | head -1)
[ -d "$D" ] || fail "no deployment under $S/ostree/deploy/ptos/deploy"
cleanup "chattr -i $D"

unshare -m --propagation private -- sh -c "mount --bind '$D' '$D' && mount --bind '$D/usr' '$D/usr' && mount -o remount,bind,ro '$D/usr' && cd '$D' && pivot_root . sysroot && exec /usr/bin/app" &
pid=$!
cleanup "kill $pid"
wait_for 5 mapped "$pid" ' /usr/bin/app$' || fail "workload did not start in the deployment"
grep -q " /ostree/deploy/ptos/deploy/[0-9a-f]*\.0/usr /usr " "/proc/$pid/mountinfo" || { cat "/proc/$pid/mountinfo"; fail "mountinfo root field is not the deployment"; }

if [ -n "${PERISCOPE_E2E:-}" ]; then
        record_e2e_spin "$pid" /usr/bin/app
        echo "PASS"
        exit 0
fi

resolve "$WORK/out" "$WORK/copies" --methods=mount "$pid"
assert_resolved "$WORK/out" /usr/bin/app mount "$WORK/spin" "$WORK/copies"
assert_resolved "$WORK/out" /usr/lib/x86_64-linux-gnu/libc.so.6 mount /usr/lib/x86_64-linux-gnu/libc.so.6 "$WORK/copies"
assert_resolved "$WORK/out" /usr/lib64/ld-linux-x86-64.so.2 mount /lib64/ld-linux-x86-64.so.2 "$WORK/copies"
[ "$(map_field "$WORK/out" /usr/bin/app host)" = "$D/usr/bin/app" ] || fail "not translated into the deployment on the host"
map_field "$WORK/out" /usr/bin/app detail | grep >/dev/null 'OSTree deployment /ostree/deploy/ptos/deploy/' || fail "provenance does not name the deployment"
echo "PASS"
