#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Periscope on arm64, proven on a real arm64 kernel: Debian 12's own
# (linux-image-arm64, perf_event_paranoid 3) booted under
# qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on (software
# emulation: pointer authentication on, SVE too). The tree is cross-built
# for aarch64 with --prefix=/usr (scripts/cross-build-arm64.sh) and
# installed into the cached image (tests/vm/arm64-lib.sh, vm-lib.sh); one
# boot with systemd as PID 1 (tests/vm/guest-arm64.sh) records
#  - with a private periscoped, as root: a no-frame-pointer chain whose
#    leaf makes no call, the same built with frame pointers under
#    `--unwind fp`, a multi-threaded program, a Go and a Rust program
#    (Debian's Go and rustc, cross-compiled), Debian's python3, and
#    python3's allocations with --memory (the preloaded collector);
#  - a capture recorded on this x86_64 host: info says so, report names it;
#  - through the installed, D-Bus-activated service: root and an
#    unprivileged user, the no-frame-pointer and the frame-pointer chain,
#    and root's kernel frames (dd in system calls).
# tests/vm/check-arm64.py judges the stacks: >= 99% of the leaf's samples
# leaf <- its caller <- ... <- main from the thread's entry, >= 99% of all
# stacks whole (Go 97%, python3 95%; 99% of its interpreter loop's reach
# Py_BytesMain), kernel frames named. The unit's journal has no warning beyond the emulation's.
#
# Needs root, qemu-system-arm, qemu-user-static with binfmt_misc,
# gcc-aarch64-linux-gnu, golang-go, rustc, debootstrap, and the Debian mirror
# on the first run (PERISCOPE_DEBIAN_MIRROR; PERISCOPE_TEST_CACHE as in
# tests/vm/vm-lib.sh). PERISCOPE_VM_KEEP=1 keeps the share. tests/README.md
# says how to run it by hand.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/test-lib.sh" # fail
. "$here/vm-lib.sh"
. "$here/arm64-lib.sh"
: "${MESON_SOURCE_ROOT:?}" "${MESON_BUILD_ROOT:?}"
start=$SECONDS
elapsed() { echo "$((SECONDS - start)) s"; }

[ "$(id -u)" = 0 ] || fail "needs root (debootstrap, chroot)"
for tool in debootstrap:debootstrap mke2fs:e2fsprogs meson:meson ninja:ninja-build go:golang-go \
            aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu qemu-aarch64-static:qemu-user-static \
            flock:util-linux readelf:binutils python3:python3; do
        command -v "${tool%%:*}" >/dev/null || fail "${tool%%:*} missing: apt-get install -y ${tool#*:}"
done
vm_arch arm64

tmp=$(mktemp -d /var/tmp/periscope-vm-arm64.XXXXXX)
share=$tmp/share
mkdir -p "$share"
trap 'vm_stop; if [ -n "${PERISCOPE_VM_KEEP:-}" ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi' EXIT
trap 'exit 143' TERM INT

# 1. Periscope for aarch64 and /usr, staged on the share; the workloads beside it.
arm64_usr_stage "$MESON_BUILD_ROOT" "$MESON_SOURCE_ROOT" "$share/stage" "$tmp"
arm64_workloads "$MESON_SOURCE_ROOT" "$share/bin" "$tmp"
install -m 0644 "$here/guest-lib.sh" "$share/guest-lib.sh"
# an x86_64 capture of the same deep chain, recorded here with a private
# periscoped: the guest must read it (captures cross architectures)
PERISCOPED=$MESON_BUILD_ROOT/service/periscoped PERISCOPE_HELPER=$MESON_BUILD_ROOT/sandbox-helper/periscope-helper \
        "$MESON_BUILD_ROOT/cli/periscope" record --private -o "$share/x86.syscap" -- \
        "$MESON_BUILD_ROOT/tests/service/unwind/unwind-workload-deep" 1000 >"$tmp/x86-record.log" 2>&1 ||
        { cat "$tmp/x86-record.log"; fail "recording the x86_64 capture on the host failed"; }
echo "ok: cross-built, staged for /usr, workloads built ($(elapsed))"

