#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Off-CPU profiles of real waits, against the wall clock: workload-waits'
# main thread computes 1 s, sleeps 1 s in nanosleep, waits 1 s on a pipe
# another thread writes later and 1 s on a mutex another thread holds,
# recorded by root through periscoped (private bus) with --off-cpu:
#   - each wait is attributed to its own function within 10% of how long
#     it lasted, its stacks end in the kernel's wait (do_nanosleep,
#     pipe_read, futex_wait), the compute second is CPU samples;
#   - the same with -p (the process given by pid, recording started first)
#     and --off-cpu-min 5ms (the recording's; without --off-cpu: a usage error);
#   - a sleep still going on when sampling ends: written up to the end;
#   - libsysprof-capture-4 reads the capture as our reader does;
#   - report --wall: per thread, CPU time, runnable and blocked adding up
#     to about the phases' wall clock; the flame graph's tooltips say the
#     time blocked; the timeline has the threads' blocked lanes;
#   - pprof: `go tool pprof -sample_index=off_cpu` shows the waits;
#     speedscope --off-cpu: one profile per thread weighted in ns; folded
#     --off-cpu in ns.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${SRCDIR:?}" "${SYSPROF_COMPARE:?}"
[ "$(id -u)" = 0 ] || fail "runs as root (kernel stacks); ./test.sh does"
[ -x /usr/bin/go ] || fail "go is missing (golang-go, scripts/packages.txt)"
gcc -O0 -g -fno-omit-frame-pointer -pthread -o "$TEST_TMP/waits" "$SRCDIR/workload-waits.c" ||
        fail "cannot build workload-waits.c"
private_bus_start
periscoped_start
cap=$TEST_TMP/waits.syscap
"$PERISCOPE" record --address "$BUS_ADDRESS" --off-cpu -o "$cap" -- "$TEST_TMP/waits" 1 \
        >"$TEST_TMP/phases.txt" 2>"$TEST_TMP/record.err" || { cat "$TEST_TMP/record.err"; fail "record --off-cpu failed"; }
r() { "$PERISCOPE" report --no-progress "$@" || fail "report $* failed"; }
r --off-cpu --folded "$cap" >"$TEST_TMP/ns.folded"
r --folded "$cap" >"$TEST_TMP/samples.folded"
"$PYTHON" "$SRCDIR/check-waits.py" "$TEST_TMP/ns.folded" "$TEST_TMP/samples.folded" "$TEST_TMP/phases.txt" 1 ||
        fail "the waits were not attributed as they happened (command)"
"$SYSPROF_COMPARE" --compare "$cap" || fail "libsysprof-capture-4 does not read the off-CPU capture as we do"

# -p: the process runs first (its compute second gives the recording time to start)
"$TEST_TMP/waits" 1 >"$TEST_TMP/phases-p.txt" &
work=$!
private_bus_track $work
sleep 0.3
"$PERISCOPE" record --address "$BUS_ADDRESS" --off-cpu --off-cpu-min 5ms -p $work --duration 4.5 -o "$TEST_TMP/p.syscap" \
        >"$TEST_TMP/record-p.out" 2>&1 || { cat "$TEST_TMP/record-p.out"; fail "record --off-cpu -p failed"; }
wait $work || fail "the workload failed under -p"
"$PERISCOPE" info "$TEST_TMP/p.syscap" | grep >/dev/null -x "  off_cpu_min_ns=5000000" || fail "--off-cpu-min 5ms was not the recording's"
rc=0
"$PERISCOPE" record --address "$BUS_ADDRESS" --off-cpu-min 1ms -o "$TEST_TMP/x.syscap" -- true 2>"$TEST_TMP/usage.err" || rc=$?
[ $rc = 2 ] && grep >/dev/null -- "--off-cpu-min needs --off-cpu" "$TEST_TMP/usage.err" ||
        fail "--off-cpu-min without --off-cpu: exit $rc, $(cat "$TEST_TMP/usage.err")"
r --off-cpu --folded "$TEST_TMP/p.syscap" >"$TEST_TMP/p.folded"
"$PYTHON" "$SRCDIR/check-waits.py" "$TEST_TMP/p.folded" - "$TEST_TMP/phases-p.txt" 1 ||
        fail "the waits were not attributed as they happened (-p)"

# a wait still going on when sampling ends: written up to the end. The
# process sleeps 1 s, then execs a sleep of 30 s that blocks through the
# end of a 3 s recording: about 2 s (the recording's start counted out)
# of do_nanosleep, no more than the recording lasted.
sh -c 'sleep 1; exec sleep 30' &
sleeper=$!
private_bus_track $sleeper
"$PERISCOPE" record --address "$BUS_ADDRESS" --off-cpu -p $sleeper --duration 3 -o "$TEST_TMP/open.syscap" \
        >"$TEST_TMP/record-open.out" 2>&1 || { cat "$TEST_TMP/record-open.out"; fail "record --off-cpu -p (the open wait) failed"; }
