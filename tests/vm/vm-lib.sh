# SPDX-License-Identifier: LGPL-2.1-or-later
# vm-lib.sh: sourced by tests that need Debian 12's own kernel: a Debian 12
# root (debootstrap) on a disk image, booted under qemu in software
# emulation (this machine kind has /dev/kvm but no nested virtualisation),
# with a fast init script or with systemd as PID 1. The host and the VM
# talk through one shared directory (virtio-9p, tag host0, /mnt/share in
# the VM): the host puts run.sh there, the VM runs `run.sh SHARE` with its
# output in SHARE/out/run.log and its exit status in SHARE/out/status, then
# powers off. Needs fail().
#
#   vm_arch ARCH          amd64 (default) or arm64: sets VM_ARCH, VM_QEMU,
#                         VM_QEMU_ARGS, VM_CONSOLE, VM_KERNEL_PACKAGE,
#                         VM_QEMU_PACKAGE (what ships VM_QEMU)
#   vm_image PACKAGE...   the image with these packages besides the base
#                         (kernel, systemd, libpam-systemd, dbus, polkitd,
#                         bubblewrap, udev, kmod, procps), built once per
#                         package list under $PERISCOPE_TEST_CACHE
#                         (/var/cache/periscope-tests) and shared between
#                         runs under a lock: sets VM_IMAGE, VM_KERNEL,
#                         VM_INITRD
#   vm_boot_fast SHARE    boots with /usr/local/bin/fastinit as PID 1 (proc,
#                         sys, dev, tmp, run, cgroup2 and the share mounted;
#                         no systemd, no D-Bus): runs SHARE/run.sh, powers off
#   vm_boot_systemd SHARE boots with systemd as PID 1; periscope-vm-run.service
#                         runs SHARE/run.sh after multi-user.target, then
#                         powers the machine off
#   vm_stop               kills the VM still running, if any (for traps)
#
# Each boot uses -snapshot (the cached image is never written), runs under
# nice, and is killed after $VM_TIMEOUT seconds (default 300). After a boot,
# VM_STATUS is run.sh's exit status and VM_SECONDS the boot's wall time; a
# boot that did not end with a status fails (console log: SHARE.console.log).

VM_CACHE_TOP=${PERISCOPE_TEST_CACHE:-/var/cache/periscope-tests}
VM_MIRROR=${PERISCOPE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
VM_PID=

vm_arch() {
        VM_ARCH=${1:-amd64}
        case $VM_ARCH in
        amd64)
                VM_QEMU=qemu-system-x86_64
                VM_QEMU_ARGS=(-machine q35 -accel tcg -cpu max)
                VM_CONSOLE=ttyS0
                VM_KERNEL_PACKAGE=linux-image-amd64
                VM_QEMU_PACKAGE=qemu-system-x86
                ;;
        arm64)
                VM_QEMU=qemu-system-aarch64
                VM_QEMU_ARGS=(-machine virt -accel tcg -cpu max,pauth-impdef=on)
                VM_CONSOLE=ttyAMA0
                VM_KERNEL_PACKAGE=linux-image-arm64
                VM_QEMU_PACKAGE=qemu-system-arm
                ;;
        *) fail "vm_arch: no VM for architecture $VM_ARCH" ;;
        esac
        command -v "$VM_QEMU" >/dev/null || fail "$VM_QEMU missing: apt-get install -y $VM_QEMU_PACKAGE"
}

# The files the image gets besides its packages. Their text is part of the
# cache key: changing them here builds a new image.
_vm_image_files() {
        local root=$1
        mkdir -p "$root/mnt/share" "$root/usr/local/bin" "$root/etc/systemd/system/multi-user.target.wants"
        echo periscope-vm >"$root/etc/hostname"
        # fastinit: PID 1 of the fast boots
        cat >"$root/usr/local/bin/fastinit" <<'EOF'
#!/bin/sh
# PID 1 of the fast boots: the mounts a program expects, the 9p share, the
# host's script, power off.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8
mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mount -t cgroup2 cgroup2 /sys/fs/cgroup
hostname periscope-vm
modprobe 9pnet_virtio && modprobe 9p &&
        mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 host0 /mnt/share &&
        /usr/local/bin/vm-run-share
sync
echo o >/proc/sysrq-trigger
sleep 30
EOF
        # vm-run-share: runs the host's script (both boots)
        cat >"$root/usr/local/bin/vm-run-share" <<'EOF'
#!/bin/sh
# Runs /mnt/share/run.sh, its output to /mnt/share/out/run.log, its exit
# status to /mnt/share/out/status.
mkdir -p /mnt/share/out
cd /root || exit 1
bash /mnt/share/run.sh /mnt/share >/mnt/share/out/run.log 2>&1
echo $? >/mnt/share/out/status
sync
EOF
        chmod 0755 "$root/usr/local/bin/fastinit" "$root/usr/local/bin/vm-run-share"
        # the same under systemd, once the machine is up
        cat >"$root/etc/systemd/system/periscope-vm-run.service" <<'EOF'
[Unit]
Description=Run the host's test script from the 9p share, then power off
After=multi-user.target

[Service]
Type=oneshot
TimeoutStartSec=infinity
ExecStartPre=/bin/mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 host0 /mnt/share
ExecStart=/usr/local/bin/vm-run-share
ExecStopPost=/bin/systemctl poweroff --no-block

[Install]
WantedBy=multi-user.target
EOF
        ln -sf ../periscope-vm-run.service "$root/etc/systemd/system/multi-user.target.wants/periscope-vm-run.service"
}

