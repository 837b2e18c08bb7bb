#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# libFuzzer (clang, ASan+UBSan) over the helper's parsing entry points (ELF,
# DWARF, compressed sections, MiniDebugInfo: helper-elf), its JIT file
# parsers (perf map, jitdump: jit-files) and the service's validation of
# its answers (helper-answers), each from its committed seed corpus
# (tests/fuzz/corpus/TARGET) through tests/fuzz/fuzz.sh. helper-elf also
# gets workload-inline.c as this machine's compiler builds it, with and
# without its symbols. Fails on any crash, leak or sanitizer report.
# usage: fuzz.sh SRCROOT RUNS (or SECONDSs, e.g. 600s: fuzz each target that long; tests/fuzz/run-long.sh)
set -euo pipefail
src=$1
runs=${2:-3000}
if [[ $runs == *s ]]; then
        elf=${runs%s} answers=${runs%s} jit=${runs%s}
else
        elf=runs:$runs answers=runs:$((runs * 10)) jit=runs:$((runs * 3))
fi
tmp=$(mktemp -d /tmp/periscope-fuzz.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/fresh"
gcc -O2 -g -I "$src/tests/sandbox-helper" -o "$tmp/fresh/inline" "$src/tests/sandbox-helper/workload-inline.c"
strip -o "$tmp/fresh/stripped" "$tmp/fresh/inline"
fuzz=$src/tests/fuzz/fuzz.sh
"$fuzz" "$src" helper-elf "$elf" "$tmp/fresh"
"$fuzz" "$src" helper-answers "$answers"
"$fuzz" "$src" jit-files "$jit"