kill $sleeper
"$PERISCOPE" info "$TEST_TMP/open.syscap" >"$TEST_TMP/open-info.txt" || fail "info failed"
grep "off_cpu_in_progress=" "$TEST_TMP/open-info.txt"
grep >/dev/null -E "^ *off_cpu_in_progress=[1-9]" "$TEST_TMP/open-info.txt" ||
        fail "the wait still open at the end was not written (off_cpu_in_progress)"
r --off-cpu --folded "$TEST_TMP/open.syscap" >"$TEST_TMP/open.folded"
cat "$TEST_TMP/open.folded"
open_ns=$(awk '/do_nanosleep/ { n += $NF } END { print n + 0 }' "$TEST_TMP/open.folded")
echo "the open wait: $open_ns ns in do_nanosleep"
[ "$open_ns" -ge 1200000000 ] && [ "$open_ns" -le 3000000000 ] ||
        fail "the sleep open at the end was attributed $open_ns ns, not the 1.2-3 s it lasted within the recording"
echo "ok: a wait still open at the end is written up to the end"

# --system: every thread's switches (per-CPU events); the workload's waits
# timed exactly, whatever the stacks' sampling period; unless the
# machine's switches made the governor pause the records (then said)
"$PERISCOPE" record --address "$BUS_ADDRESS" --off-cpu --system -o "$TEST_TMP/sys.syscap" -- "$TEST_TMP/waits" 0.5 \
        >"$TEST_TMP/phases-sys.txt" 2>"$TEST_TMP/record-sys.err" ||
        { cat "$TEST_TMP/record-sys.err"; fail "record --off-cpu --system failed"; }
"$PERISCOPE" info "$TEST_TMP/sys.syscap" >"$TEST_TMP/sys-info.txt" || fail "info failed"
grep -E "lost_samples|off_cpu_(blocked|stacks|pauses|max_stack_period)=" "$TEST_TMP/sys-info.txt"
sys_pid=$("$PERISCOPE" report --no-progress --wall -n 1000 "$TEST_TMP/sys.syscap" | awk '$11 == "waits" && $1 == $2 && !n++ {print $1}')
[ -n "$sys_pid" ] || fail "--system: report --wall has no row for the workload's main thread"
"$PERISCOPE" report --no-progress --wall --tid "$sys_pid" "$TEST_TMP/sys.syscap" >"$TEST_TMP/sys-wall.txt" || fail "report --wall --tid failed"
cat "$TEST_TMP/sys-wall.txt"
if grep >/dev/null -x "  off_cpu_pauses=0" "$TEST_TMP/sys-info.txt"; then
        "$PYTHON" - "$TEST_TMP/sys-wall.txt" "$TEST_TMP/phases-sys.txt" <<'PY' || fail "--system: the main thread's blocked time is not its waits'"
import re, sys
phases = {l.split()[1]: int(l.split()[2]) for l in open(sys.argv[2]) if l.startswith("phase ")}
want = (phases["sleep"] + phases["pipe"] + phases["mutex"]) / 1e9
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 11 and f[0] == f[1]:
        blocked = float(f[8]) * {"s": 1, "ms": 1e-3, "us": 1e-6}[f[9]]
        print(f"--system: main thread blocked {blocked:.3f} s, its waits lasted {want:.3f} s")
        sys.exit(0 if abs(blocked - want) <= 0.1 * want else 1)
sys.exit(1)
PY
else
        "$PERISCOPE" report --no-progress --off-cpu "$TEST_TMP/sys.syscap" | grep >/dev/null "^Switches sampled" ||
                fail "--system: the records were paused and the report does not say so"
fi

# the report's other views
r --off-cpu -n 200 "$cap" >"$TEST_TMP/report.txt"
cat "$TEST_TMP/report.txt"
grep >/dev/null -E "^Blocked \(off the CPU, with a stack\): [0-9.]+ s in [0-9]+ waits" "$TEST_TMP/report.txt" ||
        fail "report --off-cpu does not say the time blocked"
grep >/dev/null -E "off_cpu_sleep" "$TEST_TMP/report.txt" || fail "report --off-cpu does not list off_cpu_sleep"
r --wall "$cap" >"$TEST_TMP/wall.txt"
cat "$TEST_TMP/wall.txt"
r --off-cpu -f "$TEST_TMP/off.svg" "$cap" >/dev/null
grep >/dev/null -E "<title>off_cpu_sleep \([0-9.]+ s blocked, [0-9.]+%\)</title>" "$TEST_TMP/off.svg" ||
        fail "the off-CPU flame graph's tooltip does not say the time blocked"
r --timeline "$TEST_TMP/timeline.svg" "$cap" >/dev/null
n=$(grep -c 'class="blocked"' "$TEST_TMP/timeline.svg" || true)
[ "$n" -ge 5 ] || fail "the timeline draws $n blocked intervals, expected the 5 waits of 3 threads"
grep >/dev/null 'pipe-writer (tid' "$TEST_TMP/timeline.svg" || fail "the timeline has no lane for the pipe-writer thread"

