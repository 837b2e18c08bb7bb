#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Builds one libFuzzer target with clang (-fsanitize=fuzzer,address,undefined),
# runs it over its committed seed corpus (tests/fuzz/corpus/TARGET, made by
# tests/fuzz/make-seeds.sh, see corpus/README.md) and any EXTRA seed
# directories, then fuzzes. Any crash, sanitizer report, leak or timeout
# fails; the input is kept and printed. The one place that knows each
# target's sources: whole folders where it can (basic/, the helper's
# parsers), so a file added there needs no edit here.
# usage: fuzz.sh SOURCE_ROOT TARGET LIMIT [EXTRA_SEED_DIR…]
#   TARGET: control-ring | trace-fd | mountinfo | podman-json | flatpak-info |
#           capture-reader | helper-elf | helper-answers | jit-files | unwind-tables |
#           export | python-frames
#   LIMIT:  SECONDS of fuzzing, or runs:N for N inputs from seed 1 (the
#           same inputs every time)
# tests/fuzz/run-long.sh runs them all for longer.
set -euo pipefail
src=$1
target=$2
limit=${3:-5}
shift 3 || shift $#
extra=("$@")
corpus=$src/tests/fuzz/corpus/$target
if [[ $limit == runs:* ]]; then
        fuzz_limit=(-runs="${limit#runs:}" -seed=1) what="from seed 1"
else
        fuzz_limit=(-max_total_time="$limit") what="${limit}s"
fi

clang=$(command -v clang || command -v clang-14 || true)
[ -n "$clang" ] || { echo "FAIL: clang is missing (apt-get install -y clang libclang-rt-14-dev)"; exit 1; }
[ -d "$corpus" ] || { echo "FAIL: no seed corpus at $corpus"; exit 1; }

