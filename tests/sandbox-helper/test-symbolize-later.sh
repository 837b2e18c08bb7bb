#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `periscope symbolize` names afterwards what a recording could not: a
# stripped copy of a test program (its debug file split off with objcopy
# --only-keep-debug) is recorded, its frames are file-offset rows; then
# `periscope symbolize --debug-dir` finds the debug file by build-id and the
# names appear in `periscope report` and in what Sysprof's own resolver
# reads (__symbols__); then without any copy of the binary, from the
# debug file alone, and fetched with --debuginfod; only PLT stubs, which no symbol covers, may stay
# offset rows. A second run finds an unstripped copy at DIR/<path>.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${SRCDIR:?}" "${SYSPROF_NAMES:?}"
full=$TEST_TMP/spin-full
w=$TEST_TMP/spin
gcc -O2 -g -fno-omit-frame-pointer -o "$full" "$SRCDIR/workload-spin.c" || fail "cannot build the workload (gcc)"
objcopy --only-keep-debug "$full" "$TEST_TMP/spin.debug" || fail "objcopy --only-keep-debug failed"
strip -o "$w" "$full" || fail "strip failed"
bid=$(build_id_of "$w")
cap=$TEST_TMP/spin.syscap
record_to "$cap" "$w" 1500
cp "$cap" "$TEST_TMP/recorded.syscap"

share() { # FOLDED REGEX: share of samples with a frame matching REGEX
        "$PYTHON" - "$1" "$2" <<'PY'
import re, sys
tot = hit = 0
for l in open(sys.argv[1]):
    s, _, n = l.rstrip("\n").rpartition(" ")
    tot += int(n)
    if any(re.fullmatch(sys.argv[2], f) for f in s.split(";")):
        hit += int(n)
print("%.3f" % (hit / max(tot, 1)))
PY
}
# CAPTURE REGEX MIN WHAT: the share of CAPTURE's samples with a frame
# matching REGEX, which must be at least MIN, else WHAT did not name them
named_share() {
        "$PERISCOPE" report --no-progress --folded "$1" >"$1.folded"
        local got
        got=$(share "$1.folded" "$2")
        "$PYTHON" -c "import sys; sys.exit(0 if $got >= $3 else 1)" || fail "$4 did not name the frames ($got)"
        echo "$got"
}
"$PERISCOPE" report --no-progress --folded "$cap" >"$TEST_TMP/before"
before=$(share "$TEST_TMP/before" 'spin\+0x[0-9a-f]+')
echo "before: $before of the samples in spin+0xOFFSET rows"
"$PYTHON" -c "import sys; sys.exit(0 if $before >= 0.8 else 1)" || { head "$TEST_TMP/before"; fail "the stripped workload's frames are not offset rows"; }

# a missing debug dir is a usage error and changes nothing
"$PERISCOPE" symbolize --debug-dir "$TEST_TMP/nonexistent" "$cap" >"$TEST_TMP/err" 2>&1 && fail "a missing --debug-dir was accepted"
grep -q "not a directory" "$TEST_TMP/err" || { cat "$TEST_TMP/err"; fail "no clear error for a missing --debug-dir"; }
cmp -s "$cap" "$TEST_TMP/recorded.syscap" || fail "a failed symbolize changed the capture"

dbg=$TEST_TMP/debug
mkdir -p "$dbg/.build-id/${bid:0:2}"
cp "$TEST_TMP/spin.debug" "$dbg/.build-id/${bid:0:2}/${bid:2}.debug"
out=$TEST_TMP/named.syscap
"$PERISCOPE" symbolize --debug-dir "$dbg" -o "$out" "$cap" >"$TEST_TMP/sym.out" 2>&1 ||
        { cat "$TEST_TMP/sym.out"; fail "periscope symbolize failed"; }
cat "$TEST_TMP/sym.out"
grep -q "spin (build-id $bid): [1-9][0-9]* of" "$TEST_TMP/sym.out" || fail "symbolize did not name the workload's addresses"
cmp -s "$cap" "$TEST_TMP/recorded.syscap" || fail "-o OUT changed the input capture"
"$PERISCOPE" report --no-progress --folded "$out" >"$TEST_TMP/after"
after=$(share "$TEST_TMP/after" 'spin_function')
inl=$(share "$TEST_TMP/after" 'spin_inner \(inlined\)')
left=$(share "$TEST_TMP/after" 'spin\+0x[0-9a-f]+')
echo "after: $after of the samples in spin_function, $inl in spin_inner (inlined), $left in offset rows"
"$PYTHON" -c "import sys; sys.exit(0 if $after >= 0.8 and $inl >= 0.5 and $left <= 0.01 else 1)" ||
        { head "$TEST_TMP/after"; fail "periscope report does not show the names symbolize found"; }
