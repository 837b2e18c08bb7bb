#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# readonly-proc-sys.sh MODE COMMAND [ARG…]: runs COMMAND (a test) in a mount
# namespace of its own whose /proc/sys is read-only the way containers make
# it, so everything the test starts (periscoped, its helpers under bwrap)
# sees what a developer inside such a container sees:
#   nspawn  systemd-nspawn's way: /proc/sys bound onto itself, then
#           `mount -o remount,bind,ro`; another fully visible procfs stays
#           mounted (a sandbox may still mount a procfs of its own), so what
#           fails is writing /proc/sys/user/max_user_namespaces (bwrap's
#           --disable-userns: "Read-only file system")
#   bind    Podman's and Docker's way (runc's readonlyPaths and maskedPaths):
#           /proc/sys bound recursively onto itself and remounted read-only,
#           /dev/null over /proc/keys, /proc/timer_list, …, a read-only tmpfs
#           over /proc/acpi and /proc/scsi, and no other procfs: the kernel
#           then refuses a new procfs in a user namespace (bwrap --proc:
#           "Can't mount proc on /newroot/proc: Operation not permitted")
# Needs root (unshare -m). The setup is checked before COMMAND runs.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }

mode=${1:-}
[ $# -ge 2 ] && { [ "$mode" = nspawn ] || [ "$mode" = bind ]; } ||
        fail "usage: readonly-proc-sys.sh nspawn|bind COMMAND [ARG…]"
[ "$(id -u)" = 0 ] || fail "readonly-proc-sys.sh needs root (a mount namespace of its own): run the test as root"

if [ -z "${_READONLY_PROC_SYS_INSIDE:-}" ]; then
        export _READONLY_PROC_SYS_INSIDE=1
        exec unshare --mount --propagation private -- "$0" "$@"
fi
unset _READONLY_PROC_SYS_INSIDE
shift

# Every procfs outside /proc: fully visible ones elsewhere (a booted tree's, left
# by an earlier test) would let a sandbox mount its own in either mode.
other_procs() { awk '$9 == "proc" && $5 != "/proc" && $5 !~ /^\/proc\// { print $5 }' /proc/self/mountinfo; }
while read -r m; do
        [ -n "$m" ] || continue
        umount -l "$m" || fail "cannot unmount the procfs at $m in this namespace"
done < <(other_procs)

case $mode in
nspawn)
        mount --bind /proc/sys /proc/sys
        mount -o remount,bind,ro /proc/sys
        # nspawn's container still has a procfs the kernel counts as fully
        # visible: one of its own, here a fresh one out of the way
        visible=$(mktemp -d /tmp/periscope-visible-proc.XXXXXX)
        mount -t proc proc "$visible"
        ;;
bind)
        mount --rbind /proc/sys /proc/sys
        mount -o remount,bind,ro /proc/sys
        for p in /proc/asound /proc/acpi /proc/kcore /proc/keys /proc/latency_stats /proc/timer_list \
                /proc/timer_stats /proc/sched_debug /proc/scsi; do
                if [ -d "$p" ]; then
                        mount -t tmpfs -o ro tmpfs "$p"
                elif [ -e "$p" ]; then
                        mount --bind /dev/null "$p"
                fi
        done
        for p in /proc/bus /proc/fs /proc/irq /proc/sysrq-trigger; do
                [ -e "$p" ] || continue
                mount --bind "$p" "$p"
                mount -o remount,bind,ro "$p"
        done
        [ -z "$(other_procs)" ] || fail "another procfs is still mounted: $(other_procs | tr '\n' ' ')"
        ;;
esac

# the namespace is what it claims to be (writing back the value it holds)
limit=$(cat /proc/sys/user/max_user_namespaces)
if (echo "$limit" >/proc/sys/user/max_user_namespaces) 2>/dev/null; then
        fail "/proc/sys is still writable in this namespace"
fi
echo "readonly-proc-sys: /proc/sys is read-only ($mode)" >&2
st=0
"$@" || st=$?
if [ -n "${visible:-}" ]; then
        umount "$visible" && rmdir "$visible"
fi
exit $st
