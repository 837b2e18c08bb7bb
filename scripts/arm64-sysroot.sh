#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# arm64-sysroot.sh: a Debian 12 arm64 root holding the -dev packages
# Periscope builds with, for cross builds (scripts/cross-build-arm64.sh,
# docs/arm64.md) and for the arm64 test workloads. Built once per package
# list under $PERISCOPE_TEST_CACHE (/var/cache/periscope-tests) and shared
# under a lock; prints the root's path on stdout, the rest on stderr.
#
# debootstrap --foreign resolves and downloads the packages; they are then
# only unpacked (dpkg-deb --fsys-tarfile | tar), never configured: a sysroot needs files, not
# maintainer scripts, so nothing runs under emulation and this machine's
# own packages are left alone (no :arm64 multiarch). ROOT/.periscope-files
# says which package ships which file (tests/vm/ picks the VM's packages
# with it).
#
# Needs root (debootstrap), debootstrap, and the Debian mirror on the first
# run (PERISCOPE_DEBIAN_MIRROR, default http://deb.debian.org/debian).
set -euo pipefail
cache=${PERISCOPE_TEST_CACHE:-/var/cache/periscope-tests}
mirror=${PERISCOPE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
fail() { echo "arm64-sysroot: $*" >&2; exit 1; }

# What meson.build's dependencies need (the -dev package of each), the C
# library, and the workloads' toolchains: Rust's standard library for
# aarch64 (Debian's rustc on this machine cross-compiles with it; the same
# version as this machine's rustc).
packages=(
        libc6-dev libglib2.0-dev libsystemd-dev libelf-dev libdw-dev libjson-glib-dev
        libdebuginfod-dev libsysprof-4-dev libunwind-dev libseccomp-dev libcap-dev
        libiberty-dev liblzma-dev zlib1g-dev libdbus-1-dev libpolkit-gobject-1-dev systemd
        libstd-rust-dev
)
list=$(printf '%s\n' "${packages[@]}" | sort -u | paste -sd, -)
key=$( (echo "bookworm arm64 sysroot $list"; sed -n '/^# --- build ---/,$p' "$0") | sha256sum | cut -c1-16)
dir=$cache/sysroot-bookworm-arm64-$key
root=$dir/root

[ "$(id -u)" = 0 ] || [ -e "$dir/complete" ] || fail "building the sysroot needs root (debootstrap)"
mkdir -p "$cache"
exec {lock}>"$dir.lock"
flock "$lock"
# --- build ---
if [ ! -e "$dir/complete" ]; then
        command -v debootstrap >/dev/null || fail "debootstrap missing: apt-get install -y debootstrap"
        start=$SECONDS
        echo "arm64-sysroot: building $root (debootstrap from $mirror): $list" >&2
        rm -rf "$dir"
        mkdir -p "$dir"
        # --foreign: the first stage only; its unpacked base is replaced below
        if ! debootstrap --arch=arm64 --variant=minbase --foreign --include="$list" \
                bookworm "$root" "$mirror" >"$dir/debootstrap.log" 2>&1; then
                tail -n 15 "$dir/debootstrap.log" >&2
                fail "debootstrap --arch=arm64 from $mirror failed (is the mirror reachable? set PERISCOPE_DEBIAN_MIRROR)"
        fi
        n=0
        : >"$dir/files"
        for deb in "$root"/var/cache/apt/archives/*.deb; do
                # (merged /usr: keep /lib, /bin… the first stage's symlinks)
                dpkg-deb --fsys-tarfile "$deb" | tar -C "$root" -x --keep-directory-symlink ||
                        fail "unpacking $deb failed"
                pkg=$(dpkg-deb -f "$deb" Package)
                dpkg-deb -c "$deb" | awk -v p="$pkg" '{ f = $6; sub(/^\./, "", f); if (f != "/" && f !~ /\/$/) print p " " f }' >>"$dir/files"
                n=$((n + 1))
        done
        [ "$n" -ge 50 ] || fail "debootstrap downloaded only $n packages"
        mv "$dir/files" "$root/.periscope-files"
        rm -rf "$root"/var/cache/apt/archives/*.deb
        # absolute symlinks point at this machine's files: make them relative
        # to the root (libfoo.so -> /lib/... in a few -dev packages)
        while IFS= read -r link; do
                target=$(readlink "$link")
                case $target in /*) ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$root$target")" "$link" ;; esac
        done < <(find "$root/usr" -type l)
        [ -f "$root/usr/lib/aarch64-linux-gnu/pkgconfig/glib-2.0.pc" ] || fail "no glib-2.0.pc in $root"
        touch "$dir/complete"
        echo "arm64-sysroot: built in $((SECONDS - start)) s ($n packages, $(du -sh "$root" | cut -f1))" >&2
fi
echo "$root"
