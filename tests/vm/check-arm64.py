# SPDX-License-Identifier: LGPL-2.1-or-later
"""check-arm64.py OUT: judges the recordings the arm64 VM made
(tests/vm/guest-arm64.sh wrote OUT/NAME.folded, `periscope report
--folded`). Prints one line per check and every failure; exits 1 if any
check failed. The stack checks count the samples whose innermost user frame
is the workload's call-free leaf, and want >= 99% of them to show the whole
chain from the entry (leaf <- its caller <- ... <- main): on arm64 such a
leaf keeps its return address in x30 only, which is what a frame-pointer
walk or a wrong register set loses first."""
import os
import re
import sys

from folded import C_ROOTS, GO_ROOTS, stacks

out = sys.argv[1]
failures = []


def load(name):
    path = os.path.join(out, name + ".folded")
    if not os.path.exists(path):
        failures.append(f"{name}: no report (the recording or its report failed in the VM)")
        return None
    return list(stacks(path))


def ends_with(frames, chain):
    return len(frames) >= len(chain) and frames[-len(chain):] == chain


def leaf_chain(name, chain, roots, min_pct=99.0, min_samples=100):
    """Of the samples in chain[-1] (innermost user frame), the share whose
    user frames end with chain and begin at one of roots."""
    s = load(name)
    if s is None:
        return
    leaf, caller = chain[-1], chain[-2]
    total = whole = with_caller = 0
    bad = {}
    for st in s:
        if not st.user or st.user[-1] != leaf:
            continue
        total += st.count
        if st.user[-2:-1] == [caller]:
            with_caller += st.count
        if ends_with(st.user, chain) and st.user[0] in roots:
            whole += st.count
        else:
            bad[st.text] = bad.get(st.text, 0) + st.count
    pct = 100.0 * whole / total if total else 0.0
    cpct = 100.0 * with_caller / total if total else 0.0
    print(f"{name}: {whole} of {total} {leaf} samples whole ({pct:.2f}%: {' <- '.join(reversed(chain))}"
          f" <- entry); {caller} present in {cpct:.2f}%")
    if total < min_samples:
        failures.append(f"{name}: only {total} samples in {leaf} (want {min_samples})")
    elif pct < min_pct:
        failures.append(f"{name}: {pct:.2f}% of {leaf}'s samples have the whole chain (want {min_pct}%)")
        for text, n in sorted(bad.items(), key=lambda kv: -kv[1])[:5]:
            print(f"    {n:6d}  {text[:300]}")


def reach(name, frame, roots, min_pct, min_samples=100):
    """The share of all user samples that reach frame from one of roots."""
    s = load(name)
    if s is None:
        return
    total = sum(st.count for st in s if st.user)
    hit = sum(st.count for st in s if st.user and frame in st.user and st.user[0] in roots)
    pct = 100.0 * hit / total if total else 0.0
    print(f"{name}: {hit} of {total} samples reach {frame} from the entry ({pct:.2f}%)")
    if total < min_samples:
        failures.append(f"{name}: only {total} samples (want {min_samples})")
    elif pct < min_pct:
        failures.append(f"{name}: {pct:.2f}% reach {frame} (want {min_pct}%)")
        for st in sorted(s, key=lambda st: -st.count)[:5]:
            if not (frame in st.user and st.user[0] in roots):
                print(f"    {st.count:6d}  {st.text[:300]}")


UNNAMED = re.compile(r"^(0x[0-9a-f]+|\[unknown\]|\?\?|unknown)( |$)")


def kernel(name, min_frames=50):
    """Kernel frames are there and named (kallsyms)."""
    s = load(name)
    if s is None:
        return
    frames = {}
    for st in s:
        for f in st.frames:
            if f.endswith("[kernel]"):
                frames[f] = frames.get(f, 0) + st.count
    total = sum(frames.values())
    unnamed = sum(n for f, n in frames.items() if UNNAMED.match(f))
    syscall = sum(n for f, n in frames.items() if re.match(r"(el0_svc|do_el0_svc|invoke_syscall|__arm64_sys_\w+) ", f))
    print(f"{name}: {total} kernel frames, {unnamed} unnamed, {syscall} in the arm64 syscall path"
          f" (e.g. {', '.join(sorted(frames, key=lambda f: -frames[f])[:4])})")
    if total < min_frames:
        failures.append(f"{name}: only {total} kernel frames (want {min_frames})")
    elif unnamed > total / 100:
        failures.append(f"{name}: {unnamed} of {total} kernel frames have no name")
    elif syscall == 0:
        failures.append(f"{name}: no kernel frame of the arm64 system call path (el0_svc, invoke_syscall, __arm64_sys_*)")


DEEP = ["main", "chain_a", "chain_b", "chain_c", "chain_d", "leaf_work"]
for who in ("priv", "svc-root", "svc-user"):
    leaf_chain(f"{who}-nofp", DEEP, C_ROOTS)
    leaf_chain(f"{who}-fp", DEEP, C_ROOTS)
leaf_chain("priv-threads", ["worker_main", "worker_mid", "worker_leaf"], C_ROOTS)
leaf_chain("priv-threads", ["main", "main_loop", "main_leaf"], C_ROOTS)
leaf_chain("priv-go", ["main.main", "main.chainA", "main.chainB", "main.leafWork"], GO_ROOTS)
leaf_chain("priv-rust", ["workload::deep::chain_a", "workload::deep::chain_b", "workload::deep::chain_c"], C_ROOTS)
reach("priv-rust", "main", C_ROOTS, 99.0)
reach("priv-python", "Py_BytesMain", C_ROOTS, 95.0)
kernel("priv-kernel")
kernel("svc-root-kernel")

for f in failures:
    print("FAIL: " + f)
sys.exit(1 if failures else 0)
