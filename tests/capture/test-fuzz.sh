#!/usr/bin/env bash
# Builds the capture reader's libFuzzer target with clang
# (-fsanitize=fuzzer,address,undefined), runs it over the corpus of
# hand-broken and valid captures, then fuzzes for a bounded time. Any crash,
# sanitizer report, leak or timeout fails the test; the input is kept and
# printed so it can be replayed with fuzz-corpus-main.
# Usage: test-fuzz.sh SOURCE_ROOT TEST_CAPTURE_CORPUS SECONDS
set -euo pipefail
src=$1
corpus_tool=$2
seconds=${3:-20}

clang=$(command -v clang || command -v clang-14 || true)
[ -n "$clang" ] || { echo "FAIL: clang is missing (apt-get install -y clang libclang-rt-14-dev)"; exit 1; }

tmp=$(mktemp -d)
keep=0
trap '[ $keep = 1 ] || rm -rf "$tmp"' EXIT

# -fsanitize=fuzzer needs libclang-rt-14-dev; say so if the link fails.
if ! "$clang" -g -O1 -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-unused-parameter \
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
        -I"$src/basic" -I"$src/capture" \
        "$src/capture/capture-reader.c" "$src/tests/capture/fuzz-capture-reader.c" \
        -o "$tmp/fuzz-capture-reader" 2>"$tmp/cc.log"; then
        cat "$tmp/cc.log"
        echo "FAIL: building the fuzzer failed (is libclang-rt-14-dev installed?)"
        exit 1
fi
echo "built fuzz-capture-reader with $("$clang" --version | head -1)"

"$corpus_tool" --write "$tmp/seeds" >/dev/null
n=$(ls "$tmp/seeds" | wc -l)
[ "$n" -ge 25 ] || { echo "FAIL: only $n corpus files"; exit 1; }
mkdir "$tmp/work" "$tmp/crash"

export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1
export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:print_stacktrace=1

fail() {
        keep=1
        tail -40 "$1"
        for f in "$tmp"/crash/*; do
                [ -e "$f" ] || continue
                echo "crashing input kept at $f (replay: fuzz-corpus-main $f):"
                od -A d -t x1 "$f" | head -20
        done
        echo "FAIL: $2"
        exit 1
}

# 1. every corpus file, no mutation
"$tmp/fuzz-capture-reader" -runs=0 -artifact_prefix="$tmp/crash/" "$tmp/seeds" >"$tmp/corpus.log" 2>&1 ||
        fail "$tmp/corpus.log" "the fuzz target crashed on the corpus"
grep -q "INITED" "$tmp/corpus.log" || fail "$tmp/corpus.log" "libFuzzer did not run the corpus"
echo "ok corpus of $n captures ran clean under ASan+UBSan"

# 2. bounded fuzzing from the corpus
"$tmp/fuzz-capture-reader" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=131072 \
        -print_final_stats=1 -artifact_prefix="$tmp/crash/" "$tmp/work" "$tmp/seeds" >"$tmp/fuzz.log" 2>&1 ||
        fail "$tmp/fuzz.log" "fuzzing found a crash"
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/fuzz.log")
cov=$(grep -o 'cov: [0-9]*' "$tmp/fuzz.log" | tail -1)
echo "ok fuzzed ${seconds}s: ${runs:-?} inputs, $cov, no crash"
