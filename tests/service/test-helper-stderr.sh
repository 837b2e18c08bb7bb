#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 27: a helper's stderr goes through periscoped's logger under the
# helper's own name, never as lines in periscoped's. A stand-in helper
# (stderr-helper.c) writes a plain line, a line posing as periscoped with
# control characters, a 10 000-byte line and a flood; the daemon's log
# holds each as "periscope-helper: uid UID: helper pid PID: …", control
# characters as '?', the long line cut, at most HELPER_LOG_BURST lines per
# helper and interval, and the count of the rest.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${DEMO:?}" "${STDERR_HELPER:?}"
[ "$(id -u)" = 0 ] || fail "runs as root (./test.sh does)"
PERISCOPE_HELPER=$STDERR_HELPER
export PERISCOPE_HELPER
private_bus_start
periscoped_start
log=$TEST_TMP/periscoped.log
# every file is "helper failed" (record says so and exits 1): the capture is there
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$TEST_TMP/demo.syscap" -- "$DEMO" -t 300 >"$TEST_TMP/record.out" 2>&1 || true
grep -q "capture written to" "$TEST_TMP/record.out" || { cat "$TEST_TMP/record.out"; fail "the recording failed"; }
wait_for 10 grep -q "more line(s) not logged" "$log" || { cat "$log"; fail "the flood's count was never logged"; }

prefix='^periscope-helper: uid 0: helper pid [0-9]+: '
grep -E "${prefix}hello from the stand-in helper$" "$log" >/dev/null ||
        { cat "$log"; fail "the helper's line is not logged under its own name"; }
echo "ok: a helper's line is logged as periscope-helper's, with its owner and pid"

# nothing of the helper's reaches the log as periscoped's or raw
if grep -E "^(periscoped: recording 1: finished, |hello from|flood line|long:)" "$log"; then
        fail "a line of the helper's is in the log as it wrote it"
fi
grep -E "${prefix}\?periscoped: recording 1: finished, \?\[2Jforged$" "$log" >/dev/null ||
        { grep forged "$log"; fail "the forged line is not logged with its control characters as '?'"; }
echo "ok: a line posing as periscoped's is the helper's, control characters as '?'"

long=$(grep -m1 -E "${prefix}long:" "$log")
[ -n "$long" ] || fail "the long line is not logged"
text=${long#*long:}
[ ${#text} -le 520 ] && [ ${#text} -ge 400 ] || fail "the long line is not cut near 512 bytes: ${#text} bytes after 'long:'"
echo "ok: a 10 000-byte line is cut to ${#text} bytes"

# per helper start: at most 20 lines in the interval, the rest counted
grep -E "${prefix}" "$log" | sed -E 's/^periscope-helper: uid 0: helper pid ([0-9]+): .*/\1/' | sort | uniq -c >"$TEST_TMP/per-helper"
cat "$TEST_TMP/per-helper"
awk '$1 > 21 { bad = 1 } END { exit !bad }' "$TEST_TMP/per-helper" &&
        fail "a helper had more than 20 lines (and its count) logged in one interval"
grep -E "${prefix}[0-9]+ more line\(s\) not logged \(at most 20 per 10 s\)$" "$log" >/dev/null ||
        fail "the count of the lines not logged is missing"
echo "ok: a flood is cut at 20 lines per helper, the rest counted"
