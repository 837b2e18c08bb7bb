#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cross-build-arm64.sh [BUILDDIR [MESON-OPTION…]]: Periscope for aarch64,
# cross-built on x86_64 (docs/arm64.md). Builds or reuses the Debian 12
# arm64 root (scripts/arm64-sysroot.sh, cached), configures BUILDDIR
# (default build-arm64, -Dwerror=true) with scripts/cross/arm64-debian12.ini, and builds
# every target. Options after BUILDDIR go to `meson setup` (e.g.
# --prefix=/usr). Prints the root's path last, for the caller.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build-arm64}
shift || true
fail() { echo "cross-build-arm64: $*" >&2; exit 1; }
for tool in aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu qemu-aarch64-static:qemu-user-static \
            meson:meson ninja:ninja-build pkg-config:pkg-config; do
        command -v "${tool%%:*}" >/dev/null || fail "${tool%%:*} missing: apt-get install -y ${tool#*:} (or scripts/install-deps.sh)"
done
sysroot=$("$top/scripts/arm64-sysroot.sh")
[ -d "$sysroot/usr/include" ] || fail "no sysroot at '$sysroot'"
mkdir -p "$build"
build=$(cd "$build" && pwd)
# the root's path, for the cross file's constant
printf "[constants]\nsysroot = '%s'\n" "$sysroot" >"$build.sysroot.ini"
if [ ! -f "$build/build.ninja" ]; then
        meson setup "$build" "$top" -Dwerror=true --cross-file "$build.sysroot.ini" \
                --cross-file "$top/scripts/cross/arm64-debian12.ini" "$@" >&2 ||
                fail "meson setup failed"
fi
nice ninja -C "$build" -j"${NINJA_JOBS:-2}" >&2 || fail "ninja failed"
echo "$sysroot"
