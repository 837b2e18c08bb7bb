#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# run-unwind-bench.sh: DWARF unwinding cost, Periscope against perf, on one
# fixed-work workload without frame pointers (bench/unwind-workload.c) at
# ~1 kHz. Rerunnable: needs root (perf), a built tree (default ./build) and
# linux-perf. Prints a markdown table; bench/RESULTS.md holds a recorded run.
#
#   bench/run-unwind-bench.sh [BUILD_DIR]      env: RUNS (5), ROUNDS (1000), REPLAY_S (5)
#
# Per mode, RUNS runs; the table shows medians:
#   wall/cpu   the workload's own run time and CPU time (it measures itself)
#   slowdown   wall (cpu) against the workload alone
#   main       % of the workload's samples whose stack reaches main
#   B/sample   bytes on disk per sample (capture or perf.data)
#   finish     from the workload's last instruction to a finished capture
#              (Periscope: `periscope record` returned) or report (perf:
#              `perf record` returned and `perf report` printed)
# Then the unwinder alone replaying recorded samples on one core.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
runs=${RUNS:-5}
rounds=${ROUNDS:-1000}
replay_s=${REPLAY_S:-5}
[ "$(id -u)" = 0 ] || { echo "run as root (perf_event_open for other processes, perf record)"; exit 1; }
command -v perf >/dev/null || { echo "perf missing: apt-get install -y linux-perf"; exit 1; }
W=$build/bench/unwind-bench-workload
export PERISCOPED=$build/service/periscoped PERISCOPE_HELPER=$build/sandbox-helper/periscope-helper
# Sysprof 3.46 where this machine has it; otherwise the row says why not.
. "$top/bench/sysprof-bus.sh"
bench_start unwind-bench "$W" "$build/cli/periscope" "$build/service/periscoped" "$build/sandbox-helper/periscope-helper" \
        "$build/tests/service/capture-json" "$build/tests/service/unwind/unwind-record"

python3 - "$top" "$build" "$W" "$tmp" "$runs" "$rounds" "$replay_s" <<'PY'
import os, re, statistics, subprocess, sys, time
top, build, W, tmp, runs, rounds, replay_s = sys.argv[1:]
runs, rounds = int(runs), str(rounds)
chains = ["main,bench_level1,bench_level2,bench_level3,bench_level4,bench_leaf", "main,bench_sort,*,bench_compare"]

def parse_workload(out):
    m = re.search(r"work_ns=(\d+) end_ns=(\d+) cpu_ns=(\d+)", out)
    if not m:
        sys.exit(f"workload output not found in: {out[-500:]}")
    return [int(x) for x in m.groups()]

def perf_main_share(data):
    out = subprocess.run(["perf", "script", "-i", data, "-F", "comm,ip,sym"], capture_output=True, text=True).stdout
    total = main = 0
    for block in out.split("\n\n"):
        lines = [l for l in block.strip().splitlines() if l.strip()]
        if not lines or "unwind-bench-wo" not in lines[0]:
            continue
        total += 1
        if any(re.search(r"\smain(\+0x[0-9a-f]+)?$", l.strip()) or l.strip().endswith(" main") for l in lines[1:]):
            main += 1
    return total, main

