#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# fuzz-export: the export writers (tests/fuzz/fuzz-export.c) from the
# committed seeds plus captures of every kind this tree writes: the report
# fixtures (symbols, none, a broken table, marks and counters, allocations,
# duplicate maps, a container, thread names after and before their
# samples), Sysprof's own writer's, three of them merged by `sysprof-cli
# --merge`, each also cut in the middle of a frame, and two of them
# concatenated (a merge gone wrong).
# usage: fuzz-export.sh SOURCE_ROOT MAKE_REPORT_CAPTURE MAKE_SYSPROF_CAPTURE LIMIT
set -euo pipefail
src=$1 make_capture=$2 make_sysprof=$3 limit=$4
seeds=$(mktemp -d /tmp/periscope-fuzz-export-seeds.XXXXXX)
trap 'rm -rf "$seeds"' EXIT
for kind in ours nosyms badtable events memory dupmaps container threads threads-early; do
        "$make_capture" $kind "$seeds/$kind" >/dev/null || { echo "FAIL: make-report-capture $kind"; exit 1; }
done
"$make_sysprof" "$seeds/sysprof" >/dev/null || { echo "FAIL: make-sysprof-capture"; exit 1; }
command -v sysprof-cli >/dev/null || { echo "FAIL: sysprof-cli missing: apt-get install -y sysprof"; exit 1; }
sysprof-cli --merge "$seeds/ours" "$seeds/threads" "$seeds/sysprof" >"$seeds/merged" ||
        { echo "FAIL: sysprof-cli --merge failed"; exit 1; }
for f in "$seeds"/*; do
        size=$(stat -c %s "$f")
        head -c $((size * 2 / 3)) "$f" >"$f-cut"
done
cat "$seeds/ours" "$seeds/memory" >"$seeds/concatenated"
exec "$src/tests/fuzz/fuzz.sh" "$src" export "$limit" "$seeds"
