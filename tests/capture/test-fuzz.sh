#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Builds the capture reader's libFuzzer target with clang
# (-fsanitize=fuzzer,address,undefined), runs it over the committed corpus
# (tests/fuzz/corpus/capture-reader: hand-broken and valid captures,
# Sysprof-written ones), the hand-broken corpus as this tree writes it and
# a capture merged by `sysprof-cli --merge`, then fuzzes for a bounded time. Any crash,
# sanitizer report, leak or timeout fails the test; the input is kept and
# printed so it can be replayed with fuzz-corpus-main.
# Usage: test-fuzz.sh SOURCE_ROOT TEST_CAPTURE_CORPUS SECONDS|runs:N
set -euo pipefail
src=$1
corpus_tool=$2
seconds=${3:-20}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$corpus_tool" --write "$tmp/seeds" >/dev/null
n=$(ls "$tmp/seeds" | wc -l)
[ "$n" -ge 25 ] || { echo "FAIL: only $n corpus files"; exit 1; }
# a merged capture as Sysprof writes one: one header, every part's frames
# and symbol tables after it
command -v sysprof-cli >/dev/null || { echo "FAIL: sysprof-cli missing: apt-get install -y sysprof"; exit 1; }
sysprof-cli --merge "$tmp/seeds/valid-all-types.syscap" "$src/tests/fuzz/corpus/capture-reader/sysprof-report-fixture" \
        >"$tmp/seeds/merged.syscap" || { echo "FAIL: sysprof-cli --merge failed"; exit 1; }
# build, corpus, bounded fuzzing: the runner every fuzz target shares
"$src/tests/fuzz/fuzz.sh" "$src" capture-reader "$seconds" "$tmp/seeds"