# Before debootstrap's second stage installs the packages: the initrd holds
# only what mounts the root (the kernel's postinst builds it: with Debian's
# default MODULES=most it is large, and slow to build under emulation for
# arm64); dpkg neither syncs each file nor unpacks what a VM never uses
# (hardware drivers, sound, documentation: half the kernel's modules).
_vm_second_stage_config() {
        local root=$1 d
        mkdir -p "$root/etc/initramfs-tools/conf.d" "$root/usr/share/initramfs-tools/modules.d"
        echo MODULES=list >"$root/etc/initramfs-tools/conf.d/periscope-vm"
        printf '%s\n' virtio_pci virtio_mmio virtio_blk ext4 >"$root/usr/share/initramfs-tools/modules.d/periscope-vm"
        {
                echo force-unsafe-io
                for d in gpu media net/ethernet net/wireless net/can infiniband iio staging comedi hwmon \
                         usb isdn bluetooth mtd; do
                        echo "path-exclude=/lib/modules/*/kernel/drivers/$d/*"
                done
                echo "path-exclude=/lib/modules/*/kernel/sound/*"
                for d in doc man info locale; do
                        echo "path-exclude=/usr/share/$d/*"
                done
        } >"$root/etc/dpkg/dpkg.cfg.d/periscope-vm"
}

