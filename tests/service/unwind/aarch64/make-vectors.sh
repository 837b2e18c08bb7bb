#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# make-vectors.sh: captures the aarch64 unwinder's test vectors, once, on
# x86_64 (apt: gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static
# gdb-multiarch). Builds chain.c three ways, runs each under
# qemu-aarch64-static -g (-cpu max,sve=off: pointer authentication on; gdb
# 13 misreads the SVE record qemu 7.2 writes into signal frames), stops at
# a breakpoint with gdb-multiarch and writes NAME-WHERE.vec (dump-vector.py):
# registers, the stack from sp, the mappings and gdb's own `bt`. The test
# (test-unwinder-aarch64.c) reads the checked-in programs and vectors; run
# this again only to change them: `tests/service/unwind/aarch64/make-vectors.sh`.
set -euo pipefail
cd "$(dirname "$0")"
SYSROOT=/usr/aarch64-linux-gnu
PORT=${PORT:-23946}

build() { # NAME FLAGS...
        local name=$1; shift
        aarch64-linux-gnu-gcc -g -O2 "$@" -o "chain-$name" chain.c
}
build nofp -fomit-frame-pointer
build fp -fno-omit-frame-pointer
build pac -fomit-frame-pointer -mbranch-protection=standard

capture() { # NAME BREAKPOINT WHERE
        local name=$1 bp=$2 where=$3
        qemu-aarch64-static -cpu max,sve=off -L "$SYSROOT" -g "$PORT" "./chain-$name" &
        local qpid=$! i
        # the stub takes one connection: wait until it listens, never probe it
        for ((i = 0; i < 100; i++)); do
                ss -Hltn "sport = :$PORT" | grep >/dev/null . && break
                sleep 0.1
        done
        gdb-multiarch -nx -batch \
                -ex "set sysroot $SYSROOT" \
                -ex "file ./chain-$name" \
                -ex "target remote :$PORT" \
                -ex "handle SIGALRM nostop noprint pass" \
                -ex "break $bp" -ex continue \
                -ex "python VECTOR_OUT='$name-$where.vec'" \
                -ex "source dump-vector.py" \
                -ex "bt" -ex kill >/dev/null
        wait "$qpid" || true
        echo "$name-$where.vec: $(grep -c '^expect' "$name-$where.vec") frames"
}
for n in nofp fp pac; do
        capture "$n" '*leaf_loop' leaf
        capture "$n" handler_leaf signal
done
