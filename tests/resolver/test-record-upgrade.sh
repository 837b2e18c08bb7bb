#!/usr/bin/env bash
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
mkdir -p "$L/lib" "$L/bin"
build_hot_version v1 -O0
build_hot_version v2 -O0
cp "$WORK/libhot.so.v1" "$L/lib/libhot.so.v1"
cp "$WORK/app.v1" "$L/bin/app"
"$L/bin/app" &
pid=$!
cleanup "kill $pid"
for _ in $(seq 100); do grep -q libhot "/proc/$pid/maps" 2>/dev/null && break; sleep 0.05; done

export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$WORK/no-such-bus
PERISCOPED="$PERISCOPED" "$PERISCOPE" record --private -p "$pid" --duration=3 -o "$WORK/u.syscap" 2>"$WORK/rec.err" &
rec=$!
for _ in $(seq 600); do grep -q "recording .* started" "$WORK/rec.err" && break; sleep 0.05; done
grep -q "recording .* started" "$WORK/rec.err" || { cat "$WORK/rec.err"; fail "the recording did not start"; }
sleep 1
# The upgrade: new bytes at the same paths (v2 code in both files), new inodes.
cp "$WORK/app.v2" "$L/bin/app.dpkg-new" && mv -f "$L/bin/app.dpkg-new" "$L/bin/app"
cp "$WORK/libhot.so.v2" "$L/lib/libhot.so.v1.dpkg-new" && mv -f "$L/lib/libhot.so.v1.dpkg-new" "$L/lib/libhot.so.v1"
grep -q "$L/bin/app (deleted)" "/proc/$pid/maps" || fail "the kernel does not show the old binary as deleted"
sleep 0.5
kill "$pid"; wait "$pid" 2>/dev/null || true
wait $rec || { cat "$WORK/rec.err"; fail "periscope record failed"; }
! grep -qE "Sanitizer|runtime error:" "$WORK/rec.err" || { cat "$WORK/rec.err"; fail "memory errors in periscoped"; }

"$PERISCOPE" report --folded --no-progress -p "$pid" "$WORK/u.syscap" >"$WORK/folded.txt" || fail "periscope report failed"
python3 - "$WORK/folded.txt" <<'PY' || fail "names are not those of the old (mapped) files"
import folded, sys
total = good = 0
for s in folded.stacks(sys.argv[1]):
    total += s.count
    if "_v2" in s.text:
        print("FAIL: a name from the new version:", s.line); sys.exit(1)
    user = s.user
    if user[-3:] == ["main", "hot_outer_v1", "hot_inner_v1"]:
        good += s.count
print("ok: %d/%d samples (%.1f%%) main;hot_outer_v1;hot_inner_v1, none from v2" % (good, total, 100 * good / max(total, 1)))
sys.exit(0 if total >= 50 and good / total >= 0.95 else 1)
PY
"$PERISCOPE" report --mappings --no-progress "$WORK/u.syscap" | grep -A1 "libhot.so.v1" | grep >/dev/null "verified" || fail "the library mapping is not shown as verified"
echo "PASS"
