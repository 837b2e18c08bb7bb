#!/usr/bin/env bash
# Builds one libFuzzer target of tests/fuzz with clang
# (-fsanitize=fuzzer,address,undefined), runs it over its committed seed
# corpus (tests/fuzz/corpus/TARGET), then fuzzes for SECONDS. Any crash,
# sanitizer report, leak or timeout fails; the input is kept and printed.
# usage: fuzz.sh SOURCE_ROOT TARGET SECONDS [SEEDS]
#   TARGET: control-ring | trace-fd | mountinfo | podman-json | flatpak-info |
#           capture-reader (tests/capture/test-fuzz.sh gives its SEEDS)
# (the helper's ELF/DWARF parsing and the unwind tables have their targets
# in tests/sandbox-helper and tests/service/unwind; tests/fuzz/run-long.sh
# runs them all.)
set -euo pipefail
src=$1
target=$2
seconds=${3:-5}
corpus=${4:-$src/tests/fuzz/corpus/$target}

clang=$(command -v clang || command -v clang-14 || true)
[ -n "$clang" ] || { echo "FAIL: clang is missing (apt-get install -y clang libclang-rt-14-dev)"; exit 1; }
[ -d "$corpus" ] || { echo "FAIL: no seed corpus at $corpus"; exit 1; }

basic=("$src/basic/io-util.c" "$src/basic/log.c" "$src/basic/safe-open.c" "$src/basic/sort-util.c")
includes=(-I"$src/basic" -I"$src/tests/fuzz")
libs=()
main=$src/tests/fuzz/fuzz-$target.c
max_len=65536
case $target in
capture-reader)
        main=$src/tests/capture/fuzz-capture-reader.c
        sources=("$src/capture/capture-reader.c")
        includes+=(-I"$src/capture")
        max_len=131072 ;;
control-ring)
        sources=("$src/service/control/control-ring.c" "$src/service/control/counter-remap.c" "$src/service/control/frame-copy.c"
                 "$src/capture/capture-reader.c" "$src/capture/capture-writer.c" "$src/capture/symbols.c" "${basic[@]}")
        includes+=(-I"$src/capture" -I"$src/service/control" -I"$src/service/counters")
        libs=(-lsystemd) ;;
trace-fd)
        sources=("$src/service/control/trace-fd.c" "$src/service/control/counter-remap.c" "$src/service/control/frame-copy.c"
                 "$src/capture/capture-reader.c" "$src/capture/capture-writer.c" "$src/capture/symbols.c" "${basic[@]}")
        includes+=(-I"$src/capture" -I"$src/service/control" -I"$src/service/counters") ;;
mountinfo)
        sources=("$src/resolver/mountinfo.c" "${basic[@]}")
        includes+=(-I"$src/resolver") ;;
podman-json|flatpak-info)
        # parsed in the sandbox helper (json-glib, GKeyFile)
        sources=("$src/sandbox-helper/podman-json.c" "$src/sandbox-helper/flatpak-info.c"
                 "$src/protocol/helper-protocol.c" "${basic[@]}")
        includes+=(-I"$src/sandbox-helper" -I"$src/protocol" $(pkg-config --cflags json-glib-1.0))
        libs=($(pkg-config --libs json-glib-1.0)) ;;
*)
        echo "FAIL: unknown target '$target'"; exit 1 ;;
esac

tmp=$(mktemp -d /tmp/periscope-fuzz-$target.XXXXXX)
keep=0
trap '[ $keep = 1 ] || rm -rf "$tmp"' EXIT
if ! "$clang" -g -O1 -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-unused-parameter \
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all "${includes[@]}" \
        "$main" "${sources[@]}" "${libs[@]}" -o "$tmp/fuzz-$target" 2>"$tmp/cc.log"; then
        cat "$tmp/cc.log"
        echo "FAIL: building fuzz-$target failed (is libclang-rt-14-dev installed?)"
        exit 1
fi
n=$(find "$corpus" -type f | wc -l)

export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1
export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:print_stacktrace=1
mkdir "$tmp/work" "$tmp/crash"
fail() {
        keep=1
        tail -40 "$1"
        for f in "$tmp"/crash/*; do
                [ -e "$f" ] || continue
                echo "crashing input kept at $f (replay: $tmp/fuzz-$target $f):"
                od -A d -t x1 "$f" | head -20
        done
        echo "FAIL: $2"
        exit 1
}

# 1. every seed, no mutation
"$tmp/fuzz-$target" -runs=0 -artifact_prefix="$tmp/crash/" "$corpus" >"$tmp/corpus.log" 2>&1 ||
        fail "$tmp/corpus.log" "fuzz-$target crashed on its seed corpus"
grep -q "INITED" "$tmp/corpus.log" || fail "$tmp/corpus.log" "libFuzzer did not run the corpus"
echo "ok fuzz-$target: $n seeds ran clean under ASan+UBSan"

# 2. bounded fuzzing from the seeds (new inputs go to a scratch corpus)
"$tmp/fuzz-$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$max_len" \
        -print_final_stats=1 -artifact_prefix="$tmp/crash/" "$tmp/work" "$corpus" >"$tmp/fuzz.log" 2>&1 ||
        fail "$tmp/fuzz.log" "fuzzing fuzz-$target found a crash"
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/fuzz.log")
cov=$(grep -o 'cov: [0-9]*' "$tmp/fuzz.log" | tail -1)
echo "ok fuzz-$target: fuzzed ${seconds}s, ${runs:-?} inputs, $cov, no crash"
