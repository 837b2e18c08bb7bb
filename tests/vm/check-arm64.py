# SPDX-License-Identifier: LGPL-2.1-or-later
"""check-arm64.py OUT ROOTS: judges the recordings the arm64 VM made
(tests/vm/guest-arm64.sh wrote OUT/NAME.folded, `periscope report
--folded`). Prints one line per check and every failure; exits 1 if any
check failed. The stack checks count the samples whose innermost user frame
is the workload's call-free leaf, and want >= 99% of them to show the whole
chain from the entry (leaf <- its caller <- ... <- main): on arm64 such a
leaf keeps its return address in x30 only, which is what a frame-pointer
walk or a wrong register set loses first.

A stack begins at its thread's entry: C_ROOTS, GO_ROOTS, or an address
near a start in Debian's stripped libraries that has no name there, given
as ROOTS "FILE:START:LENGTH,…" (ld.so's ELF entry, where a program starts
before its _start; __clone, whose thread_start begins a pthread). A sample
taken inside execve past the point of no return has no more stack than it
shows, as does one without user frames."""
import dataclasses
import os
import re
import sys

from folded import C_ROOTS, GO_ROOTS, stacks

out = sys.argv[1]
failures = []
STARTS = []
for spec in filter(None, sys.argv[2].split(",")):
    f, start, length = spec.split(":")
    STARTS.append((f, int(start, 16), int(length, 16)))
# Go code on another stack than the goroutine's (the M's g0 stack, the
# signal stack; arm64's walltime and nanotime1 call the vdso on g0) has no
# more stack than it shows, for any unwinder; as
# tests/service/unwind/test-system-mix.sh counts it on x86_64
ROOTS = C_ROOTS | GO_ROOTS | {"runtime.mcall", "runtime.morestack.abi0", "runtime.sigtramp.abi0",
                              "runtime.systemstack.abi0", "runtime.walltime.abi0", "runtime.nanotime1.abi0"}
# the recorded command before its exec is still periscope's child
CLI = {"cmd_record", "start_held_command (inlined)", "record_control_child_wait"}
EXEC = {"load_elf_binary [kernel]", "begin_new_exec [kernel]", "bprm_execve [kernel]"}
CLONED = re.compile(r"\.(constprop|isra|part|cold)\.\d+$")


def is_root(frame):
    if frame in ROOTS:
        return True
    m = re.match(r"(.*)\+0x([0-9a-f]+)$", frame)
    return bool(m) and any(m.group(1) == f and start <= int(m.group(2), 16) < start + n for f, start, n in STARTS)


def whole(st):
    """The sample's stack goes back to its thread's entry, or has no more."""
    return not st.user or is_root(st.user[0]) or any(f in EXEC for f in st.frames)


def load(name):
    path = os.path.join(out, name + ".folded")
    if not os.path.exists(path):
        failures.append(f"{name}: no report (the recording or its report failed in the VM)")
        return None
    # GCC's clones (main_loop.constprop.0) by their function's name
    return [dataclasses.replace(st, user=[CLONED.sub("", f) for f in st.user]) for st in stacks(path)]


def ends_with(frames, chain):
    return len(frames) >= len(chain) and frames[-len(chain):] == chain


def leaf_chain(name, chain, min_pct=99.0, min_samples=100):
    """Of the samples in chain[-1] (innermost user frame), the share whose
    user frames end with chain and begin at the thread's entry."""
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
        if ends_with(st.user, chain) and is_root(st.user[0]):
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


def share_of(name, stacks, good, min_pct, min_samples, what, want):
    """Counts the samples of stacks for which good() holds; a failure when
    there are fewer than min_samples or the share is under min_pct. Returns
    whether it passed."""
    total = sum(st.count for st in stacks)
    ok = sum(st.count for st in stacks if good(st))
    pct = 100.0 * ok / total if total else 0.0
    print(f"{name}: {ok} of {total} samples{what} ({pct:.2f}%)")
    if total < min_samples:
        failures.append(f"{name}: only {total} samples (want {min_samples})")
    elif pct < min_pct:
        failures.append(f"{name}: {pct:.2f}% {want} (want {min_pct}%)")
        return False
    return True


def whole_stacks(name, min_pct, min_samples=100):
    """The share of the program's samples (not the recording CLI's before
    the exec) whose stack is whole."""
    s = load(name)
    if s is None:
        return
    s = [st for st in s if not CLI & set(st.user)]
    if not share_of(name, s, whole, min_pct, min_samples, " whole", "of the stacks are whole"):
        for st in sorted((st for st in s if not whole(st)), key=lambda st: -st.count)[:5]:
            print(f"    {st.count:6d}  {st.text[:300]}")


def interpreter(name, min_pct=99.0, min_samples=100):
    """Of the samples in python3's interpreter loop, the share that reach
    Py_BytesMain from the entry (Debian's stripped python3: names from
    .dynsym)."""
    s = load(name)
    if s is None:
        return
    loop = [st for st in s if "_PyEval_EvalFrameDefault" in st.user]
    share_of(name, loop, lambda st: "Py_BytesMain" in st.user and whole(st), min_pct, min_samples,
             " in _PyEval_EvalFrameDefault reach Py_BytesMain from the entry",
             "of the interpreter's samples reach Py_BytesMain")


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
    leaf_chain(f"{who}-nofp", DEEP)
    leaf_chain(f"{who}-fp", DEEP)
leaf_chain("priv-threads", ["worker_main", "worker_mid", "worker_leaf"])
leaf_chain("priv-threads", ["main", "main_loop", "main_leaf"])
leaf_chain("priv-go", ["main.main", "main.chainA", "main.chainB", "main.leafWork"])
leaf_chain("priv-rust", ["workload::deep::chain_a", "workload::deep::chain_b", "workload::deep::chain_c"])
for name in ("priv-nofp", "priv-threads", "priv-rust"):
    whole_stacks(name, 99.0)
# Go: besides the other stacks above, a goroutine stopped by asynchronous
# preemption (runtime.asyncPreempt, a call the signal handler injects) ends
# early: a few samples of a short run
whole_stacks("priv-go", 97.0)
whole_stacks("priv-python", 95.0)
interpreter("priv-python")

kernel("svc-root-kernel")

# the preloaded collector on arm64: python3's 20000 allocations of 1000 bytes
mem = os.path.join(out, "priv-memory.report")
m = re.search(r"^Memory: .*?(\d+) allocations", open(mem).read(), re.M) if os.path.exists(mem) else None
print(f"priv-memory: {m.group(1) if m else 'no'} allocations recorded")
if not m or int(m.group(1)) < 20000:
    failures.append("priv-memory: python3's 20000 allocations are not in `report --memory`")

# an x86_64 capture read on arm64: the architecture said, the chain named
info = os.path.join(out, "x86.info")
arch = re.search(r"^Architecture:\s*(\S+)", open(info).read(), re.M) if os.path.exists(info) else None
print(f"x86-capture: periscope info says {arch.group(1) if arch else 'nothing of its architecture'}")
if not arch or arch.group(1) != "x86_64":
    failures.append("x86-capture: `periscope info` on arm64 does not say the capture is x86_64")
leaf_chain("x86-capture", DEEP)

for f in failures:
    print("FAIL: " + f)
sys.exit(1 if failures else 0)
