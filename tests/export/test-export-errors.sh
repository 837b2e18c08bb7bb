#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `periscope export` on bad input says what is wrong and loses nothing:
# unknown or missing format (exit 2, the formats listed), a missing, foreign
# or truncated capture (exit 1, the reason; a truncated one still exports
# what precedes the damage), an output that cannot be written (exit 1, an
# existing file left as it was), a filter that matches nothing. The report
# fixture (made with Periscope's own writer) exports in every format.
set -uo pipefail
PERISCOPE=$(realpath "$1") MAKE_CAPTURE=$(realpath "$2")
TEST_TMP=$(mktemp -d /tmp/periscope-export-errors.XXXXXX)
trap 'rm -rf "$TEST_TMP"' EXIT
. "$(dirname "$0")/../lib/test-lib.sh" # fail, as_user, wait_for
set +e # this test checks exit statuses itself
cd "$TEST_TMP"
"$MAKE_CAPTURE" ours fx.syscap || fail "cannot write the fixture"

# expect STATUS PATTERN CMD…: the command exits STATUS and its stderr matches PATTERN
expect() {
        local status=$1 pattern=$2
        shift 2
        "$@" >out.txt 2>err.txt
        local st=$?
        [ $st = "$status" ] || { cat err.txt; fail "'$*' exited $st, expected $status"; }
        grep -qE -- "$pattern" err.txt || { cat err.txt; fail "'$*' does not say /$pattern/"; }
        echo "ok: $* → $status: $(head -n1 err.txt)"
}
formats='pprof, speedscope, perf-script, folded'
expect 2 "unknown format 'svg'; the formats are: $formats" "$PERISCOPE" export --format svg fx.syscap
expect 2 "one of: $formats" "$PERISCOPE" export fx.syscap
expect 2 "--pid: 'abc' is not a process id" "$PERISCOPE" export --format folded --pid abc fx.syscap
expect 2 "exactly one capture file" "$PERISCOPE" export --format folded
expect 1 "cannot read the capture: nosuch.syscap: No such file" "$PERISCOPE" export --format folded nosuch.syscap
echo "not a capture" >text.syscap
expect 1 "cannot read the capture: text.syscap: .*capture header" "$PERISCOPE" export --format pprof -o x.pb.gz text.syscap
[ ! -e x.pb.gz ] || fail "a failed export left an output file"

# cut inside a frame: what precedes is exported, the status says it is not all
size=$(stat -c %s fx.syscap)
head -c $((size * 2 / 3)) fx.syscap >cut.syscap
echo "keep me" >cut.folded
expect 1 "cut.syscap is truncated or damaged: offset [0-9]+: .*; exported the [0-9]+ samples before it" \
        "$PERISCOPE" export --format folded -o cut.folded cut.syscap
grep -q "^app+0x1100;app+0x1010 [0-9]*$" cut.folded || { cat cut.folded; fail "the samples before the damage were not exported"; }

# an output that cannot be written: nothing else is touched
touch plainfile
expect 1 "cannot (create|open) plainfile/out.json: .*Not a directory" "$PERISCOPE" export --format speedscope -o plainfile/out.json fx.syscap
echo "keep me" >kept.txt
expect 1 "cannot read the capture" "$PERISCOPE" export --format folded -o kept.txt nosuch.syscap
[ "$(cat kept.txt)" = "keep me" ] || fail "a failed export changed the existing output file"
expect 1 "has no CPU samples of the processes selected by --pid/--comm" "$PERISCOPE" export --format folded --pid 4242 fx.syscap
expect 1 "has no allocation records" "$PERISCOPE" export --format folded --memory fx.syscap

# every format from the fixture, named as the report names them
for f in pprof speedscope perf-script folded; do
        "$PERISCOPE" export --format $f -o "fx.$f" fx.syscap 2>err.txt || { cat err.txt; fail "export --format $f of the fixture failed"; }
        [ -s "fx.$f" ] || fail "export --format $f wrote nothing"
done
grep -q "^main;compute;square_\[i\];add_one_\[i\] 60$" fx.folded || { cat fx.folded; fail "folded: the fixture's inline chain is not main;compute;square;add_one"; }
grep -q "do_syscall_64_\[k\]" fx.folded || fail "folded: the fixture's kernel frame lacks _[k]"
grep -q '"name":"std::vector<int, std::allocator<int> >::push_back(int const&)"' fx.speedscope ||
        fail "speedscope: the fixture's C++ name is missing"
echo "ok: the fixture exports in every format"
