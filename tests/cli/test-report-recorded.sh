#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `periscope report` on real recordings through periscoped (private bus):
#   - --diff of two runs of workload-shift whose shares of shift_a and
#     shift_b swap (3:1, then 1:3): shift_b's self share grows by about 50
#     points, shift_a's shrinks as much; the differential flame graph draws
#     shift_b red and shift_a blue;
#   - a recording of several processes (a shell running workload-shift and
#     workload-burn at once): --by-process names each with its hottest
#     function, the tree starts with one frame per process, and --comm
#     keeps one of them;
#   - a whole-system recording while workload-burn and workload-shift run:
#     --by-process and --comm find both with their hottest functions, the
#     flame graph has one root frame per process;
#   - the recording's timeline in Chromium: shared scales, units, ticks.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${SRCDIR:?}" "${WORKLOAD_BURN:?}"
gcc -O1 -g -fno-omit-frame-pointer -fno-inline -o "$TEST_TMP/workload-shift" "$SRCDIR/workload-shift.c" ||
        fail "cannot build workload-shift.c (gcc)"
private_bus_start
periscoped_start

# The whole system while two known programs run.
"$WORKLOAD_BURN" 100000000 >/dev/null & burn=$!
private_bus_track $burn
"$TEST_TMP/workload-shift" 100000 1 >/dev/null & shift_pid=$!
private_bus_track $shift_pid
sleep 0.3
"$PERISCOPE" record --address "$BUS_ADDRESS" --system --duration 1.5 -o "$TEST_TMP/system.syscap" >"$TEST_TMP/record.out" 2>&1 ||
        { cat "$TEST_TMP/record.out"; fail "record --system failed"; }
kill $burn $shift_pid
# The capture lasts its sampling window (1.5 s), not the symbolizing after it.
# So do record's summary and pprof's duration (its utilisation divides by it).
duration=$("$PERISCOPE" info "$TEST_TMP/system.syscap" | sed -n 's/^Duration: \([0-9.]*\) s$/\1/p')
said=$(sed -n 's/^periscope: recorded .* in \([0-9.]*\) s (ended: duration)$/\1/p' "$TEST_TMP/record.out")
"$PERISCOPE" export --format pprof -o "$TEST_TMP/system.pb.gz" "$TEST_TMP/system.syscap" || fail "export --format pprof failed"
pprof_duration=$("$PYTHON" - "$TEST_TMP/system.pb.gz" <<'PY'
import gzip, sys
# Profile.duration_nanos is field 10 (a varint) of the top-level message
data, i, dur = gzip.open(sys.argv[1]).read(), 0, None
def varint():
    global i
    v = s = 0
    while True:
        b = data[i]; i += 1; v |= (b & 0x7f) << s; s += 7
        if b < 0x80: return v
while i < len(data):
    key = varint()
    wire = key & 7
    if wire == 0:
        v = varint()
        if key >> 3 == 10: dur = v
    elif wire == 2:
        n = varint()
        i += n
    elif wire == 1: i += 8
    elif wire == 5: i += 4
    else: sys.exit("bad wire type %d" % wire)
print("%.3f" % (dur / 1e9) if dur is not None else "none")
PY
)
echo "system capture: Duration $duration s, record said ${said:-?} s, pprof ${pprof_duration} s (asked 1.5 s)"
awk -v d="${duration:-0}" 'BEGIN { exit !(d >= 1.45 && d < 1.75) }' ||
        { cat "$TEST_TMP/record.out"; fail "a 1.5 s recording's capture lasts ${duration:-?} s"; }
awk -v d="${said:-0}" 'BEGIN { exit !(d >= 1.45 && d < 1.75) }' ||
        { cat "$TEST_TMP/record.out"; fail "record's summary says a 1.5 s recording took ${said:-?} s"; }
# (info also counts events the service writes just after sampling stopped: ms)
awk -v d="$pprof_duration" -v c="${duration:-0}" 'BEGIN { exit !(d - c < 0.05 && c - d < 0.05) }' ||
        fail "pprof's duration ($pprof_duration s) is not the capture's ($duration s)"
record_to "$TEST_TMP/before.syscap" "$TEST_TMP/workload-shift" 6 2
record_to "$TEST_TMP/after.syscap" "$TEST_TMP/workload-shift" 2 6
record_to "$TEST_TMP/both.syscap" /bin/sh -c "\"$TEST_TMP/workload-shift\" 24 8 & \"$WORKLOAD_BURN\" 60000; wait"