# 2. The image: what the installed programs load, python3, perf, the base.
arm64_vm_image "$share/stage"
echo "ok: image $VM_IMAGE ($(elapsed))"

# 3. One boot, systemd as PID 1.
install -m 0755 "$here/guest-arm64.sh" "$share/run.sh"
VM_TIMEOUT=${VM_TIMEOUT:-480} vm_boot_systemd "$share"
echo "ok: systemd boot done in $VM_SECONDS s, the script started at $(cat "$share/out/uptime") s of uptime (status $VM_STATUS)"
steps=$share/out/steps
awk '{ printf "  %-24s status %-3s %6.1f s\n", $1, $2, $3 / 1000 }' "$steps"
[ "$VM_STATUS" = 0 ] || { cat "$share/out/run.log"; fail "the guest's script exited $VM_STATUS"; }
machine=$(cat "$share/out/machine") kernel=$(cat "$share/out/kernel") paranoid=$(cat "$share/out/paranoid")
echo "machine $machine, kernel $kernel, perf_event_paranoid $paranoid"
[ "$machine" = aarch64 ] || fail "the VM runs on $machine, not aarch64"
case $kernel in *-arm64) ;; *) fail "the VM runs kernel $kernel, not Debian's arm64 kernel" ;; esac
[ "$paranoid" = 3 ] || fail "Debian's kernel booted with perf_event_paranoid=$paranoid, not its default 3"

# 4. Every step ran (a failed recording is reported with its log, then the stacks).
failed=()
while read -r name st _; do
        [ "$st" = 0 ] && continue
        echo "--- step $name exited $st:"
        tail -n 15 "$share/out/$name.log"
        failed+=("$name")
done <"$steps"
for who in root user; do
        if grep "private periscoped" "$share/out/record-svc-$who-nofp.log" 2>/dev/null; then
                failed+=("svc-$who used a private periscoped, not the system service")
        fi
done

# 5. The stacks. Where a stack starts in Debian's stripped ld.so and libc
# (no symbol there): ld.so's ELF entry, and clone's thread_start right
# after __clone (.dynsym), read from the sysroot's copies of the files the
# image has.
libdir=$ARM64_SYSROOT/usr/lib/aarch64-linux-gnu
(cd "$libdir" && sha256sum --quiet -c "$share/out/libs.sha256") ||
        fail "the image's ld.so or libc differ from the sysroot's ($ARM64_SYSROOT): remove the older of the two from the cache"
ld_entry=$(readelf -h "$libdir/ld-linux-aarch64.so.1" | awk '/Entry point address/ { print $4 }')
clone=$(readelf -W --dyn-syms "$libdir/libc.so.6" | awk '$8 == "__clone@@GLIBC_2.17" { print "0x" $2 }')
[ -n "$ld_entry" ] && [ -n "$clone" ] || fail "no entry in ld-linux-aarch64.so.1 or no __clone in libc.so.6 of $ARM64_SYSROOT"
PYTHONPATH=$here/../lib python3 "$here/check-arm64.py" "$share/out" \
        "ld-linux-aarch64.so.1:$ld_entry:0x40,libc.so.6:$clone:0x80" || failed+=("stack checks (above)")

# 6. The service: activated by the bus, quiet in its journal.
grep "Activating via systemd: service name='org.periscope.Profiler1' unit='periscoped.service'" \
        "$share/out/dbus.journal" >/dev/null || failed+=("dbus-daemon did not activate periscoped.service")
grep -v "without giving way to the event loop" "$share/out/periscoped.warnings" >"$share/out/periscoped.faults" || true
if [ -s "$share/out/periscoped.faults" ]; then
        cat "$share/out/periscoped.faults"
        failed+=("periscoped.service's journal has warnings or errors (above)")
fi
if [ ${#failed[@]} -gt 0 ]; then
        printf 'FAIL: %s\n' "${failed[@]}" >&2
        fail "${#failed[@]} checks failed on arm64 ($(elapsed))"
fi
echo "ok: Periscope records, unwinds and names on arm64 with Debian's kernel ($(elapsed))"
