#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-waits.py FOLDED_NS FOLDED_SAMPLES PHASES KERNEL(0|1) [TOLERANCE [SAMPLE_FLOOR]]:
# the off-CPU profile of workload-waits (folded stacks in ns from
# `report --off-cpu --folded`) attributes each of its waits to its own
# function within TOLERANCE (default 0.10) of the wait's wall-clock length
# (the workload's `phase NAME NS` lines); with KERNEL=1 each wait's stacks
# end in the kernel's wait (do_nanosleep, pipe_read, futex_wait), with 0
# no stack has a kernel frame. FOLDED_SAMPLES (`report --folded`, or -):
# the compute phase as CPU samples, as many as the CPU time the thread got
# (at least SAMPLE_FLOOR of it, default 0.8, at most 1.2 times it). Under
# software emulation pass a lower floor: the guest's cpu-clock hrtimer
# fires late when the host deschedules the vCPU, and the kernel then takes
# one sample and drops the periods it missed (hrtimer_forward_now).
import sys

folded_ns, folded_samples, phases_path, kernel = sys.argv[1:5]
tolerance = float(sys.argv[5]) if len(sys.argv) > 5 else 0.10
sample_floor = float(sys.argv[6]) if len(sys.argv) > 6 else 0.8
kernel = kernel == "1"
phases, cpu = {}, {}
for line in open(phases_path):
    parts = line.split()
    if len(parts) == 3 and parts[0] == "phase":
        phases[parts[1]] = int(parts[2])
    if len(parts) == 3 and parts[0] == "cpu":
        cpu[parts[1]] = int(parts[2])
failures = []


def check(cond, what):
    print(("ok: " if cond else "FAILED: ") + what)
    if not cond:
        failures.append(what)


check(set(phases) == {"compute", "sleep", "pipe", "mutex"}, f"the workload said its phases: {phases}")
stacks = []
for line in open(folded_ns):
    line = line.rstrip("\n")
    if not line:
        continue
    stack, _, n = line.rpartition(" ")
    stacks.append((stack.split(";"), int(n)))
total = sum(n for _, n in stacks)
print(f"{len(stacks)} blocked stacks, {total / 1e9:.3f} s")
waits = {"sleep": ("off_cpu_sleep", "do_nanosleep"), "pipe": ("off_cpu_pipe_wait", "pipe_read"),
         "mutex": ("off_cpu_mutex_wait", "futex_wait")}
for phase, (function, kwait) in waits.items():
    mine = [(frames, n) for frames, n in stacks if function in frames]
    ns = sum(n for _, n in mine)
    want = phases.get(phase, 0)
    check(want > 0 and abs(ns - want) <= tolerance * want,
          f"{function}: blocked {ns / 1e9:.3f} s, the {phase} phase lasted {want / 1e9:.3f} s (±{tolerance:.0%})")
    if kernel:
        ends = [frames for frames, _ in mine if any(kwait in f for f in frames[frames.index(function):])]
        check(len(mine) > 0 and len(ends) == len(mine),
              f"{function}: its blocked stacks reach the kernel's {kwait} ({len(ends)} of {len(mine)})")
        for frames, n in mine:
            if frames not in ends:
                print(f"  not through {kwait} ({n / 1e6:.3f} ms): {';'.join(frames[frames.index(function):])}")
if not kernel:
    kframes = [f for frames, _ in stacks for f in frames if "[kernel]" in f or f.endswith("_[k]")]
    check(not kframes, f"no kernel frame for a caller who may not see kernel addresses ({kframes[:3]})")
# the compute phase burned the CPU: no blocked stack of it
check(not any("off_cpu_compute" in frames for frames, _ in stacks), "off_cpu_compute never blocked")
if folded_samples != "-":
    samples = 0
    for line in open(folded_samples):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        if "off_cpu_compute" in stack.split(";"):
            samples += int(n)
    # the second of compute as CPU samples: as many as the CPU time the
    # thread got (on a busy machine less than the wall-clock second)
    got = cpu.get("compute", 0) / 1e9
    check(got > 0.1 and sample_floor * got <= samples / 999 <= 1.2 * got,
          f"off_cpu_compute: {samples} CPU samples at 999 Hz = {samples / 999:.3f} s, the thread got {got:.3f} s "
          f"of CPU in its {phases.get('compute', 0) / 1e9:.3f} s phase")
sys.exit(1 if failures else 0)