def run_mode(mode):
    cap = os.path.join(tmp, "cap")
    if mode == "alone":
        t0 = time.monotonic_ns()
        out = subprocess.run([W, rounds], capture_output=True, text=True, check=True).stdout
        work, end, cpu = parse_workload(out)
        return dict(wall=work, cpu=cpu)
    if mode.startswith("periscope"):
        unwind = mode.split("-")[1]
        extra = ["--stack-size", "8192"] if mode.endswith("-8k") else []
        p = subprocess.run([f"{build}/cli/periscope", "record", "--private", "--unwind", unwind, "-F", "1000", *extra,
                            "-o", cap + ".syscap", "--", W, rounds], capture_output=True, text=True)
        done = time.monotonic_ns()
        if p.returncode != 0:
            sys.exit(f"periscope record failed: {p.stderr[-800:]}")
        work, end, cpu = parse_workload(p.stdout)
        args = ["python3", f"{top}/tests/service/unwind/check-service-capture.py", f"{build}/tests/service/capture-json",
                cap + ".syscap", W, "--min-samples", "1"]
        for c in chains:
            args += ["--chain", c]
        c = subprocess.run(args, capture_output=True, text=True)
        m = re.search(r"(\d+) samples: ([\d.]+)% reach the root.*capture (\d+) bytes, (\d+) bytes/sample", c.stdout)
        if not m:
            sys.exit(f"cannot read the capture: {c.stdout} {c.stderr}")
        n, pct, size, bps = int(m.group(1)), float(m.group(2)), int(m.group(3)), int(m.group(4))
        return dict(wall=work, cpu=cpu, samples=n, main=pct, bps=bps, finish=done - end)
    if mode == "sysprof":
        p = subprocess.run(["sysprof-cli", "--force", cap + ".sp.syscap", "--", W, rounds], capture_output=True,
                           text=True)
        done = time.monotonic_ns()
        work, end, cpu = parse_workload(p.stdout)
        args = ["python3", f"{top}/tests/service/unwind/check-service-capture.py", f"{build}/tests/service/capture-json",
                cap + ".sp.syscap", W, "--min-samples", "1"]
        for c in chains:
            args += ["--chain", c]
        c = subprocess.run(args, capture_output=True, text=True)
        m = re.search(r"(\d+) samples: ([\d.]+)% reach the root.*capture (\d+) bytes, (\d+) bytes/sample", c.stdout)
        if not m:
            return dict(wall=work, cpu=cpu, error=(c.stdout + c.stderr)[-300:])
        # A system-wide capture: bytes per sample over all samples of the file.
        n, pct, size = int(m.group(1)), float(m.group(2)), int(m.group(3))
        j = subprocess.run([f"{build}/tests/service/capture-json", cap + ".sp.syscap"], capture_output=True, text=True)
        all_samples = sum(1 for l in j.stdout.splitlines() if '"type": "SAMPLE"' in l or '"type":"SAMPLE"' in l)
        return dict(wall=work, cpu=cpu, samples=n, main=pct, bps=size // max(all_samples, 1), finish=done - end)
    # perf
    data = cap + ".perf.data"
    cg = ["--call-graph", "dwarf"] if mode == "perf-dwarf" else ["-g"]
    p = subprocess.run(["perf", "record", "-q", "-F", "1000", *cg, "-o", data, "--", W, rounds],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"perf record failed: {p.stderr[-800:]}")
    work, end, cpu = parse_workload(p.stdout)
    subprocess.run(["perf", "report", "-i", data, "--stdio"], capture_output=True, check=True)
    done = time.monotonic_ns()
    total, main = perf_main_share(data)
    size = os.path.getsize(data)
    return dict(wall=work, cpu=cpu, samples=total, main=100.0 * main / max(total, 1), bps=size // max(total, 1),
                finish=done - end)

modes = ["alone", "periscope-dwarf", "periscope-dwarf-8k", "perf-dwarf", "perf-fp", "periscope-fp"]
if not os.environ.get("SYSPROF_REASON"):
    modes.append("sysprof")
results = {m: [] for m in modes}
for r in range(runs):
    for m in modes:          # interleaved, so machine load hits every mode alike
        results[m].append(run_mode(m))

def med(m, k):
    vals = [x[k] for x in results[m] if k in x]
    return statistics.median(vals) if vals else None

base_wall, base_cpu = med("alone", "wall"), med("alone", "cpu")
print(f"workload: {W} {rounds} (alone: wall {base_wall/1e9:.2f} s, cpu {base_cpu/1e9:.2f} s), {runs} runs, medians\n")
print("| mode | wall s | cpu s | slowdown wall (cpu) | samples | reach main | bytes/sample | end → finished |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
names = {"periscope-dwarf-8k": "Periscope `--unwind dwarf --stack-size 8192` (perf's default copy size)", "sysprof": "Sysprof 3.46 `sysprof-cli` (system-wide)", "alone": "workload alone", "periscope-dwarf": "Periscope `--unwind dwarf`", "perf-dwarf":
         "`perf record --call-graph dwarf`", "perf-fp": "`perf record -g`", "periscope-fp": "Periscope `--unwind fp`"}
for m in modes:
    w, c = med(m, "wall"), med(m, "cpu")
    row = [names[m], f"{w/1e9:.2f}", f"{c/1e9:.2f}", f"{w/base_wall:.2f}× ({c/base_cpu:.2f}×)"]
    if m == "alone":
        row += ["—", "—", "—", "—"]
    else:
        row += [f"{med(m,'samples'):.0f}", f"{med(m,'main'):.1f}%", f"{med(m,'bps'):.0f}", f"{med(m,'finish')/1e9:.2f} s"]
    print("| " + " | ".join(row) + " |")
if os.environ.get("SYSPROF_REASON"):
    print(f"| Sysprof 3.46 | not run: {os.environ['SYSPROF_REASON']} | | | | | | |")
pd, pp = med("periscope-dwarf", "bps"), med("perf-dwarf", "bps")
print(f"\nbytes per sample, perf dwarf / Periscope dwarf: {pp/pd:.0f}×")
print(f"CPU slowdown of the workload: Periscope dwarf {med('periscope-dwarf','cpu')/base_cpu:.3f}× "
      f"(16 KiB copies), {med('periscope-dwarf-8k','cpu')/base_cpu:.3f}× (8 KiB), "
      f"perf dwarf {med('perf-dwarf','cpu')/base_cpu:.3f}× (8 KiB)")

# The unwinder alone: samples recorded with perf_event_open in the harness,
# then replayed for REPLAY_S seconds on CPU 0.
p = subprocess.run(["taskset", "-c", "0", f"{build}/tests/service/unwind/unwind-record", "--min-ok", "0", "--min-full", "0",
                    "--replay-seconds", replay_s, "--chain", "main", "--", W, "300"], capture_output=True, text=True)
m = re.search(r"replay: .*", p.stdout)
print("\nunwinder alone (one core):", m.group(0) if m else f"failed: {p.stdout} {p.stderr[-500:]}")
PY