ex() { "$PERISCOPE" export "$@" || fail "export $* failed"; }
ex -F pprof -o "$TEST_TMP/waits.pb.gz" "$cap"
ex -F speedscope --off-cpu -o "$TEST_TMP/off.speedscope.json" "$cap"
ex -F folded --off-cpu -o "$TEST_TMP/off.folded" "$cap"
# Debian's Go (golang-go), whose pprof is built: a newer Go first on PATH
# (/usr/local/go on some machines) builds its tools anew in every GOCACHE
export HOME=$TEST_TMP/home GOCACHE=$TEST_TMP/gocache GOPATH=$TEST_TMP/gopath GOTOOLCHAIN=local GOFLAGS= GOPROXY=off
/usr/bin/go tool pprof -sample_index=off_cpu -top "$TEST_TMP/waits.pb.gz" >"$TEST_TMP/pprof.txt" 2>"$TEST_TMP/pprof.err" ||
        { cat "$TEST_TMP/pprof.err"; fail "go tool pprof -sample_index=off_cpu failed"; }
go tool pprof -sample_index=cpu -top "$TEST_TMP/waits.pb.gz" >"$TEST_TMP/pprof-cpu.txt" 2>"$TEST_TMP/pprof.err" ||
        { cat "$TEST_TMP/pprof.err"; fail "go tool pprof -sample_index=cpu failed"; }

"$PYTHON" - "$TEST_TMP" <<'PY'
import json, re, sys
tmp = sys.argv[1]
failures = []
def check(cond, what):
    print(("ok: " if cond else "FAILED: ") + what)
    if not cond:
        failures.append(what)
phases = {l.split()[1]: int(l.split()[2]) for l in open(f"{tmp}/phases.txt") if l.startswith("phase ")}
waits = phases["sleep"] + phases["pipe"] + phases["mutex"]

# pprof: Type off_cpu, the three waits (1 s each) in cum of main
text = open(f"{tmp}/pprof.txt").read()
check("Type: off_cpu" in text, "pprof -sample_index=off_cpu: Type off_cpu")
def cum(fn):
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 6 and f[5] == fn:
            v = f[3]
            return float(v[:-2]) / 1e3 if v.endswith("ms") else float(v[:-1])
    return 0.0
for fn, ph in (("off_cpu_sleep", "sleep"), ("off_cpu_pipe_wait", "pipe"), ("off_cpu_mutex_wait", "mutex")):
    check(abs(cum(fn) - phases[ph] / 1e9) <= 0.1 * phases[ph] / 1e9, f"pprof off_cpu: {fn} cum {cum(fn)} s")
check("off_cpu_compute" in open(f"{tmp}/pprof-cpu.txt").read(), "pprof cpu: off_cpu_compute")

# speedscope --off-cpu: a profile per thread, weights in ns adding up to its waits
d = json.load(open(f"{tmp}/off.speedscope.json"))
profiles = {p["name"]: p for p in d["profiles"]}
check(all(p["unit"] == "nanoseconds" for p in profiles.values()), "speedscope: nanoseconds")
main = [p for n, p in profiles.items() if n.startswith("waits (tid")]
check(len(main) == 1 and abs(sum(main[0]["weights"]) - waits) <= 0.1 * waits,
      f"speedscope: the main thread's weights add up to its waits ({waits / 1e9:.3f} s)")
check(any(n.startswith("pipe-writer (tid") for n in profiles), "speedscope: the pipe-writer thread's profile")

# folded --off-cpu: ns
total = sum(int(l.rsplit(" ", 1)[1]) for l in open(f"{tmp}/off.folded") if l.strip())
check(abs(total - (waits + 2 * 1e9)) <= 0.1 * (waits + 2e9), f"folded --off-cpu: {total / 1e9:.3f} s in all")

# --wall: the main thread's CPU + runnable + blocked ≈ the four phases
wall = open(f"{tmp}/wall.txt").read()
def secs(v, unit):
    return float(v) * {"s": 1, "ms": 1e-3, "us": 1e-6}[unit]
row = re.compile(r"^\s*(\d+)\s+(\d+)\s+([\d.]+) (s|ms|us)\s+([\d.]+) (s|ms|us)\s+([\d.]+) (s|ms|us)\s+([\d.]+) (s|ms|us)\s+(\S+)")
rows = [m for m in map(row.match, wall.splitlines()) if m]
mainrow = [m for m in rows if m.group(1) == m.group(2)]
allphases = sum(phases.values()) / 1e9
check(len(mainrow) == 1, "--wall: a row for the main thread")
if mainrow:
    w = secs(mainrow[0].group(3), mainrow[0].group(4))
    b = secs(mainrow[0].group(9), mainrow[0].group(10))
    check(abs(w - allphases) <= 0.15 * allphases, f"--wall: main thread {w:.3f} s of {allphases:.3f} s of phases")
    check(abs(b - waits / 1e9) <= 0.1 * waits / 1e9, f"--wall: main thread blocked {b:.3f} s")
sys.exit(1 if failures else 0)
PY
echo "off-CPU waits: ok"
