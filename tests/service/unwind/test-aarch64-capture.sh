#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A capture recorded on arm64 reads on this machine: make-aarch64-capture
# writes what an arm64 periscoped would have (the vectors of aarch64/
# unwound by the aarch64 unwinder, no names yet); `periscope info` says
# aarch64, `report` shows the program's offsets, `symbolize` names them from
# the arm64 program (symbols, the inline frame, source lines) through the
# sandboxed helper, and the exports carry the names.
. "$(dirname "$0")/../../lib/test-lib.sh"
: "${PERISCOPE:?}" "${PERISCOPE_HELPER:?}" "${MAKE_CAPTURE:?}" "${VECTORS:?}"
test_tmpdir
cap=$TEST_TMP/arm64.syscap
"$MAKE_CAPTURE" "$VECTORS" nofp "$cap" 50 || fail "make-aarch64-capture failed"

"$PERISCOPE" info "$cap" >"$TEST_TMP/info" || fail "periscope info failed"
grep >/dev/null '^Architecture: aarch64$' "$TEST_TMP/info" || { cat "$TEST_TMP/info"; fail "info does not say aarch64"; }

# expect FILE REGEX COUNT: FILE has the folded line REGEX with COUNT samples
expect() {
        grep >/dev/null -E "^$2 $3\$" "$1" || { cat "$1"; fail "no '$2 $3' in $(basename "$1")"; }
}
"$PERISCOPE" report --no-progress --folded "$cap" >"$TEST_TMP/before" || fail "report failed"
expect "$TEST_TMP/before" '.*;chain-nofp\+0x[0-9a-f]+;chain-nofp\+0x[0-9a-f]+;chain-nofp\+0x[0-9a-f]+;chain-nofp\+0x[0-9a-f]+;chain-nofp\+0x[0-9a-f]+' 50

dir=$TEST_TMP/sysroot
mkdir -p "$dir/usr/bin"
cp "$VECTORS/chain-nofp" "$dir/usr/bin/"
"$PERISCOPE" symbolize --debug-dir "$dir" -o "$TEST_TMP/named.syscap" "$cap" >"$TEST_TMP/symbolize.out" 2>&1 ||
        { cat "$TEST_TMP/symbolize.out"; fail "symbolize failed"; }
named=$TEST_TMP/named.syscap
"$PERISCOPE" report --no-progress --folded "$named" >"$TEST_TMP/after" || fail "report failed"
expect "$TEST_TMP/after" '.*;main;f3;f2;f1;mix \(inlined\);leaf' 50
# the frame after the trampoline is named by the byte before it (the nop)
expect "$TEST_TMP/after" '.*;main;spin;spin_leaf;[^;]+;on_signal;handler_leaf' 50
"$PERISCOPE" report --no-progress --folded --lines "$named" >"$TEST_TMP/lines" || fail "report --lines failed"
expect "$TEST_TMP/lines" '.*;main at chain\.c:[0-9]+;f3 at chain\.c:[0-9]+;f2 at chain\.c:[0-9]+;f1 at chain\.c:[0-9]+;mix \(inlined\) at chain\.c:[0-9]+;leaf at chain\.c:[0-9]+' 50

for f in pprof speedscope perf-script folded; do
        "$PERISCOPE" export --format "$f" -o "$TEST_TMP/out.$f" "$named" || fail "export $f failed"
done
grep >/dev/null -a 'handler_leaf' "$TEST_TMP/out.speedscope" || fail "speedscope has no handler_leaf"
grep >/dev/null 'chain-nofp' "$TEST_TMP/out.perf-script" || fail "perf-script names no module"
grep >/dev/null -E '^[[:space:]]+[0-9a-f]+ leaf(\+0x[0-9a-f]+)? \(/usr/bin/chain-nofp\)$' "$TEST_TMP/out.perf-script" ||
        { head -20 "$TEST_TMP/out.perf-script"; fail "perf-script has no leaf frame in /usr/bin/chain-nofp"; }
gzip -dc "$TEST_TMP/out.pprof" | grep >/dev/null -a 'chain.c' || fail "pprof has no chain.c"
echo "ok: an arm64 capture reports, symbolizes and exports here"
