#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Regenerates the committed binary seed corpora of every libFuzzer target
# (tests/fuzz/corpus/TARGET, described in corpus/README.md) from this tree
# and a build of it. The text corpora (mountinfo, podman-json,
# flatpak-info) are written by hand and left alone. Run it when a format
# changes, look at the diff (the seeds stay small: a few KiB each), commit.
# usage: tests/fuzz/make-seeds.sh [BUILD_DIR]   (default build)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
corpus=$src/tests/fuzz/corpus
. "$(dirname "$0")/../lib/test-lib.sh" # fail, as_user, wait_for
for tool in tests/fuzz/make-seeds tests/capture/test-capture-corpus tests/cli/make-sysprof-capture \
        tests/service/control/trace-writer tests/service/unwind/fuzz-unwind-driver tests/interp/test-python-reader; do
        [ -x "$build/$tool" ] || fail "$build/$tool is missing: build the tree first (ninja -C $build)"
done
tmp=$(mktemp -d /tmp/periscope-seeds.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fresh() { rm -rf "${corpus:?}/$1"; mkdir -p "$corpus/$1"; }

# control-ring, trace-fd: the frames a collector writes (make-seeds.c;
# control-ring/lying-position is written by hand and kept)
"$build/tests/fuzz/make-seeds" "$corpus"

# helper-elf: workload-inline.c (two levels of inlining), -Os with DWARF,
# segments packed (no page padding); the same stripped; its debug sections
# zlib-compressed; the stripped one with Fedora-style MiniDebugInfo (its
# function symbols in an xz-compressed ELF in .gnu_debugdata); a bare
# ELF header
fresh helper-elf
e=$corpus/helper-elf
gcc -Os -g -ffile-prefix-map="$src"=. -Wl,-z,noseparate-code -Wl,--build-id -I "$src/tests/sandbox-helper" \
        -o "$e/inline" "$src/tests/sandbox-helper/workload-inline.c"
strip -o "$e/stripped" "$e/inline"
objcopy --compress-debug-sections=zlib "$e/inline" "$e/compressed-debug"
nm "$e/inline" --format=posix --defined-only | awk '$2 ~ /^[Tt]$/ { print $1 }' >"$tmp/functions"
objcopy --only-keep-debug "$e/inline" "$tmp/mini"
objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols="$tmp/functions" "$tmp/mini"
xz -9 "$tmp/mini"
objcopy --add-section .gnu_debugdata="$tmp/mini.xz" "$e/stripped" "$e/minidebuginfo"
printf '\177ELF\002\001\001' >"$e/header-only"

# helper-answers: a valid one-address SYMBOLIZE answer ("main", from the
# symbol table), as fuzz-client.c reads it (2 bytes of choice, then the
# payload)
fresh helper-answers
printf '\000\000\001\000\000\000\001\000\000\000\000\001\000\000\000\001\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\004\000\000\000main\000\000\000\000' \
        >"$corpus/helper-answers/symbolize"

# jit-files: a perf map as node writes it; the jitdump of jitdump-writer.c
# (LOAD, DEBUG_INFO, MOVE, CLOSE)
fresh jit-files
printf '1010 10 JS:*fib /app/fib.js:1:13\n0x2000 0x40 LazyCompile:~main app.js:5\n' >"$corpus/jit-files/perf-map"
gcc -O2 -o "$tmp/jitdump-writer" "$src/tests/sandbox-helper/jitdump-writer.c"
mkdir "$tmp/jit"
"$tmp/jitdump-writer" "$tmp/jit" 1 >/dev/null
mv "$tmp"/jit/jit-*.dump "$corpus/jit-files/jitdump"

# unwind-tables: the fuzz driver's seed (fuzz-unwind.c make_seed())
fresh unwind-tables
"$build/tests/service/unwind/fuzz-unwind-driver" --dump-seed "$corpus/unwind-tables/seed"

# python-frames: a synthetic process of each version, two threads, frames
# with and without shims (test-python-reader --seeds)
fresh python-frames
"$build/tests/interp/test-python-reader" --seeds "$corpus/python-frames"

# capture-reader: the hand-broken and valid captures of
# tests/capture/capture-corpus.c; two Sysprof-written captures
# (libsysprof-capture-4's writer): the report fixture with its
# __symbols__ table, and a program's trace fd (marks, logs, a counter, a
# JITMAP, samples)
fresh capture-reader
"$build/tests/capture/test-capture-corpus" --write "$corpus/capture-reader" >/dev/null
"$build/tests/cli/make-sysprof-capture" "$corpus/capture-reader/sysprof-report-fixture"
SYSPROF_TRACE_FD=3 "$build/tests/service/control/trace-writer" env 3<>"$corpus/capture-reader/sysprof-trace-fd" >/dev/null
# without their .syscap suffix: git ignores captures elsewhere
for f in "$corpus"/capture-reader/*.syscap; do mv "$f" "${f%.syscap}"; done
chmod 644 "$corpus"/*/*

for d in "$corpus"/*/; do
        printf '%-16s %3d files %7d bytes\n' "$(basename "$d")" "$(find "$d" -type f | wc -l)" "$(cat "$d"/* | wc -c)"
done
