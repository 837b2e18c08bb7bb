#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Periscope as installed, on Debian 12's own kernel (linux-image-amd64 under
# qemu, software emulation): the kernel a Debian user runs, whose
# perf_event_paranoid is 3 (a Debian patch: perf_event_open then needs
# CAP_SYS_ADMIN), where this machine's kernel has 2. The image (debootstrap,
# cached under /var/cache/periscope-tests/vm-*) is booted twice with
# -snapshot, Periscope copied in from a `meson install --destdir` of a
# --prefix=/usr build:
#  1. fast: a shell script as PID 1; root records the no-frame-pointer
#     workload with a private periscoped;
#  2. systemd as PID 1: Periscope installed on the running system, root and
#     an unprivileged user record through the D-Bus-activated unit.
# Each recording: every function named, >= 95% of stacks reach main; the
# unit's journal has no warning or error.
#
# Needs root, qemu-system-x86, debootstrap, and the Debian mirror on the
# first run (PERISCOPE_DEBIAN_MIRROR, PERISCOPE_TEST_CACHE as in
# tests/service/installed/). docs/ARCHITECTURE.md, "Tests on
# Debian's own kernel", says how to run it by hand.
set -euo pipefail
. "$(dirname "$0")/../lib/test-lib.sh" # fail, as_user, wait_for
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/installed-tree.sh"
. "$here/vm-lib.sh"
: "${MESON_SOURCE_ROOT:?}" "${MESON_BUILD_ROOT:?}" "${WORKLOAD_SOURCE:?}"
start=$SECONDS
elapsed() { echo "$((SECONDS - start)) s"; }

[ "$(id -u)" = 0 ] || fail "needs root (debootstrap, chroot)"
for tool in debootstrap:debootstrap mke2fs:e2fsprogs meson:meson ninja:ninja-build gcc:gcc \
            dpkg-query:dpkg flock:util-linux readelf:binutils; do
        command -v "${tool%%:*}" >/dev/null || fail "${tool%%:*} missing: apt-get install -y ${tool#*:}"
done
# (an arm64 VM needs an arm64 build of Periscope: vm-lib.sh knows the VM)
vm_arch amd64

tmp=$(mktemp -d /var/tmp/periscope-vm.XXXXXX)
share=$tmp/share
mkdir -p "$share"
# PERISCOPE_VM_KEEP=1 keeps the share (the guest's logs, run.sh) and the console logs
trap 'vm_stop; if [ -n "${PERISCOPE_VM_KEEP:-}" ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi' EXIT
trap 'exit 143' TERM INT

# 1. Periscope for /usr, staged on the share; the workload beside it.
usr_build_stage "$MESON_BUILD_ROOT" "$MESON_SOURCE_ROOT" "$share/stage" "$tmp"
gcc -O2 -fomit-frame-pointer -o "$share/deep-nofp" "$WORKLOAD_SOURCE" || fail "cannot build the workload"
install -m 0644 "$here/guest-lib.sh" "$share/guest-lib.sh"
echo "ok: built and staged for /usr ($(elapsed))"

# 2. The image: what the installed programs load, plus the base.
mapfile -t packages < <(runtime_packages "$share/stage" "$tmp")
[ ${#packages[@]} -ge 3 ] || fail "the installed programs need ${#packages[@]} packages?"
vm_image "${packages[@]}"
echo "ok: image $VM_IMAGE ($(elapsed))"

# step_status NAME, step_ms NAME: of a step of the guest's script (guest-lib.sh)
step_status() { awk -v n="$1" '$1 == n { s = $2 } END { print (s == "" ? "missing" : s) }' "$share/out/steps"; }
step_ms() { awk -v n="$1" '$1 == n { print $3 }' "$share/out/steps"; }
# require_step NAME WHAT: the step ran and succeeded, else its log and a reason
require_step() {
        local name=$1 what=$2 st
        st=$(step_status "$name")
        [ "$st" = 0 ] && return 0
        [ ! -f "$share/out/$name.log" ] || tail -n 30 "$share/out/$name.log" >&2
        local why="$what failed in the VM (step $name: $st)"
        if grep 'perf_event_open.*\(Permission denied\|not permitted\)' "$share/out/$name.log" >/dev/null 2>&1; then
                why+=": perf_event_open refused at perf_event_paranoid=$(cat "$share/out/paranoid") on Debian's kernel; there it needs CAP_SYS_ADMIN in the process that opens the events"
        fi
        fail "$why"
}
# the facts every boot checks first: Debian's kernel, at paranoid 3
check_kernel() {
        local kernel paranoid
        kernel=$(cat "$share/out/kernel")
        paranoid=$(cat "$share/out/paranoid")
        echo "kernel $kernel, perf_event_paranoid $paranoid"
        case $kernel in *-amd64 | *-arm64) ;; *) fail "the VM runs kernel $kernel, not Debian's" ;; esac
        [ "$paranoid" = 3 ] || fail "Debian's kernel booted with perf_event_paranoid=$paranoid, not its default 3: the test would not test what a Debian user gets"
}
recorded_ms() { echo "$(($(step_ms "$1") / 1000)).$(($(step_ms "$1") % 1000 / 100)) s"; }