"$PYTHON" - "$PERISCOPE" "$TEST_TMP" "$burn" "$shift_pid" <<'PY'
import re, subprocess, sys
from checks import check, finish
periscope, tmp, burn, shift_pid = sys.argv[1:5]

def report(*args):
    p = subprocess.run([periscope, "report", "--no-progress", *args], capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"report {args}: exit {p.returncode}: {p.stderr}")
    return p.stdout

def rows(out, title):
    lines = out.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith(title))
    found = {}
    for line in lines[start + 2:]:
        m = re.match(r"^\s*([\d.]+)%\s+([\d.]+)%\s+([+-][\d.]+)%  (.*)$", line)
        if not m:
            break
        found[m[4]] = (float(m[1]), float(m[2]), float(m[3]))
    return found

before, after, both = (f"{tmp}/{n}.syscap" for n in ("before", "after", "both"))
out = report("--diff", before, after)
print(out)
self_ = rows(out, "Change in self time")
b, a = self_.get("shift_b"), self_.get("shift_a")
# shift_step is where the time goes; shift_a/shift_b are its callers: look at total.
total = rows(out, "Change in total time")
tb, ta = total.get("shift_b"), total.get("shift_a")
check(tb is not None and 30 <= tb[2] <= 70, f"shift_b's total share grew by about 50 points: {tb}")
check(ta is not None and -70 <= ta[2] <= -30, f"shift_a's total share shrank by about 50 points: {ta}")
check("shift_step" not in total or abs(total["shift_step"][2]) < 10, f"shift_step (both) about unchanged: {total.get('shift_step')}")
svg = f"{tmp}/diff.svg"
report("--diff", "-f", svg, before, after)
text = open(svg).read()
def fill(name):
    m = re.search(r'data-name="' + name + r'"><title>[^<]*</title><rect[^>]*fill="rgb\((\d+),(\d+),(\d+)\)"', text)
    return tuple(int(x) for x in m.groups()) if m else None
fb, fa = fill("shift_b"), fill("shift_a")
check(fb is not None and fb[0] == 255 and fb[1] < 150, f"shift_b drawn red: {fb}")
check(fa is not None and fa[2] == 255 and fa[0] < 150, f"shift_a drawn blue: {fa}")

out = report("--by-process", both)
print(out)
procs = {}
for line in out.splitlines():
    m = re.match(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)%  (.*?)\s{2,}(\S+)", line)
    if m:
        procs[m[4].split()[0]] = (int(m[1]), int(m[2]), float(m[3]), m[5])
check(procs.get("workload-shift", (0, 0, 0, ""))[3] == "shift_step", f"workload-shift's top function: {procs}")
check(procs.get("workload-burn", (0, 0, 0, ""))[3] == "burn_inner", f"workload-burn's top function: {procs}")
check(sum(p[2] for p in procs.values()) > 99, "shares add up to 100%")
out = report("--tree", both)
roots = re.findall(r"^\s*[\d.]+%\s+\d+\s+\d+  (\S.*\(pid \d+\))$", out, re.M)
check(any(r.startswith("workload-shift (pid") for r in roots) and any(r.startswith("workload-burn (pid") for r in roots),
      f"the tree starts with the processes: {roots}")
lines = out.splitlines()
for i, line in enumerate(lines):
    # (a small process may have every child under --min-percent)
    if re.match(r"^\s*[\d.]+%\s+\d+\s+\d+  \S.*\(pid \d+\)$", line) and i + 1 < len(lines) and \
            re.match(r"^\s*[\d.]+%", lines[i + 1]):
        check(re.match(r"^\s*[\d.]+%\s+\d+\s+\d+    \S", lines[i + 1]) is not None,
              f"the stacks hang under the process frame: {line!r} then {lines[i + 1]!r}")
check(re.search(r"^\s*[\d.]+%\s+\d+\s+\d+    +main$", out, re.M) is not None, "main under a process frame")
out = report("--tree", "--comm", "workload-burn", both)
check("(pid" not in out.split("Call tree", 1)[1] and "burn_inner" in out and "shift_" not in out,
      "--comm workload-burn: one process, no process frame, no shift functions")

