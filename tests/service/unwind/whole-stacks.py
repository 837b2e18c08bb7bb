#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""whole-stacks.py NAME MIN_SAMPLES [MIN_PERCENT]: reads `periscope report
--folded` on stdin and checks that at least MIN_SAMPLES samples were
recorded and that at least MIN_PERCENT (default 95) of them reach _start or
a thread's start (__clone3, start_thread): node's stacks unwound whole
(test-node.sh, test-availability.sh)."""
import sys

name, min_samples = sys.argv[1], int(sys.argv[2])
min_pct = float(sys.argv[3]) if len(sys.argv) > 3 else 95
total = whole = 0
for line in sys.stdin:
    stack, _, n = line.rstrip("\n").rpartition(" ")
    total += int(n)
    if {"_start", "__clone3", "start_thread"} & set(stack.split(";")):
        whole += int(n)
pct = 100.0 * whole / total if total else 0
print(f"{name}: {whole} of {total} samples reach _start or a thread start ({pct:.1f}%)")
sys.exit(0 if total >= min_samples and pct >= min_pct else 1)
