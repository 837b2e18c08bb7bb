#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# run-system-bench.sh: whole-system recording at 999 Hz while a mix of real
# programs runs (a deep chain without frame pointers, Debian's python3, a
# static binary, a 4-thread program, a Go program and an exec storm of 2000
# short-lived processes of 300 distinct binaries with 50 ms programs among
# them), in one run, for:
#   periscope   periscoped on a private system bus, `periscope record --system`
#   perf        `perf record -a --call-graph dwarf` + `perf report`
#   sysprof     `sysprof-cli` through Sysprof 3.46's sysprofd (frame pointers)
# Rerunnable: needs root, a built tree (default ./build), linux-perf, golang-go
# and sysprof (scripts/install-deps.sh). Prints a markdown table; RESULTS.md
# holds a recorded run.
#
#   bench/run-system-bench.sh [BUILD_DIR]      env: SECONDS_RECORDED (10), RUNS (1),
#                                              PEERS=0 (Periscope's row only)
#
# Two builds' cost per sample, the same mix one after the other:
#   for b in OLD/build NEW/build; do PEERS=0 bench/run-system-bench.sh $b; done
#
# Per tool, per program: % of its samples whose stack goes back to where its
# thread began (_start / clone / Go's goexit), then: samples, lost samples,
# bytes on disk, from the end of the recording to a finished report, and for
# periscoped its own CPU time per sample and its peak RSS.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
secs=${SECONDS_RECORDED:-10}
[ "$(id -u)" = 0 ] || { echo "run as root (whole-system perf events)"; exit 1; }
for c in perf go; do command -v $c >/dev/null || { echo "$c missing: scripts/install-deps.sh"; exit 1; }; done
. "$top/bench/sysprof-bus.sh"
bench_start system-bench "$build/cli/periscope" "$build/service/periscoped" "$build/sandbox-helper/periscope-helper" \
        "$build/tests/service/unwind/unwind-workload-deep" "$build/tests/service/unwind/unwind-workload-deep-static" \
        "$build/tests/service/unwind/unwind-workload-threads"
[ -z "$SYSPROF_REASON" ] || echo "sysprof: $SYSPROF_REASON"
# periscoped on the same private bus, so its CPU time and RSS can be read.
PERISCOPE_HELPER=$build/sandbox-helper/periscope-helper "$build/service/periscoped" \
        --address="$DBUS_SYSTEM_BUS_ADDRESS" 2>"$tmp/periscoped.log" &
daemon=$!
private_bus_track $daemon
private_bus_wait_name org.periscope.Profiler1 10 $daemon || { cat "$tmp/periscoped.log"; exit 1; }

GOCACHE=$tmp/gocache GOPATH=$tmp/gopath go build -o "$tmp/go-chain" "$top/tests/service/unwind/workloads/go-chain.go"
cp "$build/tests/service/unwind/unwind-workload-deep" "$tmp/short-deep"
mkdir "$tmp/bin"
for i in $(seq 300); do
        cp "$tmp/short-deep" "$tmp/bin/p$i"
        printf 'distinct %d' "$i" >>"$tmp/bin/p$i"
done

python3 - "$top" "$build" "$tmp" "$secs" "$daemon" "${SYSPROF_REASON:-}" <<'PY'
import os, re, signal, subprocess, sys, time
top, build, tmp, secs, daemon, sysprof_reason = sys.argv[1:]
peers = os.environ.get("PEERS", "1") != "0"
secs, daemon = int(secs), int(daemon)
U = f"{build}/tests/service/unwind"
sys.path.insert(0, f"{top}/tests/lib")
from folded import C_ROOTS, GO_ROOTS, by_process
# perf script names Go's assembly functions without the ABI suffix
GO_ROOTS = GO_ROOTS | {r.removesuffix(".abi0") for r in GO_ROOTS}