# 3. Fast boot: root with a private periscoped.
install -m 0755 "$here/guest-fast.sh" "$share/run.sh"
vm_boot_fast "$share"
echo "ok: fast boot done in $VM_SECONDS s, the script started at $(cat "$share/out/uptime") s of uptime (status $VM_STATUS)"
cat "$share/out/run.log"
check_kernel
require_step install "copying the staged Periscope into the VM"
[ "$VM_STATUS" = 0 ] || fail "the fast boot's script exited $VM_STATUS"
require_step record-private "periscope record --private as root"
grep "capture written to /root/deep.syscap" "$share/out/record-private.log" >/dev/null ||
        { cat "$share/out/record-private.log"; fail "periscope record --private did not say it wrote the capture"; }
require_step report-private "periscope report of root's private recording"
check_deep_stacks "root (private daemon)" "$share/out/private.folded" "$share/out/private.report"
echo "ok: recorded on Debian's kernel with a private periscoped in $(recorded_ms record-private) ($(elapsed))"

# 4. systemd as PID 1: root and a user through the D-Bus-activated unit.
install -m 0755 "$here/guest-systemd.sh" "$share/run.sh"
vm_boot_systemd "$share"
echo "ok: systemd boot done in $VM_SECONDS s, the script started at $(cat "$share/out/uptime") s of uptime (status $VM_STATUS)"
cat "$share/out/run.log"
check_kernel
require_step install "copying the staged Periscope into the VM"
[ "$VM_STATUS" = 0 ] || fail "the systemd boot's script exited $VM_STATUS"
require_step activate "systemd-sysusers, systemd-tmpfiles, daemon-reload and D-Bus reload after the install"
require_step useradd "adding the unprivileged user"
for who in root user; do
        require_step "record-$who" "periscope record as $who through periscoped.service"
        if grep "private periscoped" "$share/out/record-$who.log"; then
                fail "periscope record as $who used a private periscoped, not the system service"
        fi
        require_step "report-$who" "periscope report of $who's recording"
        check_deep_stacks "$who (periscoped.service)" "$share/out/$who.folded" "$share/out/$who.report"
        echo "ok: $who recorded through the unit in $(recorded_ms "record-$who")"
done
grep "Activating via systemd: service name='org.periscope.Profiler1' unit='periscoped.service'" \
        "$share/out/dbus.journal" >/dev/null ||
        { cat "$share/out/dbus.journal"; fail "dbus-daemon did not activate periscoped.service"; }
grep "argv\[\]=/usr/libexec/periscoped --system " "$share/out/periscoped.show" >/dev/null ||
        { cat "$share/out/periscoped.show"; fail "periscoped.service does not run /usr/libexec/periscoped --system"; }
cat "$share/out/periscoped.journal"
# Under software emulation everything runs 10-20 times slower: the fiber's
# warning that a slice overran its 5 ms (service/fiber/fiber.c) is expected
# here and no fault of the service; every other warning fails the test.
grep -v "without giving way to the event loop" "$share/out/periscoped.warnings" >"$share/out/periscoped.faults" || true
if [ -s "$share/out/periscoped.faults" ]; then
        cat "$share/out/periscoped.faults"
        fail "periscoped.service's journal has warnings or errors (above)"
fi
# (its lines all carry priority info until it logs with levels: read them too)
if grep -i -n "helper failed\|bwrap:\|exited with status\|not permitted\|permission denied\|failed:\|error:" \
        "$share/out/periscoped.journal"; then
        fail "periscoped.service's journal reports failures (lines above)"
fi
symbolized=$(grep -c "symbolized .* 0 helper failures" "$share/out/periscoped.journal" || true)
[ "$symbolized" -ge 2 ] || fail "periscoped.service's journal shows $symbolized of 2 symbolizations with 0 helper failures"
echo "ok: installed service recorded root and a user on Debian's kernel ($(elapsed))"
