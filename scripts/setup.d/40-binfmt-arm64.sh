#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Lets this machine run aarch64 programs through qemu-aarch64-static
# (binfmt_misc), as debootstrap's second stage of the arm64 VM image needs
# (tests/vm/test-vm-arm64.sh, docs/arm64.md). Idempotent.
set -euo pipefail
dir=/proc/sys/fs/binfmt_misc
if [ ! -e "$dir/register" ]; then
        mount -t binfmt_misc binfmt_misc "$dir"
fi
if ! grep -x enabled "$dir/qemu-aarch64" >/dev/null 2>&1; then
        update-binfmts --enable qemu-aarch64
fi
grep -x enabled "$dir/qemu-aarch64" >/dev/null || { echo "40-binfmt-arm64: qemu-aarch64 is not enabled in $dir" >&2; exit 1; }
