#!/usr/bin/env bash
# The root daemon opens a perf map by a path in /tmp, where every user
# writes: jitdump-writer.c names its generated code in /tmp/perf-PID.map
# instead of a jitdump, three ways. A plain file owned by the process: its
# functions are named [jit]. A symlink to a file with the same lines: never
# followed, nothing named from it. A file owned by another uid (65534):
# refused, nothing named from it.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
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
        "$PERISCOPE" report --no-progress --folded "$cap" | "$PYTHON" -c '
import sys
total = named = 0
for l in sys.stdin:
    s, _, n = l.rstrip("\n").rpartition(" ")
    total += int(n)
    if any(f in ("jit_alpha [jit]", "jit_beta [jit]") for f in s.split(";")):
        named += int(n)
print(named, total)'
}
read -r named total < <(record file)
echo "plain perf map: $named of $total samples named"
[ "$total" -ge 100 ] && [ $((named * 10)) -ge $((total * 8)) ] || fail "the process's own perf map did not name its code"
read -r named total < <(record symlink)
echo "symlinked perf map: $named of $total samples named"
[ "$total" -ge 100 ] && [ "$named" = 0 ] || fail "a symlink at /tmp/perf-PID.map was followed"
# JIT code nothing names is said to be JIT code, with the option that names it.
"$PERISCOPE" report --no-progress "$TEST_TMP/symlink.syscap" >"$TEST_TMP/symlink.report" || fail "report failed"
grep >/dev/null 'anonymous executable memory (JIT?) no perf map names: run node with --perf-basic-prof' \
        "$TEST_TMP/symlink.report" || { cat "$TEST_TMP/symlink.report"; fail "unnamed JIT code is not said to be JIT code"; }
grep >/dev/null 'could not be pinned' "$TEST_TMP/symlink.report" &&
        { cat "$TEST_TMP/symlink.report"; fail "unnamed JIT code is said to be a file that could not be pinned"; }
echo "ok: unnamed JIT code is called anonymous executable memory, with the flag that names it"
read -r named total < <(record foreign)
echo "perf map owned by uid 65534: $named of $total samples named"
[ "$total" -ge 100 ] && [ "$named" = 0 ] || fail "a perf map owned by another uid was used"
echo "ok: only the process's own regular perf map is read"