def start_mix():
    long = {
        "deep (no fp)": [f"{U}/unwind-workload-deep", "600000"],
        "python3": ["/usr/bin/python3", f"{top}/tests/service/unwind/workloads/py-fib.py", "600"],
        "static": [f"{U}/unwind-workload-deep-static", "600000"],
        "4 threads": [f"{U}/unwind-workload-threads", "600000"],
        "Go": [f"{tmp}/go-chain", "600"],
    }
    procs = {name: subprocess.Popen(argv, stdout=subprocess.DEVNULL) for name, argv in long.items()}
    # 2000 short-lived processes: 300 distinct binaries (copies that differ
    # in content, so each is its own file to pin and table to compile), the
    # rest /bin/true, and a 50 ms program after every 10 of the first 200
    storm = subprocess.Popen(["bash", "-c", f"""for i in $(seq 2000); do
        if [ $i -le 300 ]; then {tmp}/bin/p$i 1; else /bin/true; fi
        [ $((i % 10)) = 0 ] && [ $i -le 200 ] && {tmp}/short-deep 50; done"""])
    return procs, storm

def stop_mix(procs, storm):
    for p in list(procs.values()) + [storm]:
        p.send_signal(signal.SIGKILL)
        p.wait()

def shares(stacks_by_pid, procs, short_pids):
    out = {}
    for name, p in procs.items():
        roots = GO_ROOTS if name == "Go" else C_ROOTS
        st = stacks_by_pid.get(p.pid, [])
        total = sum(n for _, n in st)
        hit = sum(n for f, n in st if roots & set(f))
        out[name] = (hit, total)
    st = [s for pid in short_pids for s in stacks_by_pid.get(pid, [])]
    total = sum(n for _, n in st)
    hit = sum(n for f, n in st if C_ROOTS & set(f) or all(x.endswith(" [kernel]") or x.endswith("[k]") for x in f))
    out["50 ms programs"] = (hit, total)
    return out

def folded_by_pid(capture):
    p = subprocess.run([f"{build}/cli/periscope", "report", "--folded", "--process-root", capture],
                       capture_output=True, text=True)
    by_pid, comm, _ = by_process(p.stdout.splitlines())
    return by_pid, comm

def proc_cpu_ns(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) * 1e9 / os.sysconf("SC_CLK_TCK")

