#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The Record option 'debuginfod' through the real periscoped: a stripped
# workload whose debug file only a debuginfod server on 127.0.0.1 has. With
# the option on, the capture names the inlined hot loop; with it off (the
# default) the service does not ask and the names are missing.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${SRCDIR:?}"
command -v debuginfod >/dev/null || fail "debuginfod is missing: apt-get install -y debuginfod"
command -v gdbus >/dev/null || fail "gdbus is missing: apt-get install -y libglib2.0-bin"

w=$TEST_TMP/spin
gcc -O2 -g -fno-omit-frame-pointer -Wl,--build-id -o "$w" "$SRCDIR/workload-spin.c" || fail "cannot build the workload"
mkdir "$TEST_TMP/served"
objcopy --only-keep-debug "$w" "$TEST_TMP/served/spin.debug"
strip --strip-all "$w"

. "$SRCDIR/debuginfod-server.sh"
debuginfod_start "$TEST_TMP/served"
export DEBUGINFOD_URLS=$DEBUGINFOD_URL
export DEBUGINFOD_CACHE_PATH=$TEST_TMP/cache
private_bus_start
periscoped_start

record() { # OUTPUT DEBUGINFOD(true|false)
        "$w" 4000 & local pid=$!
        private_bus_track $pid
        gdbus call --address "$BUS_ADDRESS" -d org.periscope.Profiler1 -o /org/periscope/Profiler1 \
                -m org.periscope.Profiler1.Record \
                "{'pids': <[$pid]>, 'duration-ms': <uint32 1500>, 'unwind': <'fp'>, 'debuginfod': <$2>}" 3 3>"$1" \
                >/dev/null || fail "Record refused the debuginfod option"
        local before=$(grep -c "finished (duration)" "$TEST_TMP/periscoped.log" || true)
        for _ in $(seq 300); do
                [ "$(grep -c "finished (duration)" "$TEST_TMP/periscoped.log" || true)" -gt "$before" ] && break
                sleep 0.1
        done
        kill $pid 2>/dev/null || true
}
record "$TEST_TMP/off.syscap" false
grep -q "finished (duration)" "$TEST_TMP/periscoped.log" || fail "the recording did not finish"
record "$TEST_TMP/on.syscap" true
[ "$(grep -c "finished (duration)" "$TEST_TMP/periscoped.log")" -ge 2 ] || fail "the second recording did not finish"

"$PERISCOPE" report --no-progress "$TEST_TMP/on.syscap" >"$TEST_TMP/on.txt" 2>&1 || { cat "$TEST_TMP/on.txt"; fail "report failed"; }
"$PERISCOPE" report --no-progress "$TEST_TMP/off.syscap" >"$TEST_TMP/off.txt" 2>&1 || { cat "$TEST_TMP/off.txt"; fail "report failed"; }
cat "$TEST_TMP/on.txt" | head -20
grep -q "spin_inner.*(inlined)" "$TEST_TMP/on.txt" || fail "with debuginfod on, the stripped workload's inline frames are not named"
grep -q "spin_function" "$TEST_TMP/on.txt" || fail "with debuginfod on, spin_function is not named"
echo "ok: debuginfod on: names from the debug file the server sent"
grep -q "spin_function" "$TEST_TMP/off.txt" && fail "with debuginfod off, names appeared anyway (was the server asked?)"
echo "ok: debuginfod off (the default): the server is not asked"
