#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The root daemon opens a perf map by a path in /tmp, where every user
# writes: jitdump-writer.c names its generated code in /tmp/perf-PID.map
# instead of a jitdump, three ways. A plain file owned by the process: its
# functions are named [jit]. A symlink to a file with the same lines: never
# followed, nothing named from it. A file owned by another uid (65534):
# refused, nothing named from it.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
. "$(dirname "$0")/jit-checks.sh"
: "${PERISCOPE:?}" "${SRCDIR:?}"
[ "$(uname -m)" = x86_64 ] || fail "jitdump-writer generates x86-64 code; this machine is $(uname -m)"
cc -O2 -Wall -o "$TEST_TMP/jitdump-writer" "$SRCDIR/jitdump-writer.c" || fail "cannot build jitdump-writer"
private_bus_start
periscoped_start

# record MODE: prints "NAMED TOTAL" (samples in jit_alpha/jit_beta [jit], all samples)
record() {
        local mode=$1 cap=$TEST_TMP/$1.syscap
        mkdir -p "$TEST_TMP/$mode"
        "$PERISCOPE" record --address "$BUS_ADDRESS" -o "$cap" -- "$TEST_TMP/jitdump-writer" "$TEST_TMP/$mode" 300 "$mode" \
                >"$TEST_TMP/$mode.out" 2>"$TEST_TMP/$mode.err" || { cat "$TEST_TMP/$mode.err" >&2; fail "recording ($mode) failed"; }
        local map
        map=$(sed -n 's/^done \(\/tmp\/perf-[0-9]*\.map\)$/\1/p' "$TEST_TMP/$mode.out")
        [ -n "$map" ] || fail "jitdump-writer ($mode) did not finish"
        rm -f "$map"
        perf_map_named "$cap"
}
read -r named total < <(record file)
perf_map_check file "$named" "$total"
read -r named total < <(record symlink)
perf_map_check symlink "$named" "$total"
# JIT code nothing names is said to be JIT code, with the option that names it.
"$PERISCOPE" report --no-progress "$TEST_TMP/symlink.syscap" >"$TEST_TMP/symlink.report" || fail "report failed"
grep >/dev/null 'anonymous executable memory (JIT?) no perf map names: run node with --perf-basic-prof' \
        "$TEST_TMP/symlink.report" || { cat "$TEST_TMP/symlink.report"; fail "unnamed JIT code is not said to be JIT code"; }
grep >/dev/null 'could not be pinned' "$TEST_TMP/symlink.report" &&
        { cat "$TEST_TMP/symlink.report"; fail "unnamed JIT code is said to be a file that could not be pinned"; }
echo "ok: unnamed JIT code is called anonymous executable memory, with the flag that names it"
read -r named total < <(record foreign)
perf_map_check foreign "$named" "$total"
echo "ok: only the process's own regular perf map is read"
