#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Package upgrade during a recording: the profiled binary and a library it
# uses are replaced on disk the way dpkg and rpm do it (write a new file,
# rename it over the old one), then the process exits before resolution.
#  1. pinned (the service opens every mapped file at MMAP time): the old
#     inode is still readable, resolution returns exactly the old bytes;
#  2. not pinned (old inode gone): the verdict is "binary changed since it
#     was mapped (inode N …)" and no file is returned, so no wrong names.
source "$(dirname "$0")/lib.sh"
need nm

L=$WORK/opt
mkdir -p "$L/lib" "$L/bin"
build_hot_version v1 -O1
build_hot_version v2 -O1
# The installed names do not carry the version.
install_version() { # v: write-new + rename, as dpkg does
        local v=$1
        cp "$WORK/libhot.so.$v" "$L/lib/libhot.so.$v.dpkg-new" && mv -f "$L/lib/libhot.so.$v.dpkg-new" "$L/lib/libhot.so.$v"
        cp "$WORK/app.$v" "$L/bin/app.dpkg-new" && mv -f "$L/bin/app.dpkg-new" "$L/bin/app"
}
# app.v1 needs libhot.so.v1; v2 needs libhot.so.v2: replace v1's library by
# v2's bytes too, so both mapped files change on disk.
install_version v1

run_case() { # pin|nopin
        local mode=$1 out=$WORK/out-$1 copies=$WORK/copies-$1
        install_version v1
        "$L/bin/app" &
        local pid=$!
        cleanup "kill $pid"
        wait_for 5 mapped "$pid" libhot || fail "workload did not start"
        rm -f "$WORK/go"; mkdir -p "$copies"
        "$PERISCOPE_RESOLVE" $([ "$mode" = pin ] && echo --pin) --wait-file="$WORK/go" --copy-to="$copies" "$pid" >"$out" 2>"$out.err" &
        local tool=$!
        wait_for 10 grep -q 'snapshot of' "$out.err" || { cat "$out.err"; fail "resolver did not take its snapshot"; }
        # Upgrade: new bytes at the same paths, new inodes.
        cp "$WORK/app.v2" "$L/bin/app.dpkg-new" && mv -f "$L/bin/app.dpkg-new" "$L/bin/app"
        cp "$WORK/libhot.so.v2" "$L/lib/libhot.so.v1.dpkg-new" && mv -f "$L/lib/libhot.so.v1.dpkg-new" "$L/lib/libhot.so.v1"
        grep -q "$L/bin/app (deleted)" "/proc/$pid/maps" || fail "the kernel does not show the old binary as deleted"
        kill "$pid"; wait "$pid" 2>/dev/null || true
        [ ! -e "/proc/$pid" ] || fail "workload still running"
        touch "$WORK/go"
        wait "$tool" || { cat "$out.err"; fail "periscope-resolve failed"; }
}

run_case pin
assert_resolved "$WORK/out-pin" "$L/bin/app" pinned "$WORK/app.v1" "$WORK/copies-pin"
assert_resolved "$WORK/out-pin" "$L/lib/libhot.so.v1" pinned "$WORK/libhot.so.v1" "$WORK/copies-pin"
nm "$WORK/copies-pin/libhot.so.v1" | grep >/dev/null ' hot_inner_v1$' || fail "pinned library lacks hot_inner_v1"
nm "$WORK/copies-pin/app" | grep >/dev/null ' hot_outer_v1$' || fail "pinned binary lacks hot_outer_v1"

run_case nopin
for f in "$L/bin/app" "$L/lib/libhot.so.v1"; do
        v=$(map_field "$WORK/out-nopin" "$f" verdict)
        msg=$(map_field "$WORK/out-nopin" "$f" message)
        ino=$(map_field "$WORK/out-nopin" "$f" inode)
        [ "$v" = changed ] || { cat "$WORK/out-nopin"; fail "$f: verdict '$v', expected 'changed'"; }
        [[ "$msg" == "$f: binary changed since it was mapped (inode $ino, build-id "* ]] || fail "$f: message '$msg'"
        [ ! -e "$WORK/copies-nopin/$(basename "$f")" ] || fail "$f: a file was returned although its identity changed (wrong names)"
        echo "ok: $msg"
done
echo "PASS"
