#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Builds the capture reader's libFuzzer target with clang
# (-fsanitize=fuzzer,address,undefined), runs it over the committed corpus
# (tests/fuzz/corpus/capture-reader: hand-broken and valid captures,
# Sysprof-written ones) and the hand-broken corpus as this tree writes it,
# then fuzzes for a bounded time. Any crash,
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
# build, corpus, bounded fuzzing: the runner every fuzz target shares
"$src/tests/fuzz/fuzz.sh" "$src" capture-reader "$seconds" "$tmp/seeds"
