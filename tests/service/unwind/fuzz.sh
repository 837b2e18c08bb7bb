#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# libFuzzer (clang, ASan+UBSan) over the unwind table validator and the
# executor, from the committed seed corpus tests/fuzz/corpus/unwind-tables
# (the driver's seed, fuzz-unwind-driver --dump-seed), through
# tests/fuzz/fuzz.sh. Fails on any crash, leak or sanitizer report.
# usage: fuzz.sh SRCROOT RUNS
# (RUNS may be SECONDSs, e.g. 600s: fuzz that long; tests/fuzz/run-long.sh)
set -euo pipefail
src=$1
runs=${2:-200000}
limit=runs:$runs
[[ $runs != *s ]] || limit=${runs%s}
exec "$src/tests/fuzz/fuzz.sh" "$src" unwind-tables "$limit"
