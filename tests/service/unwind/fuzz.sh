#!/bin/bash
# Builds the libFuzzer target over the unwind table validator and the
# executor with clang (ASan+UBSan+libFuzzer) and runs it for a fixed number
# of inputs from a seed written by the plain driver's seed code. Fails on any
# crash, leak or sanitizer report.  usage: fuzz.sh SRCROOT RUNS
# (RUNS may be SECONDSs, e.g. 600s: fuzz that long; tests/fuzz/run-long.sh)
set -euo pipefail
src=$1
runs=${2:-200000}
limit=(-runs="$runs")
[[ $runs != *s ]] || limit=(-max_total_time="${runs%s}")
command -v clang >/dev/null || { echo "clang is missing: apt-get install -y clang libclang-rt-14-dev"; exit 1; }
tmp=$(mktemp -d /tmp/periscope-unwind-fuzz.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE -std=gnu11 \
        -DUNWIND_FUZZ_LIBFUZZER -I "$src/basic" -I "$src/protocol" -I "$src/service/unwind" \
        "$src/tests/service/unwind/fuzz-unwind.c" "$src/protocol/unwind-table.c" "$src/service/unwind/unwinder.c" \
        "$src/tests/service/unwind/unwind-maps.c" -o "$tmp/fuzz-unwind" || {
        echo "building the fuzz target failed (clang with libclang-rt-14-dev needed)"; exit 1; }
# Seed corpus: the driver's seed, dumped by a one-off build of the driver.
clang -O1 -D_GNU_SOURCE -std=gnu11 -I "$src/basic" -I "$src/protocol" -I "$src/service/unwind" \
        "$src/tests/service/unwind/fuzz-unwind.c" "$src/protocol/unwind-table.c" "$src/service/unwind/unwinder.c" \
        "$src/tests/service/unwind/unwind-maps.c" -o "$tmp/seed-driver"
mkdir "$tmp/corpus"
"$tmp/seed-driver" --dump-seed "$tmp/corpus/seed"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$tmp"
"$tmp/fuzz-unwind" -seed=1 "${limit[@]}" -max_len=8192 -rss_limit_mb=2048 -timeout=20 corpus 2>&1 | tail -5
echo "fuzz: ${limit[*]} without a crash"
