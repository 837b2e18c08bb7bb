#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A recording whose unwind tables take the helper long to compile does not
# slow the service for anyone else (issue 12): node (a 99 MB binary) and
# python3 recorded with DWARF unwinding through periscoped while a probe
# reads the Profiler's Version over and over. The compiles run in the
# helper while the event loop serves the bus: the slowest Get stays under
# 100 ms, and the recording still loses no sample and gets whole stacks
# (the checks of service-unwind-node). Twice, each on a fresh daemon (no
# table known): node runs 3 s (its table comes while it runs), and node
# runs 0.15 s (the recording stops while the table compiles: its samples
# wait for it, and are unwound before the capture is finished).
# In a session of its own: availability.sh raises its CPU share.
[ "$(ps -o sid= -p $$ | tr -d ' ')" = $$ ] || exec setsid -w "$0" "$@"
. "$(dirname "$0")/../../lib/periscoped-bus.sh"
. "$(dirname "$0")/../availability.sh"
: "${PERISCOPE:?}" "${PROBE:?}"
command -v node >/dev/null || fail "node missing: apt-get install -y nodejs (scripts/install-deps.sh does)"
availability_start

gets=0 max_ms=0
record_node() { # NAME MILLISECONDS MIN-SAMPLES MIN-PERCENT-WHOLE [tty]
        local name=$1 ms=$2 min=$3 pct=$4 probe g m _
        # the probe, for as long as this recording and its daemon live
        nice -n -10 "$PROBE" --profiler "$BUS_ADDRESS" "$TEST_TMP/$name.stop" 180 >"$TEST_TMP/$name.latency" \
                2>"$TEST_TMP/$name.latency.err" &
        probe=$!
        private_bus_track $probe
        sleep 0.5
        # (node's start-up stacks are deeper than the default 16 KiB copy)
        local record=("$PERISCOPE" record --address "$BUS_ADDRESS" --unwind dwarf --stack-size 65528
                      -o "$TEST_TMP/$name.syscap" --
                      node "$(dirname "$0")/../../lib/fib.js" "$ms" 24)
        if [ "${5:-}" = tty ]; then
                # on a terminal, as a user sees it: the live line and Progress
                script -qefc "${record[*]@Q}" /dev/null | tr '\r' '\n' >"$TEST_TMP/$name.err" ||
                        { cat "$TEST_TMP/$name.err"; fail "recording node ($name) failed"; }
                cp "$TEST_TMP/$name.err" "$TEST_TMP/$name.out"
        else
                "${record[@]}" >"$TEST_TMP/$name.out" 2>"$TEST_TMP/$name.err" ||
                        { cat "$TEST_TMP/$name.err"; fail "recording node ($name) failed"; }
        fi
        cat "$TEST_TMP/$name.err"
        grep -q done "$TEST_TMP/$name.out" || fail "node ($name) did not run to its end"
        local lost=$(sed -n 's/.*recorded [0-9]* samples (\([0-9]*\) lost).*/\1/p' "$TEST_TMP/$name.err")
        touch "$TEST_TMP/$name.stop"
        wait $probe || { cat "$TEST_TMP/$name.latency" "$TEST_TMP/$name.latency.err"; fail "the probe failed ($name)"; }
        cat "$TEST_TMP/$name.latency.err"
        read -r _ g _ m _ <"$TEST_TMP/$name.latency"
        echo "$name: Properties.Get of the Profiler's Version: $g calls, slowest $m ms"
        gets=$((gets + g))
        max_ms=$(awk -v a="$max_ms" -v b="$m" 'BEGIN { print (b > a ? b : a) }')
        [ -n "$lost" ] || fail "no record summary ($name)"
        [ "$lost" = 0 ] || fail "$lost samples lost while node's tables compiled ($name)"
        "$PERISCOPE" report --folded "$TEST_TMP/$name.syscap" |
                "$PYTHON" "$(dirname "$0")/whole-stacks.py" "node ($name)" "$min" "$pct" || fail "node's stacks are not whole ($name)"
}

# node's first samples need the table of its 99 MB binary, which nobody
# compiled yet (a fresh daemon)
record_node long 3000 200 95
# again on a fresh daemon, the recording ending before the table comes
kill $PERISCOPED_PID
wait $PERISCOPED_PID || true
MALLOC_PERTURB_= periscoped_start
# (node's start-up is half of its samples here: with the exec itself and
# the dynamic linker's PLT stubs about 97% whole; at least 90%; 50
# samples or more: about 90 under load)
record_node short 150 50 90 tty
grep -E "samples wait for unwind tables still compiling" "$TEST_TMP/periscoped.log" ||
        fail "the short recording did not stop while node's table compiled: nothing shown"
# the wait is shown on the terminal (Progress "unwind-tables"), not a frozen line
grep -E "unwinding samples that waited for unwind tables [0-9]+/[1-9][0-9]*" "$TEST_TMP/short.err" | tail -n 1 ||
        fail "periscope record showed no progress while the samples waited for node's table"

grep -E "unwind table|giving way" "$TEST_TMP/periscoped.log" || true
echo "Properties.Get of the Profiler's Version: $gets calls, slowest $max_ms ms"

# the measure means something only if long compiles happened meanwhile
compiles=$(sed -n 's/.*unwind table of [^ ]*node[^ ]* compiled in \([0-9]*\) ms.*/\1/p' "$TEST_TMP/periscoped.log")
echo "node's table compiled in:" $compiles "ms"
[ "$(echo "$compiles" | grep -c .)" = 2 ] || fail "the daemons did not say how long node's table took to compile, twice"
for compile_ms in $compiles; do
        [ "$compile_ms" -ge 200 ] || fail "node's table compiled in $compile_ms ms: too fast to measure anything"
done
[ "$gets" -ge $((compile_ms / 50)) ] || fail "only $gets Gets while the tables compiled"
# the samples that waited for node's table (about one per ms of its compile
# in the long run) were unwound a slice of 256 at a time, from the event
# loop, not all in one callback
first_compile=$(echo "$compiles" | head -n 1)
slices=$(sed -n 's/.*recording 1: finished.* \([0-9]*\) slices of waiting samples.*/\1/p' "$TEST_TMP/periscoped.log" | head -n 1)
echo "the long recording's waiting samples: $slices slices after the first (node's table: $first_compile ms)"
[ -n "$slices" ] || fail "the daemon did not say how the waiting samples were unwound"
if [ "$first_compile" -ge 1000 ]; then
        [ "$slices" -ge 1 ] || fail "about $first_compile samples waited for node's table and were unwound in one go"
fi
get_within_100ms "$max_ms" "while node's recordings compiled their tables"
echo "ok: node's table compiled off the event loop: no Get slowed, no sample lost, whole stacks"
