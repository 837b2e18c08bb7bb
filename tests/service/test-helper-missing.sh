#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A helper that cannot start (missing) or dies (killed by SIGSEGV on every
# start) does not look like success: `periscope record` says what is
# missing (names, and with --unwind dwarf the DWARF stacks), the capture's
# statistics and `periscope info` count it, and record exits 1 although
# the command succeeded, because nothing in user space could be named. With
# the real helper the same recording names its frames and exits 0.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${DEMO:?}" "${PERISCOPE_HELPER:?}"
real_helper=$PERISCOPE_HELPER
private_bus_start

crasher=$TEST_TMP/crashing-helper
printf '#!/bin/sh\nkill -SEGV $$\n' >"$crasher"
chmod 755 "$crasher"

# daemon_with HELPER: (re)starts periscoped with that helper
daemon_with() {
        if [ -n "${PERISCOPED_PID:-}" ]; then
                kill "$PERISCOPED_PID"
                wait "$PERISCOPED_PID" 2>/dev/null || true
        fi
        PERISCOPE_HELPER=$1 periscoped_start
}

# record_with NAME: records DEMO with DWARF unwinding into NAME.syscap;
# sets status, err (record's stderr) and info (periscope info)
record_with() {
        status=0
        "$PERISCOPE" record --address "$BUS_ADDRESS" --unwind dwarf -o "$TEST_TMP/$1.syscap" -- "$DEMO" -t 600 \
                >/dev/null 2>"$TEST_TMP/$1.err" || status=$?
        err=$(cat "$TEST_TMP/$1.err")
        info=$("$PERISCOPE" info "$TEST_TMP/$1.syscap") || fail "$1: periscope info failed"
}

for case in missing crashing; do
        if [ $case = missing ]; then daemon_with /nonexistent/periscope-helper; else daemon_with "$crasher"; fi
        record_with $case
        echo "$err"
        [ $status = 1 ] || fail "$case helper: record exited $status, expected 1 (nothing could be named)"
        n=$(sed -n 's/^periscope: \([0-9]*\) files\{0,1\} unresolved: helper failed.*/\1/p' <<<"$err")
        [ -n "$n" ] && [ "$n" -gt 0 ] || fail "$case helper: the summary does not count the files the helper failed on"
        grep >/dev/null -E "names missing for [0-9]+ of them" <<<"$err" || fail "$case helper: the summary does not say names are missing"
        grep >/dev/null -E "DWARF stacks missing for [0-9]+ of them" <<<"$err" ||
                fail "$case helper: the summary does not say DWARF stacks are missing"
        grep >/dev/null "the helper named nothing" <<<"$err" || fail "$case helper: the summary does not say nothing was named"
        grep >/dev/null -x "Files unresolved (helper failed): $n" <<<"$info" ||
                { echo "$info"; fail "$case helper: info does not count the $n failures"; }
        grep >/dev/null -E "^  of them without unwind tables \(DWARF stacks missing\): [1-9][0-9]*$" <<<"$info" ||
                { echo "$info"; fail "$case helper: info does not count the missing unwind tables"; }
        grep >/dev/null -E "^User-space addresses named: 0 of [1-9][0-9]*$" <<<"$info" ||
                { echo "$info"; fail "$case helper: info does not say that no user address was named"; }
        grep >/dev/null -E "^  helper_failures=$n$" <<<"$info" || { echo "$info"; fail "$case helper: the capture's stats lack helper_failures=$n"; }
        echo "ok: $case helper: said (names, DWARF stacks), counted ($n), exit status 1"
done

daemon_with "$real_helper"
record_with working
[ $status = 0 ] || { echo "$err"; fail "with the real helper record exited $status"; }
grep >/dev/null "helper failed\|named nothing" <<<"$err" && { echo "$err"; fail "the real helper is said to have failed"; }
named=$(sed -n 's/^User-space addresses named: \([0-9]*\) of [0-9]*$/\1/p' <<<"$info")
[ -n "$named" ] && [ "$named" -gt 0 ] || { echo "$info"; fail "with the real helper no user address is named"; }
echo "ok: the real helper: $named user addresses named, exit status 0"