# Whole system: the two programs by name, each with its hottest function;
# the flame graph starts with one frame per process.
system = f"{tmp}/system.syscap"
out = report("--by-process", system)
print(out)
table = [l for l in out.split("Processes by samples:", 1)[1].splitlines()[2:] if re.match(r"^\s*\d+ ", l)]
check(1 <= len(table) <= 25, f"--by-process keeps to --limit 25 rows: {len(table)}")
out = report("--by-process", "--comm", "workload-burn", "--comm", "workload-shift", system)
print(out)
rows_ = {m[1]: m[2] for m in re.finditer(r"^\s*(\d+)\s+\d+\s+[\d.]+%  \S.*?\s{2,}(\S+)", out, re.M)}
check(rows_.get(burn) == "burn_inner" and rows_.get(shift_pid) == "shift_step",
      f"--system --by-process: burn {burn} and shift {shift_pid} with their hottest functions: {rows_}")
check(set(rows_) == {burn, shift_pid}, f"--comm keeps exactly the two programs: {rows_}")
out = report("--tree", "--pid", burn, system)
check("(pid" not in out.split("Call tree", 1)[1] and "burn_inner" in out, "--pid: one process, its functions")
svg = f"{tmp}/system.svg"
report("-f", svg, system)
text = open(svg).read()
check(f'data-name="workload-burn (pid {burn})"' in text and f'data-name="workload-shift (pid {shift_pid})"' in text,
      "the system flame graph has a root frame per process")
# (samples the kernel gave no process, pid -1, have their own root: "? (pid -1)")
check(re.search(r'data-d="1" data-name="[^"]*\(pid \d+\)"', text) is not None and
      re.search(r'data-d="1" data-name="(?![^"]*\(pid -?\d+\))', text) is None,
      "every frame at depth 1 is a process frame")

# The timeline of the real recording (the service's cpu and memory
# counters), rendered by Chromium: shared scales in human units, round ticks.
svg = f"{tmp}/timeline.svg"
report("--timeline", svg, both)
import shutil, tempfile
if not shutil.which("chromium"):
    check(False, "chromium is not installed: apt-get install -y chromium (listed in scripts/packages.txt)")
else:
    profile = tempfile.mkdtemp(prefix="periscope-chromium-")
    p = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        f"--user-data-dir={profile}", "--dump-dom", "--virtual-time-budget=2000", "file://" + svg],
                       capture_output=True, text=True, timeout=120)
    shutil.rmtree(profile, ignore_errors=True)
    dom = p.stdout
    lanes = re.findall(r'<g class="counter"><title>([^/<]*) / ([^:<]*):.*?<text class="scale"[^>]*>([^<]*)</text>'
                       r'<text class="scale"[^>]*>([^<]*)</text>', dom.replace("\n", ""))
    print("timeline lanes:", lanes)
    cpu = [l for l in lanes if l[0] == "CPU Percent"]
    mem = [l for l in lanes if l[0] == "Memory"]
    check(len(cpu) >= 2 and all(l[2:] == ("100%", "0%") for l in cpu), f"every CPU lane 0-100%: {cpu}")
    check(len(mem) >= 2 and len({l[2] for l in mem}) == 1 and re.search(r"[MG]iB$", mem[0][2]),
          f"memory lanes share one scale in MiB/GiB: {mem}")
    ticks = re.findall(r'<text class="tick"[^>]*>([^<]*)</text>', dom)
    values = [float(t[:-2]) for t in ticks if t.endswith(" s")]
    step = values[1] - values[0] if len(values) > 1 else 0
    mantissa = step / 10 ** __import__("math").floor(__import__("math").log10(step)) if step > 0 else 0
    check(len(values) == len(ticks) >= 3 and any(abs(mantissa - m) < 1e-6 for m in (1, 2, 5)),
          f"round time ticks: {ticks}")
finish()
PY

# A merged capture (sysprof-cli --merge) keeps the names of every capture it
# was made of, each with its own symbol tables.
record_to "$TEST_TMP/burn.syscap" "$WORKLOAD_BURN" 60000
command -v sysprof-cli >/dev/null || fail "sysprof-cli is missing: apt-get install -y sysprof"
sysprof-cli --merge "$TEST_TMP/before.syscap" "$TEST_TMP/burn.syscap" >"$TEST_TMP/merged.syscap" ||
        fail "sysprof-cli --merge failed"
"$PERISCOPE" report --no-progress --folded "$TEST_TMP/merged.syscap" >"$TEST_TMP/merged.folded" ||
        fail "report of the merged capture failed"
for f in shift_a shift_b burn_inner burn_outer; do
        grep >/dev/null "\b$f\b" "$TEST_TMP/merged.folded" ||
                { sort -t' ' -k2 -n "$TEST_TMP/merged.folded" | tail; fail "the merged capture lost $f's name"; }
done
echo "ok: a capture merged by sysprof-cli keeps both recordings' names"
echo "ok: report --diff and --by-process on real recordings"