def proc_hwm_kb(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0

results = {}
# ---- Periscope
procs, storm = start_mix(); time.sleep(0.5)
cap = f"{tmp}/p.syscap"
cpu0 = proc_cpu_ns(daemon)
p = subprocess.run([f"{build}/cli/periscope", "record", "--address", os.environ["DBUS_SYSTEM_BUS_ADDRESS"],
                    "--system", "-F", "999", "--duration", str(secs), "-o", cap], capture_output=True, text=True)
t_end = time.monotonic()  # the recording's end is inside record; finish = record's post-stop + report
stop_mix(procs, storm)
cpu1 = proc_cpu_ns(daemon)
m = re.search(r"recorded (\d+) samples \((\d+) lost\)", p.stderr)
if p.returncode != 0 or not m:
    sys.exit("periscope record failed: " + p.stderr[-800:])
samples, lost = int(m.group(1)), int(m.group(2))
t0 = time.monotonic()
by_pid, comm = folded_by_pid(cap)
report_s = time.monotonic() - t0
short = [pid for pid, c in comm.items() if c == "short-deep"]
post = re.search(r"symbolized .* (\d+) ms", open(f"{tmp}/periscoped.log").read())
results["Periscope"] = dict(shares=shares(by_pid, procs, short), samples=samples, lost=lost,
                            bytes=os.path.getsize(cap), finish=report_s + (int(post.group(1)) / 1000 if post else 0),
                            cpu_per_sample=(cpu1 - cpu0) / max(samples, 1), rss=proc_hwm_kb(daemon))

# ---- perf
if peers:
    procs, storm = start_mix(); time.sleep(0.5)
    data = f"{tmp}/perf.data"
    p = subprocess.run(["perf", "record", "-a", "-F", "999", "--call-graph", "dwarf", "-o", data, "--", "sleep", str(secs)],
                       capture_output=True, text=True)
    stop_mix(procs, storm)
    t0 = time.monotonic()
    rep = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children"], capture_output=True, text=True)
    scr = subprocess.run(["perf", "script", "-i", data, "-F", "comm,pid,ip,sym"], capture_output=True, text=True)
    finish = time.monotonic() - t0
    by_pid, short = {}, set()
    for block in scr.stdout.split("\n\n"):
        lines = [l for l in block.strip().splitlines() if l.strip()]
        if not lines:
            continue
        head = lines[0].split()
        try:
            pid = int(head[1])
        except (IndexError, ValueError):
            continue
        if head[0] == "short-deep":
            short.add(pid)
        frames = [l.split(None, 1)[1].rsplit("+0x", 1)[0] if len(l.split(None, 1)) > 1 else "" for l in lines[1:]]
        by_pid.setdefault(pid, []).append((frames, 1))
    stats = subprocess.run(["perf", "report", "-i", data, "--stats"], capture_output=True, text=True).stdout
    lost = sum(int(x) for x in re.findall(r"LOST_SAMPLES events:\s+(\d+)", stats)) + \
           sum(int(x) for x in re.findall(r"LOST events:\s+(\d+)", stats))
    n = sum(len(v) for v in by_pid.values())
    results["perf (dwarf)"] = dict(shares=shares(by_pid, procs, short), samples=n, lost=lost,
                                   bytes=os.path.getsize(data), finish=finish, cpu_per_sample=None, rss=None)

    # ---- Sysprof
if peers and not sysprof_reason:
    procs, storm = start_mix(); time.sleep(0.5)
    scap = f"{tmp}/s.syscap"
    p = subprocess.run(["timeout", str(secs + 30), "sysprof-cli", "--force", "--no-battery", "--no-disk",
                        "--no-network", "--no-cpu", "--no-memory", scap, "--", "sleep", str(secs)],
                       capture_output=True, text=True)
    stop_mix(procs, storm)
    if os.path.exists(scap):
        t0 = time.monotonic()
        by_pid, comm = folded_by_pid(scap)
        finish = time.monotonic() - t0
        short = [pid for pid, c in comm.items() if c == "short-deep"]
        n = sum(c for v in by_pid.values() for _, c in v)
        results["Sysprof 3.46"] = dict(shares=shares(by_pid, procs, short), samples=n, lost=None,
                                       bytes=os.path.getsize(scap), finish=finish, cpu_per_sample=None, rss=None)
    else:
        print("sysprof-cli wrote no capture:", p.stderr[-400:])
elif peers:
    print("Sysprof row skipped:", sysprof_reason)

names = ["deep (no fp)", "python3", "static", "4 threads", "Go", "50 ms programs"]
print(f"\nWhole system, {secs} s at 999 Hz, {os.cpu_count()} CPUs\n")
print("| tool | " + " | ".join(names) + " | samples | lost | bytes | finish | daemon CPU/sample | daemon peak RSS |")
print("|---" * (len(names) + 7) + "|")
for tool, r in results.items():
    cells = []
    for nm in names:
        hit, total = r["shares"].get(nm, (0, 0))
        cells.append(f"{100.0 * hit / total:.1f}% of {total}" if total else "no samples")
    lost = "?" if r["lost"] is None else str(r["lost"])
    cpu = f"{r['cpu_per_sample'] / 1000:.1f} us" if r["cpu_per_sample"] is not None else "—"
    rss = f"{r['rss'] / 1024:.0f} MB" if r["rss"] else "—"
    print(f"| {tool} | " + " | ".join(cells) +
          f" | {r['samples']} | {lost} | {r['bytes'] / 1e6:.1f} MB | {r['finish']:.2f} s | {cpu} | {rss} |")
PY
