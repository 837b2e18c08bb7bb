#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Malformed calls get org.periscope.Error.* (or the bus's InvalidArgs) that
# name the problem, and the service keeps serving afterwards.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
private_bus_start
periscoped_start
sleep 60 & target=$!
private_bus_track $target

record() { # OPTIONS REDIRECT…: gdbus Record call with fd 3; prints the reply or error
        local opts=$1
        gdbus call --address "$BUS_ADDRESS" -d org.periscope.Profiler1 -o /org/periscope/Profiler1 \
                -m org.periscope.Profiler1.Record "$opts" 3 2>&1 || true
}
expect() { # WHAT PATTERN OUTPUT
        echo "$3" | grep >/dev/null -E "$2" || fail "$1: expected /$2/, got: $3"
        echo "ok: $1 → $(echo "$3" | grep -oE 'org\.[A-Za-z.]+Error[A-Za-z.]*' | head -1)"
}
cap=$TEST_TMP/c.syscap

expect "unknown option" "org.periscope.Error.InvalidOption.*unknown option 'colour'" \
        "$(record "{'pids': <[$target]>, 'colour': <'red'>}" 3>"$cap")"
expect "wrong option type" "org.periscope.Error.InvalidOption.*'frequency' must have type 'u', got 's'" \
        "$(record "{'pids': <[$target]>, 'frequency': <'fast'>}" 3>"$cap")"
expect "frequency out of range" "org.periscope.Error.InvalidOption.*'frequency': 0 Hz is out of range" \
        "$(record "{'pids': <[$target]>, 'frequency': <uint32 0>}" 3>"$cap")"
expect "duration out of range" "org.periscope.Error.InvalidOption.*'duration-ms'" \
        "$(record "{'pids': <[$target]>, 'duration-ms': <uint32 4000000000>}" 3>"$cap")"
expect "nonexistent pid" "org.periscope.Error.NoSuchProcess.*process 999999999 does not exist" \
        "$(record "{'pids': <[999999999]>}" 3>"$cap")"
# A zombie: it exited and its parent (a sleep that replaced the shell that
# started it) never collects it.
bash -c 'sleep 0.1 & exec sleep 60' & zparent=$!
private_bus_track $zparent
zombie=
for _ in $(seq 100); do
        zombie=$(tr -d ' \n' </proc/$zparent/task/$zparent/children 2>/dev/null || true)
        [ -n "$zombie" ] && grep -q '^[0-9]* (sleep) Z' /proc/$zombie/stat 2>/dev/null && break
        sleep 0.05
done
grep -q '^[0-9]* (sleep) Z' /proc/$zombie/stat 2>/dev/null || fail "no zombie to test with"
expect "zombie pid" "org.periscope.Error.NoSuchProcess.*process $zombie \\(sleep\\) is a zombie.*parent \\(pid $zparent\\)" \
        "$(record "{'pids': <[$zombie]>}" 3>"$cap")"
expect "negative pid" "org.periscope.Error.InvalidOption.*-5 is not a process id" \
        "$(record "{'pids': <[-5]>}" 3>"$cap")"
expect "no target" "org.periscope.Error.InvalidOption.*no target" "$(record "{}" 3>"$cap")"
expect "system with pids" "org.periscope.Error.InvalidOption.*'system'" \
        "$(record "{'system': <true>, 'pids': <[$target]>}" 3>"$cap")"
expect "unwinder" "org.periscope.Error.InvalidOption.*not an unwinder" \
        "$(record "{'pids': <[$target]>, 'unwind': <'guess'>}" 3>"$cap")"
expect "duplicate option" "org.periscope.Error.InvalidOption.*given twice" \
        "$(record "{'pids': <[$target]>, 'pids': <[$target]>}" 3>"$cap")"
huge=$("$PYTHON" -c "print('[' + ','.join(['$target'] * 5000) + ']')")
expect "huge pid array" "org.periscope.Error.InvalidOption.*5000 pids given, at most 1024" \
        "$(record "{'pids': <$huge>}" 3>"$cap")"
expect "read-only capture fd" "org.periscope.Error.InvalidCapture.*not open for writing" \
        "$(record "{'pids': <[$target]>}" 3<"$cap")"
expect "capture fd on a device" "org.periscope.Error.InvalidCapture.*regular file, a pipe or a socket" \
        "$(record "{'pids': <[$target]>}" 3>/dev/null)"
expect "append-mode capture" "org.periscope.Error.InvalidCapture.*O_APPEND" \
        "$(record "{'pids': <[$target]>}" 3>>"$cap")"
# Wrong signatures, straight from busctl (no fd at all, wrong types).
out=$(busctl --address="$BUS_ADDRESS" call org.periscope.Profiler1 /org/periscope/Profiler1 \
        org.periscope.Profiler1 Record 'a{sv}s' 0 nofd 2>&1 || true)
expect "wrong signature" "Invalid argument|InvalidArgs|No such|Unknown" "$out"
out=$(busctl --address="$BUS_ADDRESS" call org.periscope.Profiler1 /org/periscope/Profiler1 \
        org.periscope.Profiler1 Record 's' hello 2>&1 || true)
expect "wrong signature (string)" "Invalid argument|InvalidArgs|No such|Unknown" "$out"
out=$(busctl --address="$BUS_ADDRESS" call org.periscope.Profiler1 /org/periscope/Recording/12345 \
        org.periscope.Recording1 Stop 2>&1 || true)
expect "unknown recording" "Unknown object|UnknownObject|No such" "$out"

# Still serving: a proper recording works.
out=$(record "{'pids': <[$target]>, 'duration-ms': <uint32 300>}" 3>"$cap")
echo "$out" | grep >/dev/null "/org/periscope/Recording/" || fail "the service stopped serving: $out"
kill -0 "$PERISCOPED_PID" || fail "periscoped died"
echo "ok: still serving after malformed calls"
