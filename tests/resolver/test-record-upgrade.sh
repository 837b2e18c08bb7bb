#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# End to end: a package upgrade during a recording. The profiled binary and
# a library it uses are replaced on disk (write a new file, rename it over
# the old one, as dpkg does) while periscoped records, and the process exits
# before the recording ends. The names must come from the pinned old inodes:
# >= 95% of the samples read main;hot_outer_v1;hot_inner_v1, none name v2.
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
: "${PERISCOPE:?}" "${PERISCOPED:?}"
need nm python3

L=$WORK/opt
build_hot_version v1 -O0
build_hot_version v2 -O0
upgrade_install "$L"
"$L/bin/app" &
pid=$!
cleanup "kill $pid"
wait_for 5 mapped "$pid" libhot || true

export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$WORK/no-such-bus
PERISCOPED="$PERISCOPED" "$PERISCOPE" record --private -p "$pid" --duration=3 -o "$WORK/u.syscap" 2>"$WORK/rec.err" &
rec=$!
wait_for 30 grep -q "recording .* started" "$WORK/rec.err" || { cat "$WORK/rec.err"; fail "the recording did not start"; }
sleep 1
upgrade_replace "$L"
grep -q "$L/bin/app (deleted)" "/proc/$pid/maps" || fail "the kernel does not show the old binary as deleted"
sleep 0.5
kill "$pid"; wait "$pid" 2>/dev/null || true
wait $rec || { cat "$WORK/rec.err"; fail "periscope record failed"; }
! grep -qE "Sanitizer|runtime error:" "$WORK/rec.err" || { cat "$WORK/rec.err"; fail "memory errors in periscoped"; }

upgrade_check "$WORK/u.syscap" "$pid" "$WORK/folded.txt"
echo "PASS"