"$PERISCOPE" report --no-progress --mappings "$out" | grep >/dev/null "named later by periscope symbolize" ||
        fail "the mapping record does not say where the names came from"
"$PERISCOPE" info "$out" >/dev/null || fail "periscope info cannot read the rewritten capture"

# Sysprof's own resolver reads the new names from __symbols__
"$SYSPROF_NAMES" "$out" | sort -rn >"$TEST_TMP/sysprof"
head -5 "$TEST_TMP/sysprof"
"$PYTHON" - "$TEST_TMP/sysprof" <<'PY' || fail "Sysprof does not see the names"
import sys
rows = [l.split(" ", 1) for l in open(sys.argv[1]).read().splitlines()]
count = {name: int(n) for n, name in rows}
main, spin = count.get("main", 0), count.get("spin_function", 0)
print("Sysprof: %d samples run main, %d of them spin_function" % (main, spin))
sys.exit(0 if main >= 100 and spin >= 0.9 * main else 1)
PY

# --debuginfod: the debug file from a server on 127.0.0.1, asked only then
mkdir "$TEST_TMP/served"
cp "$TEST_TMP/spin.debug" "$TEST_TMP/served/"
. "$SRCDIR/debuginfod-server.sh"
debuginfod_start "$TEST_TMP/served"
export DEBUGINFOD_URLS=$DEBUGINFOD_URL DEBUGINFOD_CACHE_PATH=$TEST_TMP/cache
"$PERISCOPE" symbolize -o "$TEST_TMP/off.syscap" "$cap" >"$TEST_TMP/off.out" 2>&1 || { cat "$TEST_TMP/off.out"; fail "symbolize failed"; }
grep -q "spin (build-id $bid): 0 of" "$TEST_TMP/off.out" || { cat "$TEST_TMP/off.out"; fail "names without --debuginfod (was the server asked?)"; }
"$PERISCOPE" symbolize --debuginfod -o "$TEST_TMP/on.syscap" "$cap" >"$TEST_TMP/on.out" 2>&1 || { cat "$TEST_TMP/on.out"; fail "symbolize --debuginfod failed"; }
# the debug file comes from the fetcher (periscope-debuginfod-fetch), which
# hands over an fd: it is named "debuginfod", not by a path
grep -q "spin (build-id $bid): [1-9][0-9]* of .*debug file debuginfod$" "$TEST_TMP/on.out" ||
        { cat "$TEST_TMP/on.out"; fail "--debuginfod did not fetch the debug file"; }
on=$(named_share "$TEST_TMP/on.syscap" 'spin_inner \(inlined\)' 0.5 --debuginfod)
echo "ok: --debuginfod names them ($on of the samples in spin_inner (inlined)); without it the server is not asked"
unset DEBUGINFOD_URLS

# as on another machine: no copy of the binary, the debug file alone
rm -f "$w"
"$PERISCOPE" symbolize --debug-dir "$dbg" -o "$TEST_TMP/alone.syscap" "$cap" >"$TEST_TMP/sym3.out" 2>&1 ||
        { cat "$TEST_TMP/sym3.out"; fail "symbolize with the debug file alone failed"; }
grep -q "spin (build-id $bid): [1-9][0-9]* of .*debug file .*\.debug alone" "$TEST_TMP/sym3.out" ||
        { cat "$TEST_TMP/sym3.out"; fail "the debug file alone was not used"; }
alone=$(named_share "$TEST_TMP/alone.syscap" 'spin_inner \(inlined\)' 0.5 "the debug file alone")
echo "ok: the debug file alone names them ($alone of the samples in spin_inner (inlined))"

# in place, from an unstripped copy at DIR/<path>
tree=$TEST_TMP/sysroot
mkdir -p "$tree$(dirname "$w")"
cp "$full" "$tree$w"
"$PERISCOPE" symbolize -d "$tree" "$cap" >"$TEST_TMP/sym2.out" 2>&1 || { cat "$TEST_TMP/sym2.out"; fail "symbolize in place failed"; }
grep -q "spin (build-id $bid): [1-9][0-9]* of .*; $tree$w" "$TEST_TMP/sym2.out" || { cat "$TEST_TMP/sym2.out"; fail "DIR/<path> not used"; }
after2=$(named_share "$cap" 'spin_function' 0.8 "in-place symbolize")
echo "ok: named in place from $tree$w ($after2 of the samples in spin_function)"
