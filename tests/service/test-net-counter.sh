#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The net counter shows the machine's interfaces when periscoped runs in a
# network namespace of its own, as under its unit (PrivateNetwork=yes: only
# loopback, which the counter leaves out): a root periscoped started with
# `unshare --net` records the interfaces PID 1's namespace has (issue 27).
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}"
host_ifs=$(sed -n 's/^ *\([^: ]*\):.*/\1/p' /proc/1/net/dev | grep -vx lo || true)
[ -n "$host_ifs" ] || fail "PID 1's network namespace has no interface but lo: nothing to tell the namespaces apart by"
unshare --net true 2>/dev/null || fail "unshare --net does not work here (needs root)"
private_bus_start
# the bus is a socket file, reachable from any network namespace
unshare --net "$PERISCOPED" --address="$BUS_ADDRESS" 2>>"$TEST_TMP/periscoped.log" &
PERISCOPED_PID=$!
private_bus_track $PERISCOPED_PID
wait_for 10 busctl --address="$BUS_ADDRESS" status org.periscope.Profiler1 >/dev/null 2>&1 ||
        fail "periscoped in its own network namespace did not take its bus name"
[ "$(readlink /proc/$PERISCOPED_PID/ns/net)" != "$(readlink /proc/1/ns/net)" ] ||
        fail "periscoped runs in PID 1's network namespace: the test would prove nothing"
"$PERISCOPE" record --address "$BUS_ADDRESS" --counters net -o "$TEST_TMP/net.syscap" -- sleep 0.5 \
        >"$TEST_TMP/record.out" 2>&1 || { cat "$TEST_TMP/record.out"; fail "recording with --counters net failed"; }
"$PERISCOPE" dump --json "$TEST_TMP/net.syscap" >"$TEST_TMP/net.json"
for i in $host_ifs; do
        grep >/dev/null "\"$i RX\"" "$TEST_TMP/net.json" ||
                fail "the net counter has no '$i RX' though PID 1's namespace has $i: $(grep -o '"[^"]* RX"' "$TEST_TMP/net.json" | sort -u | tr '\n' ' ')$(grep -o "counter source 'net'[^\"]*" "$TEST_TMP/net.json")"
done
echo "ok: periscoped in a network namespace of its own counts the machine's interfaces:" $host_ifs
