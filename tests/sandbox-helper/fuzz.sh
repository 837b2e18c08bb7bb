#!/bin/bash
# Builds the libFuzzer target over the helper's parsing entry points with
# clang (ASan+UBSan+libFuzzer) and runs it for a fixed number of inputs from
# a seed corpus of real ELF files. Fails on any crash, leak or sanitizer report.
# usage: fuzz.sh SRCROOT RUNS (or SECONDSs, e.g. 600s: fuzz each target that long; tests/fuzz/run-long.sh)
set -euo pipefail
src=$1
runs=${2:-3000}
if [[ $runs == *s ]]; then
        helper_limit=(-max_total_time="${runs%s}") client_limit=(-max_total_time="${runs%s}")
        jit_limit=(-max_total_time="${runs%s}")
else
        helper_limit=(-runs="$runs") client_limit=(-runs="$((runs * 10))") jit_limit=(-runs="$((runs * 3))")
fi
command -v clang >/dev/null || { echo "clang is missing: apt-get install -y clang libclang-rt-14-dev"; exit 1; }
tmp=$(mktemp -d /tmp/periscope-fuzz.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
h=$src/sandbox-helper
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE -std=gnu11 \
        -I "$src/basic" -I "$src/protocol" -I "$h" \
        "$src/tests/sandbox-helper/fuzz-helper.c" "$h/demangle.c" "$h/dwarf-functions.c" "$h/dwarf-scopes.c" "$h/elf-identify.c" "$h/helper-server.c" \
        "$h/minidebuginfo.c" "$h/decompress-limits.c" "$h/symbol-index.c" "$h/symbolize-module.c" "$h/symbolize-request.c" "$h/unwind-compile.c" "$src/protocol/helper-protocol.c" \
        "$h/jit-names.c" "$h/perf-map.c" "$h/jitdump.c" \
        "$h/podman-json.c" "$h/flatpak-info.c" "$src/basic/io-util.c" "$src/basic/safe-open.c" \
        $(pkg-config --cflags --libs json-glib-1.0) -lelf -ldw -llzma -liberty -o "$tmp/fuzz-helper" || {
        echo "building the fuzz target failed (clang with libclang-rt-14-dev needed)"; exit 1; }
# the service side: validation of answers from a (possibly compromised) helper
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE -std=gnu11 \
        -DPERISCOPE_LIBEXECDIR='"/nonexistent"' -I "$src/basic" -I "$src/protocol" -I "$src/helper-client/" \
        "$src/tests/sandbox-helper/fuzz-client.c" "$src/helper-client/helper-client.c" "$src/helper-client/helper-client-jit.c" \
        "$src/helper-client/sandbox-launch.c" "$src/helper-client/sandbox-seccomp.c" \
        "$src/protocol/helper-protocol.c" "$src/protocol/unwind-table.c" \
        -lseccomp -o "$tmp/fuzz-client" || { echo "building the client fuzz target failed"; exit 1; }
# the JIT file parsers (perf map, jitdump)
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE -std=gnu11 \
        -I "$src/basic" -I "$src/protocol" -I "$h" \
        "$src/tests/sandbox-helper/fuzz-jit.c" "$h/jit-names.c" "$h/perf-map.c" "$h/jitdump.c" \
        "$src/protocol/helper-protocol.c" "$src/basic/io-util.c" -o "$tmp/fuzz-jit" || {
        echo "building the JIT fuzz target failed"; exit 1; }
mkdir "$tmp/jit-corpus"
# seeds: a perf map as node writes it, and a jitdump from jitdump-writer.c
printf '1010 10 JS:*fib /app/fib.js:1:13\n0x2000 0x40 LazyCompile:~main app.js:5\n' >"$tmp/jit-corpus/perf-map"
gcc -O2 -o "$tmp/jitdump-writer" "$src/tests/sandbox-helper/jitdump-writer.c"
"$tmp/jitdump-writer" "$tmp/jit-corpus" 1 >/dev/null
mkdir "$tmp/client-corpus"
# seed: a valid one-address SYMBOLIZE answer ("main", from the symbol table)
printf '\000\000\001\000\000\000\001\000\000\000\000\001\000\000\000\001\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\004\000\000\000main\000\000\000\000' >"$tmp/client-corpus/symbolize"
mkdir "$tmp/corpus"
# seeds: a small C program with DWARF and inlines, the same stripped, and one with MiniDebugInfo-like sections
gcc -O2 -g -I "$src/tests/sandbox-helper" -o "$tmp/corpus/inline" "$src/tests/sandbox-helper/workload-inline.c"
strip -o "$tmp/corpus/stripped" "$tmp/corpus/inline"
printf '\177ELF\002\001\001' > "$tmp/corpus/header-only"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$tmp"
"$tmp/fuzz-helper" -seed=1 "${helper_limit[@]}" -max_len=65536 -rss_limit_mb=2048 -timeout=20 corpus 2>&1 | tail -25
"$tmp/fuzz-client" -seed=1 "${client_limit[@]}" -max_len=4096 -timeout=20 "$tmp/client-corpus" 2>&1 | tail -3
(cd "$tmp" && "$tmp/fuzz-jit" -seed=1 "${jit_limit[@]}" -max_len=16384 -timeout=20 "$tmp/jit-corpus" 2>&1 | tail -3)
echo "fuzz: helper ${helper_limit[*]}, JIT files ${jit_limit[*]}, answers ${client_limit[*]}: no crash"