basic=("$src"/basic/*.c)
# the whole capture library (zlib for Sysprof's __symbols__.gz)
capture=("$src"/capture/*.c)
h=$src/sandbox-helper
# the helper's parsing core: every source of the helper but its main()
helper=()
for f in "$h"/*.c; do [ "$f" = "$h/main.c" ] || helper+=("$f"); done
includes=(-I"$src/basic" -I"$src/tests/fuzz")
cflags=()
libs=()
main=$src/tests/fuzz/fuzz-$target.c
max_len=65536
case $target in
capture-reader)
        main=$src/tests/capture/fuzz-capture-reader.c
        sources=("${capture[@]}" "${basic[@]}")
        includes+=(-I"$src/capture")
        max_len=131072 ;;
control-ring)
        sources=("$src/service/control/control-ring.c" "$src/service/control/counter-remap.c" "$src/service/control/frame-copy.c"
                 "${capture[@]}" "${basic[@]}")
        includes+=(-I"$src/capture" -I"$src/service/control" -I"$src/service/counters")
        libs=(-lsystemd) ;;
trace-fd)
        sources=("$src/service/control/trace-fd.c" "$src/service/control/counter-remap.c" "$src/service/control/frame-copy.c"
                 "${capture[@]}" "${basic[@]}")
        includes+=(-I"$src/capture" -I"$src/service/control" -I"$src/service/counters") ;;
mountinfo)
        sources=("$src/resolver/mountinfo.c" "${basic[@]}")
        includes+=(-I"$src/resolver") ;;
podman-json|flatpak-info|helper-elf)
        # parsed in the sandbox helper (json-glib, GKeyFile; libelf, libdw)
        [ $target != helper-elf ] || main=$src/tests/sandbox-helper/fuzz-helper.c
        sources=("${helper[@]}" "$src/protocol/helper-protocol.c" "$src/protocol/unwind-table.c" "${basic[@]}")
        includes+=(-I"$h" -I"$src/protocol" $(pkg-config --cflags json-glib-1.0))
        libs=($(pkg-config --libs json-glib-1.0) -lelf -ldw -llzma -liberty) ;;
jit-files)
        # the JIT parsers alone (the whole helper would double the build time
        # of sandbox-helper-fuzz, which builds helper-elf too)
        main=$src/tests/sandbox-helper/fuzz-jit.c
        sources=("$h/jit-names.c" "$h/perf-map.c" "$h/jitdump.c" "$src/protocol/helper-protocol.c" "${basic[@]}")
        includes+=(-I"$h" -I"$src/protocol")
        max_len=16384 ;;
helper-answers)
        # the service's side: validation of a (possibly compromised) helper's answers
        main=$src/tests/sandbox-helper/fuzz-client.c
        sources=("$src"/helper-client/helper-client*.c "$src/helper-client/sandbox-launch.c"
                 "$src/helper-client/sandbox-seccomp.c" "$src/protocol/helper-protocol.c"
                 "$src/protocol/unwind-table.c" "${basic[@]}")
        includes+=(-I"$src/protocol" -I"$src/helper-client")
        # (libseccomp's SCMP_A0 macros leave fields to zero)
        cflags=(-DPERISCOPE_LIBEXECDIR='"/nonexistent"' -Wno-missing-field-initializers)
        libs=(-lseccomp)
        max_len=4096 ;;
unwind-tables)
        # the unwind table validator and the executor
        main=$src/tests/service/unwind/fuzz-unwind.c
        sources=("$src/protocol/unwind-table.c" "$src/service/unwind/unwinder.c"
                 "$src/tests/service/unwind/unwind-maps.c" "${basic[@]}")
        includes+=(-I"$src/protocol" -I"$src/service/unwind")
        cflags=(-DUNWIND_FUZZ_LIBFUZZER)
        max_len=8192 ;;
python-frames)
        # service/interp's CPython reader over a synthetic process image
        sources=("$src"/service/interp/*.c "${basic[@]}")
        includes+=(-I"$src/service/interp" -I"$src/tests/interp") ;;
export)
        # periscope export: the model and its four writers on any capture
        # (the report's loader under them), analysis/'s files
        sources=("$src"/analysis/export-model.c "$src"/analysis/export-pprof.c "$src"/analysis/export-protobuf.c
                 "$src"/analysis/export-speedscope.c "$src"/analysis/export-perf-script.c "$src"/analysis/export-folded.c
                 "$src"/analysis/report-load.c "$src"/analysis/report-labels.c "$src"/analysis/report-callgraph.c
                 "$src"/analysis/report-progress.c "$src"/analysis/memory-replay.c "$src"/analysis/report-containers.c
                 "${capture[@]}" "${basic[@]}")
        includes+=(-I"$src/capture" -I"$src/analysis" $(pkg-config --cflags gio-2.0 json-glib-1.0))
        cflags=(-DPERISCOPE_VERSION='"fuzz"' -Wno-missing-field-initializers)
        libs=($(pkg-config --libs gio-2.0 json-glib-1.0) -lz -lm)
        max_len=131072 ;;
*)
        echo "FAIL: unknown target '$target'"; exit 1 ;;
esac
case " ${sources[*]} " in *" $src/capture/symbols.c "*) libs+=(-lz) ;; esac

tmp=$(mktemp -d /tmp/periscope-fuzz-$target.XXXXXX)
keep=0
trap '[ $keep = 1 ] || rm -rf "$tmp"' EXIT
if ! "$clang" -g -O1 -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-unused-parameter \
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all "${includes[@]}" "${cflags[@]}" \
        "$main" "${sources[@]}" "${libs[@]}" -o "$tmp/fuzz-$target" 2>"$tmp/cc.log"; then
        cat "$tmp/cc.log"
        echo "FAIL: building fuzz-$target failed (is libclang-rt-14-dev installed?)"
        exit 1
fi
seeds=("$corpus" "${extra[@]}")
n=$(find "${seeds[@]}" -type f | wc -l)

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
"$tmp/fuzz-$target" -runs=0 -timeout=20 -rss_limit_mb=2048 -artifact_prefix="$tmp/crash/" "${seeds[@]}" \
        >"$tmp/corpus.log" 2>&1 ||
        fail "$tmp/corpus.log" "fuzz-$target crashed on its seed corpus"
grep -q "INITED" "$tmp/corpus.log" || fail "$tmp/corpus.log" "libFuzzer did not run the corpus"
echo "ok fuzz-$target: $n seeds ran clean under ASan+UBSan"

# 2. bounded fuzzing from the seeds (new inputs go to a scratch corpus)
"$tmp/fuzz-$target" "${fuzz_limit[@]}" -timeout=20 -rss_limit_mb=2048 -max_len="$max_len" \
        -print_final_stats=1 -artifact_prefix="$tmp/crash/" "$tmp/work" "${seeds[@]}" >"$tmp/fuzz.log" 2>&1 ||
        fail "$tmp/fuzz.log" "fuzzing fuzz-$target found a crash"
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/fuzz.log")
cov=$(grep -o 'cov: [0-9]*' "$tmp/fuzz.log" | tail -1)
echo "ok fuzz-$target: fuzzed $what, ${runs:-?} inputs, $cov, no crash"
