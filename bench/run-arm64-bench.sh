#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# run-arm64-bench.sh [BUILD_DIR]: Periscope against perf on arm64, in the
# emulated Debian 12 arm64 machine of tests/vm/test-vm-arm64.sh (Debian's
# kernel 6.1 and perf 6.1, qemu-system-aarch64 -cpu max,pauth-impdef=on,
# TCG). Needs root and what that test needs; reuses its cached image and
# the cross build in BUILD_DIR/arm64-usr (default ./build). One fast boot
# (bench/arm64-guest.sh) records each program with Periscope (DWARF, and
# `--unwind fp` on the frame-pointer build), `perf record --call-graph
# dwarf` and `perf record -g`, all at 999 Hz on cpu-clock. Prints a
# markdown table; bench/RESULTS.md holds a recorded run.
#
#   entry     % of the program's samples whose stack reaches its entry
#             function (main, worker_main, main.main or a Go runtime thread's,
#             Py_BytesMain)
#   caller    % of the samples in the leaf (its innermost user frame) that
#             show the leaf's caller right above it
#   B/sample  bytes of capture or perf.data per sample
#   finish    from the program's end to a written report (Periscope:
#             `periscope record` returned + `periscope report --folded`;
#             perf: `perf record` returned + `perf script`), as a ratio to
#             Periscope's DWARF run of the same program: emulation
#             stretches every time, so only ratios mean something
#
#   env: BENCH_MS (2000: CPU milliseconds per program)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
fail() { echo "run-arm64-bench: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "run as root (debootstrap, the VM's image)"
. "$top/tests/vm/vm-lib.sh"
. "$top/tests/vm/arm64-lib.sh"

tmp=$(mktemp -d /var/tmp/periscope-arm64-bench.XXXXXX)
share=$tmp/share
mkdir -p "$share"
trap 'vm_stop; rm -rf "$tmp"' EXIT
arm64_usr_stage "$build" "$top" "$share/stage" "$tmp"
arm64_workloads "$top" "$share/bin" "$tmp"
arm64_vm_image "$share/stage" linux-perf
install -m 0644 "$top/tests/vm/guest-lib.sh" "$share/guest-lib.sh"
install -m 0755 "$top/bench/arm64-guest.sh" "$share/run.sh"
[ -z "${BENCH_MS:-}" ] || sed -i "s/^ms=.*/ms=$BENCH_MS/" "$share/run.sh"
VM_TIMEOUT=1500 vm_boot_fast "$share"
[ "$VM_STATUS" = 0 ] || { cat "$share/out/run.log"; fail "the guest's script exited $VM_STATUS"; }
echo "VM: $(cat "$share/out/kernel"), $(cat "$share/out/perf-version"), boot to power-off $VM_SECONDS s"
PYTHONPATH=$top/tests/lib python3 - "$share/out" <<'PY'
import os, re, sys
from folded import C_ROOTS, GO_ROOTS
out = sys.argv[1]
# Go's runtime threads and its g0/signal stacks have entries of their own
GO_ENTRIES = {"main.main", "runtime.mstart1", "runtime.bgsweep", "runtime.bgscavenge", "runtime.gcBgMarkWorker",
              "runtime.forcegchelper", "runtime.runfinq", "runtime.mcall", "runtime.morestack.abi0",
              "runtime.sigtramp.abi0"}
PROGRAMS = [  # name, entries, leaf, caller
    ("deep-nofp", {"main"}, "leaf_work", "chain_d"),
    ("deep-fp", {"main"}, "leaf_work", "chain_d"),
    ("threads", {"main", "worker_main"}, "worker_leaf", "worker_mid"),
    ("go-chain", GO_ENTRIES, "main.leafWork", "main.chainB"),
    ("rust-chain", {"main"}, "workload::deep::chain_c", "workload::deep::chain_b"),
    ("python3", {"Py_BytesMain"}, None, None),
]
CLONED = re.compile(r"\.(constprop|isra|part|cold)\.\d+$")
TOOLS = [("periscope-dwarf", "Periscope (DWARF)"), ("periscope-fp", "Periscope `--unwind fp`"),
         ("perf-dwarf", "perf `--call-graph dwarf`"), ("perf-g", "perf `-g`")]
status = dict(l.split() for l in open(os.path.join(out, "runs")))


def periscope_stacks(path, program):
    # the program's samples (root frame "comm (pid N)"), outermost first,
    # kernel frames dropped
    for line in open(path):
        text, _, n = line.rstrip("\n").rpartition(" ")
        frames = text.split(";")
        m = re.match(r"\[?(.*?)\]? \(pid -?\d+\)$", frames[0])
        if m and m.group(1) == program[:15]:
            yield [CLONED.sub("", f) for f in frames[1:] if not f.endswith("[kernel]")], int(n)


def perf_stacks(path, program):
    comm = program[:15]
    for block in open(path, errors="replace").read().split("\n\n"):
        lines = block.strip("\n").splitlines()
        if not lines or not lines[0].strip().startswith(comm):
            continue
        frames = []
        for l in lines[1:]:
            m = re.match(r"\s*[0-9a-f]+ (.*) \((.*)\)$", l)
            if not m or "kernel.kallsyms" in m.group(2):
                continue
            sym = CLONED.sub("", re.sub(r"\+0x[0-9a-f]+$", "", m.group(1)))
            frames.append(sym)
        yield list(reversed(frames)), 1


rows, base = [], {}
for program, entries, leaf, caller in PROGRAMS:
    for tool, label in TOOLS:
        name = f"{program}.{tool}"
        if name not in status:
            continue
        if status[name] != "0":
            rows.append((program, label, "failed", "", "", ""))
            continue
        ev = os.path.join(out, name + ".event")
        if os.path.exists(ev) and open(ev).read().strip() != "cpu-clock":
            label += " (" + open(ev).read().strip() + "*)"
        path = os.path.join(out, name + ".stacks")
        st = list(periscope_stacks(path, program) if tool.startswith("periscope") else perf_stacks(path, program))
        total = sum(n for _, n in st)
        reach = sum(n for f, n in st if entries & set(f))
        in_leaf = sum(n for f, n in st if f and f[-1] == leaf) if leaf else 0
        with_caller = sum(n for f, n in st if f and f[-1] == leaf and f[-2:-1] == [caller]) if leaf else 0
        size = int(open(os.path.join(out, name + ".bytes")).read())
        end, done = map(int, open(os.path.join(out, name + ".times")).read().split())
        finish = (done - end) / 1e9
        if tool == "periscope-dwarf":
            base[program] = finish
        pct = lambda a, b: f"{100.0 * a / b:.1f}%" if b else "–"
        rows.append((program, label, f"{pct(reach, total)} of {total}",
                     f"{pct(with_caller, in_leaf)} of {in_leaf}" if leaf else "–",
                     f"{size / total:.0f}" if total else "–",
                     f"{finish / base[program]:.2f}" if base.get(program) else "–"))
print("| program | profiler | entry | leaf's caller | B/sample | finish (× Periscope DWARF) |")
print("| --- | --- | --- | --- | --- | --- |")
for r in rows:
    print("| " + " | ".join(r) + " |")
if any("*)" in r[1] for r in rows):
    print("\n\\* perf 6.1 refused cpu-clock with --call-graph dwarf on this SVE CPU"
          " (its register mask includes VG): sampled on its default event instead.")
PY
