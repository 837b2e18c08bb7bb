#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-no-kernel-addresses.py DUMP_JSON [--cpu]: a recording made for a
# caller who may not see kernel addresses (`periscope dump --json`): not one
# kernel address in its off-CPU stacks (periscope.offcpu metadata, markers
# aside; there must be some, unless --cpu: a recording without --off-cpu),
# nor in its samples' stacks (nor the kernel context marker). Shared by
# test-offcpu-user.sh (private daemon) and tests/vm/ (the installed service
# on Debian's kernel).
import json
import sys

d = json.load(open(sys.argv[1]))
cpu_only = sys.argv[2:] == ["--cpu"]
KERNEL_MARK = 2**64 - 128  # PERF_CONTEXT_KERNEL


def kernel(v):
    return v >= 0xFFFF800000000000 and v < 2**64 - 4095


n = bad = 0
for f in d["frames"]:
    if f["type"] == "METADATA" and f["id"] == "periscope.offcpu":
        for line in f["metadata"].split("\n"):
            if line.startswith("stack="):
                for a in line[6:].split(","):
                    n += 1
                    bad += kernel(int(a, 16))
samples = sbad = 0
for f in d["frames"]:
    if f["type"] == "SAMPLE":
        samples += 1
        sbad += any(kernel(int(a, 16)) or int(a, 16) == KERNEL_MARK for a in f["addresses"])
print(f"{n} off-CPU stack addresses, {bad} of them kernel addresses; "
      f"{samples} samples, {sbad} with a kernel address or marker")
sys.exit(1 if bad or sbad or samples == 0 or (n == 0 and not cpu_only) else 0)