# An x86 bzImage decompresses itself at every boot, ~15 s under emulation:
# the image keeps the kernel's ELF (vmlinux) decompressed once, which qemu
# boots through its PVH entry. The same kernel, minus the decompressor.
_vm_extract_vmlinux() {
        local bz=$1 out=$2 pair magic tool off
        for pair in 'fd377a585a00 xz' '28b52ffd zstd' '1f8b0800 gzip'; do
                magic=${pair% *} tool=${pair#* }
                command -v "$tool" >/dev/null || continue
                for off in $(LC_ALL=C grep -obUaP "$(sed 's/../\\x&/g' <<<"$magic")" "$bz" | cut -d: -f1); do
                        # the compressed kernel has trailing data: judge by the output
                        tail -c +$((off + 1)) "$bz" | "$tool" -dc >"$out" 2>/dev/null || true
                        if [ "$(head -c 4 "$out" | od -An -tx1 | tr -d ' \n')" = 7f454c46 ] &&
                           readelf -n "$out" 2>/dev/null | grep >/dev/null 'Xen.*(0x00000012)'; then
                                return 0
                        fi
                done
        done
        rm -f "$out"
        return 1
}

vm_image() {
        [ -n "${VM_ARCH:-}" ] || vm_arch amd64
        local packages key dir lock root start=$SECONDS
        packages=$(printf '%s\n' "$VM_KERNEL_PACKAGE" systemd systemd-sysv libpam-systemd dbus polkitd bubblewrap udev kmod \
                procps "$@" | sort -u | paste -sd, -)
        key=$( (echo "bookworm $VM_ARCH minbase $packages"; declare -f _vm_image_files _vm_second_stage_config) |
                sha256sum | cut -c1-16)
        dir=$VM_CACHE_TOP/vm-bookworm-$VM_ARCH-$key
        mkdir -p "$VM_CACHE_TOP"
        exec {lock}>"$dir.lock"
        flock "$lock"
        if [ ! -e "$dir/complete" ]; then
                echo "building the Debian 12 $VM_ARCH image in $dir (debootstrap from $VM_MIRROR)"
                echo "packages: $packages"
                command -v debootstrap >/dev/null || fail "debootstrap missing: apt-get install -y debootstrap"
                if [ "$VM_ARCH" != "$(dpkg --print-architecture)" ] &&
                   ! grep -l "^enabled" /proc/sys/fs/binfmt_misc/qemu-* >/dev/null 2>&1; then
                        fail "a $VM_ARCH root needs qemu-user-static with binfmt_misc enabled (update-binfmts --enable)"
                fi
                rm -rf "$dir"
                mkdir -p "$dir"
                root=$dir/root
                # --foreign, so the initrd is configured before the kernel's postinst
                if ! debootstrap --arch="$VM_ARCH" --variant=minbase --foreign --include="$packages" \
                                bookworm "$root" "$VM_MIRROR" >"$dir/debootstrap.log" 2>&1; then
                        tail -n 15 "$dir/debootstrap.log" >&2
                        fail "debootstrap of Debian 12 from $VM_MIRROR failed (is the mirror reachable? set PERISCOPE_DEBIAN_MIRROR to another)"
                fi
                local first=$SECONDS
                _vm_second_stage_config "$root"
                if ! chroot "$root" /debootstrap/debootstrap --second-stage >>"$dir/debootstrap.log" 2>&1; then
                        tail -n 15 "$root/debootstrap/debootstrap.log" >&2 2>/dev/null || tail -n 15 "$dir/debootstrap.log" >&2
                        fail "debootstrap's second stage failed in $root"
                fi
                local second=$SECONDS
                _vm_image_files "$root"
                rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
                local kernel initrd
                kernel=$(find "$root/boot" -name 'vmlinuz-*' | sort | tail -n 1)
                initrd=$(find "$root/boot" -name 'initrd.img-*' | sort | tail -n 1)
                [ -n "$kernel" ] && [ -n "$initrd" ] || fail "no kernel or initrd in $root/boot"
                cp "$kernel" "$dir/vmlinuz"
                if [ "$VM_ARCH" = amd64 ] && _vm_extract_vmlinux "$kernel" "$dir/vmlinux"; then
                        echo vmlinux >"$dir/kernel"
                else
                        echo vmlinuz >"$dir/kernel"
                fi
                cp "$initrd" "$dir/initrd.img"
                truncate -s 4G "$dir/disk.img"
                mke2fs -q -t ext4 -L periscope-vm -d "$root" "$dir/disk.img" ||
                        fail "mke2fs -d $root failed"
                rm -rf "$root"
                touch "$dir/complete"
                echo "ok: image built in $((SECONDS - start)) s (debootstrap $((first - start)) s + second stage $((second - first)) s + image $((SECONDS - second)) s; $(du -sh --apparent-size "$dir/disk.img" | cut -f1) apparent, $(du -sh "$dir/disk.img" | cut -f1) used; initrd $(du -h "$dir/initrd.img" | cut -f1))"
        fi
        flock -u "$lock"
        exec {lock}>&-
        VM_IMAGE=$dir/disk.img
        VM_KERNEL=$dir/$(cat "$dir/kernel")
        VM_INITRD=$dir/initrd.img
}

vm_stop() {
        if [ -n "$VM_PID" ] && kill -0 "$VM_PID" 2>/dev/null; then
                kill -KILL "$VM_PID" 2>/dev/null || true
                wait "$VM_PID" 2>/dev/null || true
        fi
        VM_PID=
}

# _vm_boot KIND SHARE KERNEL-ARGS…
_vm_boot() {
        local kind=$1 share=${2%/} timeout=${VM_TIMEOUT:-300} start=$SECONDS rc
        shift 2
        [ -n "${VM_IMAGE:-}" ] || fail "vm_boot_$kind: no image (call vm_image first)"
        [ -f "$share/run.sh" ] || fail "vm_boot_$kind: no $share/run.sh"
        rm -rf "$share/out"
        local console=$share.console.log
        : >"$console"
        nice -n 10 "$VM_QEMU" "${VM_QEMU_ARGS[@]}" -smp 2 -m 2048 \
                -nodefaults -no-user-config -display none -no-reboot -snapshot \
                -serial "file:$console" -nic none -device virtio-rng-pci \
                -kernel "$VM_KERNEL" -initrd "$VM_INITRD" \
                -append "root=/dev/vda rw console=$VM_CONSOLE panic=-1 $*" \
                -drive "file=$VM_IMAGE,format=raw,if=virtio" \
                -virtfs "local,path=$share,mount_tag=host0,security_model=none,id=host0" \
                >"$share.qemu.log" 2>&1 &
        VM_PID=$!
        while kill -0 "$VM_PID" 2>/dev/null; do
                if [ $((SECONDS - start)) -ge "$timeout" ]; then
                        vm_stop
                        tail -n 30 "$console" >&2
                        fail "the $kind boot did not power off within $timeout s (console above, $console)"
                fi
                sleep 0.5
        done
        rc=0
        wait "$VM_PID" || rc=$?
        VM_PID=
        VM_SECONDS=$((SECONDS - start))
        if [ "$rc" != 0 ] || [ ! -s "$share/out/status" ]; then
                cat "$share.qemu.log" >&2
                tail -n 40 "$console" >&2
                [ ! -f "$share/out/run.log" ] || tail -n 20 "$share/out/run.log" >&2
                fail "the $kind boot ended without the script's status (qemu exit $rc; console above, $console)"
        fi
        VM_STATUS=$(cat "$share/out/status")
}

vm_boot_fast() {
        _vm_boot fast "$1" init=/usr/local/bin/fastinit
}

vm_boot_systemd() {
        _vm_boot systemd "$1" systemd.show_status=error
}
