#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Fuzzes every parser of untrusted input for SECONDS each (the suite gives
# them a few seconds; run this before a release or after touching a
# parser): control-ring frames, trace fd captures, mountinfo, Podman's storage JSON,
# /.flatpak-info (tests/fuzz/fuzz.sh), the capture reader
# (tests/capture/test-fuzz.sh), the helper's ELF/DWARF, perf map and
# jitdump parsing and the service's validation of its answers
# (tests/sandbox-helper/fuzz.sh), the
# unwind table validator and executor (tests/service/unwind/fuzz.sh).
# Each starts from its committed seeds (tests/fuzz/corpus/TARGET).
# Stops at the first crash, whose input the failing script keeps and prints.
# usage: tests/fuzz/run-long.sh [SECONDS [BUILD_DIR]]   (default 600, build)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-600}
build=${2:-$src/build}
corpus_tool=$build/tests/capture/test-capture-corpus
[ -x "$corpus_tool" ] || { echo "FAIL: $corpus_tool is missing: build the tree first (ninja -C $build)"; exit 1; }

run() { # NAME COMMAND…
        local name=$1; shift
        echo "== $name (${seconds}s)"
        "$@" || { echo "FAIL: $name"; exit 1; }
}
for target in control-ring trace-fd mountinfo podman-json flatpak-info; do
        run "$target" "$src/tests/fuzz/fuzz.sh" "$src" "$target" "$seconds"
done
run capture-reader "$src/tests/capture/test-fuzz.sh" "$src" "$corpus_tool" "$seconds"
run helper-elf-dwarf-jit "$src/tests/sandbox-helper/fuzz.sh" "$src" "${seconds}s"
run unwind-tables "$src/tests/service/unwind/fuzz.sh" "$src" "${seconds}s"
echo "all targets fuzzed ${seconds}s each without a crash"
