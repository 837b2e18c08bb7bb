#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-python-real-arm64.sh TEST_PYTHON_REAL: test-python-real against
# Debian 12's arm64 python3.11, from the arm64 root scripts/arm64-sysroot.sh
# keeps (cached under $PERISCOPE_TEST_CACHE; the cross tests share it),
# run chrooted under qemu-aarch64-static (binfmt_misc): the aarch64 table
# read from a real aarch64 interpreter's memory.
. "$(dirname "$0")/../lib/test-lib.sh"
[ "$(id -u)" = 0 ] || fail "the arm64 root needs root (debootstrap, chroot)"
test_python_real=${1:?usage: test-python-real-arm64.sh TEST_PYTHON_REAL}
[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] ||
        fail "no binfmt_misc entry for qemu-aarch64 (apt-get install -y qemu-user-static binfmt-support)"
root=$("$(dirname "$0")/../../scripts/arm64-sysroot.sh") || fail "no arm64 root"
[ -x "$root/usr/bin/python3.11" ] || fail "the arm64 root at $root has no python3.11"
readelf -h "$root/usr/bin/python3.11" | grep -q 'Machine:.*AArch64' || fail "$root/usr/bin/python3.11 is not aarch64"
PYTHON_ROOT=$root PYTHON=/usr/bin/python3.11 PYTHON_MINOR=11 "$test_python_real" ||
        fail "the frames of arm64 python3.11 under qemu-aarch64-static"
echo "ok: arm64 Python 3.11's frames"
