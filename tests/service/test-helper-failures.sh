#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A helper that fails (here: one that exits at once) is counted and said
# everywhere a user looks: the Finished statistics and the record summary,
# the capture's statistics (`periscope info`), and the report's header,
# which then claims no file verified.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${DEMO:?}"
private_bus_start
PERISCOPE_HELPER=/bin/false periscoped_start

# the capture is complete (info reads it below); record exits 1 because
# nothing in user space could be named (test-helper-missing.sh)
st=0
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$TEST_TMP/f.syscap" -- "$DEMO" -t 800 >/dev/null 2>"$TEST_TMP/err" || st=$?
cat "$TEST_TMP/err"
[ $st = 1 ] || fail "record exited $st; expected 1: the helper named nothing"
grep >/dev/null "the capture f.syscap is truncated" "$TEST_TMP/err" && fail "a failing helper must cost names, not the capture"
n=$(sed -n 's/^periscope: \([0-9]*\) files\{0,1\} unresolved: helper failed.*/\1/p' "$TEST_TMP/err")
[ -n "$n" ] && [ "$n" -gt 0 ] || fail "the record summary does not say that the helper failed"

"$PERISCOPE" info "$TEST_TMP/f.syscap" >"$TEST_TMP/info" || fail "info failed"
grep -E "^Files unresolved \(helper failed\): $n$" "$TEST_TMP/info" ||
        { cat "$TEST_TMP/info"; fail "info does not count the $n helper failures"; }

"$PERISCOPE" report --no-progress "$TEST_TMP/f.syscap" >"$TEST_TMP/report" || fail "report failed"
head -12 "$TEST_TMP/report"
grep -E "^[0-9]+ files? unresolved: helper failed" "$TEST_TMP/report" >/dev/null ||
        fail "the report's header does not say that the helper failed"
grep -E "^Symbol sources: [0-9]+ mappings?, 0 verified" "$TEST_TMP/report" >/dev/null ||
        fail "the report claims files verified whose symbols the helper never read"
echo "ok: helper failures counted in the summary ($n), info, and the report's header"
