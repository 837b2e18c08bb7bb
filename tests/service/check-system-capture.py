#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Checks a system-wide recording (capture-json's lines on stdin): many
processes with their maps, samples of the demo workload WORK and of dd DD
(which spends its time in the kernel), kernel stacks with the kernel context
marker. Shared by test-record-system.sh (private daemon) and the
installed-service family (tests/service/installed/).

usage: capture-json CAPTURE | check-system-capture.py WORK DD
"""
import json, sys
work, dd = int(sys.argv[1]), int(sys.argv[2])
frames = [json.loads(l) for l in sys.stdin]
procs = {f["pid"] for f in frames if f["type"] == "PROCESS"}
mapped = {f["pid"] for f in frames if f["type"] == "MAP"}
sampled = {f["pid"] for f in frames if f["type"] == "SAMPLE"}
kernel = [f for f in frames if f["type"] == "SAMPLE" and 2**64 - 128 in f["addrs"]]
ok = True
def need(cond, msg):
    global ok
    if not cond:
        print("FAIL:", msg); ok = False
need(len(procs) >= 10, f"only {len(procs)} processes in a system-wide snapshot")
need(work in procs and work in mapped and work in sampled, f"the demo workload {work} is missing (procs/maps/samples)")
need(dd in sampled, f"dd {dd} has no samples")
need(len(kernel) >= 5, f"only {len(kernel)} samples with kernel stacks (root may see them)")
k = kernel[0]["addrs"] if kernel else []
# the kernel part runs to the user marker, or to the end (a kernel thread)
kend = k.index(2**64 - 512) if 2**64 - 512 in k else len(k)
need(not kernel or (k[0] == 2**64 - 128 and all(a >= 2**63 for a in k[1:kend])),
     f"kernel part malformed: {k}")
if not ok: sys.exit(1)
print(f"ok: {len(procs)} processes, {len(sampled)} sampled, {len(kernel)} samples with kernel stacks")
