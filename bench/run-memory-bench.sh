#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The cost of the memory profiler per allocation, Periscope against Sysprof
# on the same workload in the same run: N malloc(64)+free pairs at call
# depths 5 and 20 (bench/memory-bench.c measures itself), run
#   plain                    no profiler
#   preloaded, no fd         libperiscope-memory.so without a control fd (off)
#   Periscope                libperiscope-memory.so recorded through the
#                            control-ring server periscoped runs
#                            (tests/service/control/control-record)
#   Sysprof                  `sysprof-cli --memprof --no-perf` (Sysprof 3.46's
#                            libsysprof-memory-4.so), sysprofd on a private bus
# and how many of the 2N allocation/free events each capture holds.
# Timings only: nothing is asserted (see bench/memory-profiler.md).
# usage: bench/run-memory-bench.sh [BUILD_DIR] [N]          env: RUNS (3)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
n=${2:-200000}
runs=${RUNS:-3}
bench=$build/bench/memory-bench
lib=$build/collector/libperiscope-memory.so
rec=$build/tests/service/control/control-record
. "$top/bench/sysprof-bus.sh"
bench_start memory-bench "$bench" "$lib" "$rec" "$build/cli/periscope"

python3 - "$build" "$bench" "$lib" "$rec" "$tmp" "$n" "$runs" <<'PY'
import os, re, statistics, subprocess, sys
build, bench, lib, rec, tmp, n, runs = sys.argv[1:]
runs = int(runs)
periscope = os.path.join(build, "cli", "periscope")
cap = os.path.join(tmp, "m.syscap")

def ns_per_pair(out):
    m = re.search(r"([0-9.]+) ns per pair", out)
    if not m:
        raise SystemExit("memory-bench printed no timing: " + out)
    return float(m.group(1))

def allocations(path):
    out = subprocess.run([periscope, "info", path], capture_output=True, text=True).stdout
    m = re.search(r"^\s*ALLOCATION\s+(\d+)", out, re.M)
    return int(m.group(1)) if m else 0

def run(mode, depth):
    env = dict(os.environ)
    argv = [bench, n, str(depth)]
    if mode == "preloaded":
        env["LD_PRELOAD"] = lib
    elif mode == "periscope":
        argv = [rec, "--preload", lib, cap, "--"] + argv
    elif mode == "sysprof":
        argv = ["sysprof-cli", "--force", "--no-perf", "--memprof", "--no-cpu", "--no-disk", "--no-memory",
                "--no-network", "--no-battery", "--no-decode", cap, "--"] + argv
    if os.path.exists(cap):
        os.unlink(cap)
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    t = ns_per_pair(p.stdout)
    events = allocations(cap) if mode in ("periscope", "sysprof") else None
    size = os.path.getsize(cap) if events is not None and os.path.exists(cap) else None
    return t, events, size

modes = ["plain", "preloaded", "periscope"]
if not os.environ.get("SYSPROF_REASON"):
    modes.append("sysprof")
names = {"plain": "plain", "preloaded": "preloaded, no control fd", "periscope": "Periscope (recorded)",
         "sysprof": "Sysprof 3.46 `--memprof`"}
print(f"N = {n} pairs ({2 * int(n)} events), median of {runs} runs\n")
print("| depth | run | ns per pair | events in capture | capture | ns per recorded event |")
print("| --- | --- | --- | --- | --- | --- |")
for depth in (5, 20):
    res = {}
    for mode in modes:
        rs = [run(mode, depth) for _ in range(runs)]
        t = statistics.median(r[0] for r in rs)
        ev = statistics.median(r[1] for r in rs) if rs[0][1] is not None else None
        size = statistics.median(r[2] or 0 for r in rs) if rs[0][1] is not None else None
        res[mode] = (t, ev, size)
        if ev is None:
            print(f"| {depth} | {names[mode]} | {t:.0f} | | | |")
        else:
            per = t * int(n) / ev if ev else float("inf")
            print(f"| {depth} | {names[mode]} | {t:.0f} | {int(ev)} ({100 * ev / (2 * int(n)):.1f}%) "
                  f"| {size / 1048576:.1f} MB | {per:.0f} |")
    if "sysprof" in res:
        (tp, ep, _), (ts, es, _) = res["periscope"], res["sysprof"]
        print(f"| {depth} | ratio Periscope/Sysprof | {tp / ts:.1f}x | {ep / es if es else float('inf'):.0f}x the events "
              f"| | {(tp / ep) / (ts / es) if es and ep else float('nan'):.2f}x |")
if os.environ.get("SYSPROF_REASON"):
    print(f"\nSysprof not run: {os.environ['SYSPROF_REASON']}")
PY
