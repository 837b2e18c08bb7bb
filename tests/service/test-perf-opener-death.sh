#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# periscoped (root) outlives its perf opener: killed, the next recording
# fails with a message that names the opener and how it ended, the daemon
# still answers, and (bus-activated, an idle timeout set) it exits at its
# next idle check so that the bus starts a new one, whose opener works.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}"
[ "$(id -u)" = 0 ] || fail "periscoped starts its perf opener as root: run this test as root"
private_bus_start
periscoped_start --idle-timeout=600
opener=$(tr -s ' ' '\n' </proc/"$PERISCOPED_PID"/task/"$PERISCOPED_PID"/children | grep -v '^$' || true)
[ "$(echo "$opener" | wc -w)" = 1 ] || fail "periscoped should have one child, its perf opener: '$opener'"
sleep 60 & work=$!
private_bus_track $work
"$PERISCOPE" record --address "$BUS_ADDRESS" -p $work --duration 0.5 -o "$TEST_TMP/before.syscap" 2>"$TEST_TMP/err" ||
        { cat "$TEST_TMP/err"; fail "recording through the perf opener failed"; }
echo "ok: recorded through the perf opener (pid $opener)"

kill -KILL "$opener"
st=0
"$PERISCOPE" record --address "$BUS_ADDRESS" -p $work --duration 0.5 -o "$TEST_TMP/after.syscap" 2>"$TEST_TMP/err" || st=$?
cat "$TEST_TMP/err"
[ $st != 0 ] || fail "a recording without the perf opener succeeded"
grep >/dev/null "perf opener.*is gone (pid $opener was killed by signal 9)" "$TEST_TMP/err" ||
        fail "the error does not say that the perf opener was killed"
kill -0 "$PERISCOPED_PID" 2>/dev/null || fail "periscoped died with its perf opener"
echo "ok: without its opener periscoped says why a recording fails"

# It cannot start another opener (its capabilities are gone): it leaves at
# the next idle check (5 s), releasing its name.
periscoped_wait_exit 15 "periscoped still runs 15 s after its perf opener died"
[ $PERISCOPED_STATUS = 0 ] || fail "periscoped exited with $PERISCOPED_STATUS"
grep >/dev/null "the perf opener is gone: exiting while idle" "$TEST_TMP/periscoped.log" || fail "no message on the exit"
echo "ok: periscoped exited at its idle check, so that the bus starts a new one"
periscoped_start --idle-timeout=600
"$PERISCOPE" record --address "$BUS_ADDRESS" -p $work --duration 0.5 -o "$TEST_TMP/again.syscap" 2>"$TEST_TMP/err" ||
        { cat "$TEST_TMP/err"; fail "the new periscoped does not record"; }
echo "ok: a new periscoped records through its own opener"
echo PASS
