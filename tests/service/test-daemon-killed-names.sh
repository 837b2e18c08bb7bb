#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# periscoped dies (SIGKILL) in the middle of a recording (issue 27): the
# capture keeps what it flushed, with no symbol tables, but with the
# identity of every mapped file, written as the mappings appeared
# (`periscope.file` frames, docs/capture-format.md).
#  - `periscope record` says the daemon died, how many samples the capture
#    holds and to run `periscope symbolize`, and exits non-zero;
#  - `periscope symbolize` then names the capture from this machine's files:
#    the report shows the workload's functions in calling order;
#  - hostile: the binary is rebuilt at the same path (another inode and
#    build-id) before `periscope symbolize`: none of its names are given to
#    the old addresses, and the report says the binary changed;
#  - plain: a complete capture's report and exports are the same with and
#    without its identity frames.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${CAPTURE_JSON:?}"
check() { "$PYTHON" "$(dirname "$0")/check-capture.py" "$CAPTURE_JSON" "$@"; }
command -v cc >/dev/null || fail "no C compiler: apt-get install -y gcc"
dir=$TEST_TMP

# A workload with known names; PREFIX renames its functions, so a build of
# another version carries other names (and another build-id) at one path.
build_work() { # PREFIX [FILE, default work]
        cat >"$dir/work.c" <<C
#include <stdlib.h>
#include <time.h>
volatile unsigned long sink;
__attribute__((noinline)) void $1_leaf(void) {
        for (int i = 0; i < 100000; i++)
                sink += (unsigned long) i * 7;
}
__attribute__((noinline)) void $1_middle(void) { $1_leaf(); sink++; }
__attribute__((noinline)) void $1_outer(void) { $1_middle(); sink++; }
int main(int argc, char **argv) {
        double secs = argc > 1 ? atof(argv[1]) : 1;
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
                $1_outer();
                clock_gettime(CLOCK_MONOTONIC, &t);
        } while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
        return 0;
}
C
        # a new file (another inode), as a package upgrade puts it there
        cc -O1 -g -fno-omit-frame-pointer -fno-inline -o "$dir/work.new" "$dir/work.c" || fail "cannot build the workload"
        mv -f "$dir/work.new" "$dir/${2:-work}"
}
# The share (percent) of the workload's samples whose user stack ends in
# PREFIX_outer;PREFIX_middle;PREFIX_leaf, from --folded report FILE of its
# process.
named_share() { # FOLDED PREFIX
        "$PYTHON" - "$1" "$2" <<'PY'
import folded, sys
want = [sys.argv[2] + s for s in ("_outer", "_middle", "_leaf")]
total = good = 0
for s in folded.stacks(sys.argv[1]):
    total += s.count
    good += s.count if s.user[-3:] == want else 0
print(100 * good // total if total else 0)
PY
}
private_bus_start
periscoped_start
build_work crash

# --- a daemon killed mid-recording ---
cap=$dir/crash.syscap
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$cap" -- "$dir/work" 8 2>"$dir/record.err" & cli=$!
private_bus_track $cli
for _ in $(seq 300); do
        check "$cap" partial --min-samples 200 >/dev/null 2>&1 && break
        sleep 0.1
done
check "$cap" partial --min-samples 200 >/dev/null || fail "no samples were flushed to $cap within 30 s"
kill -KILL "$PERISCOPED_PID"
work=$(pgrep -f "^$dir/work 8\$" || true)
[ -n "$work" ] && private_bus_track $work
st=0
timeout 30 tail --pid=$cli -f /dev/null || fail "periscope record still runs 30 s after periscoped died"
wait $cli || st=$?
cat "$dir/record.err"
[ $st != 0 ] || fail "periscope record exited 0 although periscoped died during the recording"
[ $st != 124 ] || fail "periscope record did not end when periscoped died"
grep -E "^periscope record: periscoped died during the recording \(.+\); the capture holds [0-9]+ samples up to then; name them with \`periscope symbolize $cap\`\$" \
        "$dir/record.err" >/dev/null || fail "periscope record did not say that periscoped died and what to do"
held=$(sed -n 's/.*the capture holds \([0-9]*\) samples.*/\1/p' "$dir/record.err")
[ "$held" -ge 200 ] || fail "record says the capture holds $held samples (wanted >= 200)"
echo "ok: record exited $st and said periscoped died ($held samples)"
[ -n "$work" ] && kill "$work" 2>/dev/null || true

# before: no names (the tables were never written)
"$PERISCOPE" report --folded --no-progress "$cap" >"$dir/before.folded" 2>/dev/null || true
! grep -q "crash_leaf" "$dir/before.folded" || fail "the crashed capture had names before symbolize (test broken)"
cp "$cap" "$dir/hostile.syscap"
cp "$cap" "$dir/rebuilt.syscap"

"$PERISCOPE" symbolize "$cap" >"$dir/symbolize.out" 2>&1 || { cat "$dir/symbolize.out"; fail "periscope symbolize of the crashed capture failed"; }
cat "$dir/symbolize.out"
"$PERISCOPE" report --folded --no-progress -c work "$cap" >"$dir/after.folded" || fail "report of the symbolized capture failed"
share=$(named_share "$dir/after.folded" crash)
[ "$share" -ge 80 ] || { head -20 "$dir/after.folded"; fail "only $share% of the workload's samples end in crash_outer;crash_middle;crash_leaf after symbolize (wanted >= 80%)"; }
echo "ok: symbolize named the crashed capture: $share% of the workload's samples end in crash_outer;crash_middle;crash_leaf"

# --- hostile: another build written into the same file (same inode), of
# the same size, its mtime set back: only the build-id tells ---
build_work wrung work.wrung
[ "$(stat -c %s "$dir/work.wrung")" = "$(stat -c %s "$dir/work")" ] || fail "the rebuilt workload differs in size (test broken)"
mtime=$(stat -c %.9Y "$dir/work")
cat "$dir/work.wrung" >"$dir/work"
touch -m -d "@$mtime" "$dir/work"
"$PERISCOPE" symbolize "$dir/rebuilt.syscap" >"$dir/rebuilt.out" 2>&1 || { cat "$dir/rebuilt.out"; fail "periscope symbolize failed on the rebuilt capture"; }
cat "$dir/rebuilt.out"
grep -q "work: 0 of [0-9]* addresses named; binary changed since it was mapped (build-id differs)" "$dir/rebuilt.out" ||
        fail "symbolize did not refuse a binary whose build-id changed in the same file"
"$PERISCOPE" report --folded --no-progress "$dir/rebuilt.syscap" >"$dir/rebuilt.folded" || fail "report of the rebuilt capture failed"
if grep -E "wrung_|crash_" "$dir/rebuilt.folded" >/dev/null; then
        grep -E "wrung_|crash_" "$dir/rebuilt.folded" | head -5
        fail "frames of the rebuilt binary were named"
fi
echo "ok: the same file with another build-id is refused"

# --- hostile: another build at the same path (a new file, as an upgrade) ---
build_work wrong
"$PERISCOPE" symbolize "$dir/hostile.syscap" >"$dir/hostile.out" 2>&1 || { cat "$dir/hostile.out"; fail "periscope symbolize failed on the hostile capture"; }
cat "$dir/hostile.out"
grep -q "work: 0 of [0-9]* addresses named; binary changed since it was mapped" "$dir/hostile.out" ||
        fail "symbolize did not say that the workload's binary changed since it was mapped"
"$PERISCOPE" report --folded --no-progress "$dir/hostile.syscap" >"$dir/hostile.folded" || fail "report of the hostile capture failed"
if grep -E "wrong_|crash_" "$dir/hostile.folded" >/dev/null; then
        grep -E "wrong_|crash_" "$dir/hostile.folded" | head -5
        fail "frames of the replaced binary were named from the new one"
fi
"$PERISCOPE" report --no-progress "$dir/hostile.syscap" >"$dir/hostile.report" || fail "report of the hostile capture failed"
grep -q "not verified: $dir/work (pid [0-9]*): binary changed since it was mapped" "$dir/hostile.report" ||
        { cat "$dir/hostile.report"; fail "the report does not say the workload's binary changed since it was mapped"; }
grep -q "\[unresolved: binary changed since it was mapped\] work" "$dir/hostile.report" ||
        { cat "$dir/hostile.report"; fail "the report's frames do not say the binary changed"; }
echo "ok: a binary replaced at the same path is refused, and the report says it changed"

# --- plain: a complete capture reads the same without its identity frames ---
periscoped_start
build_work plain
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$dir/complete.syscap" -- "$dir/work" 1 2>"$dir/complete.err" ||
        { cat "$dir/complete.err"; fail "a complete recording failed"; }
mkdir "$dir/with" "$dir/without"
cp "$dir/complete.syscap" "$dir/with/c.syscap"
"$PYTHON" - "$dir/complete.syscap" "$dir/without/c.syscap" <<'PY' || fail "cannot strip the identity frames"
import struct, sys
data = open(sys.argv[1], "rb").read()
out, off, dropped = bytearray(data[:256]), 256, 0
while off + 24 <= len(data):
    n = struct.unpack_from("<H", data, off)[0]
    frame = data[off:off + n]
    if frame[16] == 11 and frame[24:64].rstrip(b"\0") == b"periscope.file":
        dropped += 1
    else:
        out += frame
    off += n
if dropped == 0:
    sys.exit("the complete capture holds no periscope.file frame")
open(sys.argv[2], "wb").write(out)
print(f"{dropped} identity frames stripped")
PY
for v in with without; do
        (cd "$dir/$v" && "$PERISCOPE" report --no-progress c.syscap >report.txt &&
                "$PERISCOPE" report --no-progress --folded c.syscap >report.folded &&
                "$PERISCOPE" report --no-progress --mappings c.syscap >mappings.txt &&
                for f in pprof speedscope perf-script folded; do "$PERISCOPE" export -F $f -o export.$f c.syscap; done) ||
                fail "report/export of the $v capture failed"
done
for f in report.txt report.folded mappings.txt export.pprof export.speedscope export.perf-script export.folded; do
        cmp "$dir/with/$f" "$dir/without/$f" || fail "$f of a complete capture changes with its identity frames"
done
grep -q "plain_leaf" "$dir/with/report.folded" || fail "the complete capture has no names (test broken)"
echo "ok: a complete capture's report and exports are unchanged by its identity frames"
