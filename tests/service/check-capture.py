#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""check-capture.py: checks a capture the way a user would look at it, from
the JSON lines of capture-json. Usage:
  check-capture.py CAPTURE_JSON CAPTURE callchains DEMO_BINARY [--children N]
  check-capture.py CAPTURE_JSON CAPTURE readable [--min-samples N] [--reason R]
  check-capture.py CAPTURE_JSON CAPTURE partial [--min-samples N]
Exits 1 with the reason on the first failed expectation."""
import json
import subprocess
import sys


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


CONTEXT_MIN = 2**64 - 4095
CONTEXT_USER = 2**64 - 512
CONTEXT_KERNEL = 2**64 - 128


def load(tool, path, allow_error=False):
    p = subprocess.run([tool, path], capture_output=True, text=True)
    frames = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    errors = [f for f in frames if f["type"] == "ERROR"]
    if (p.returncode != 0 or errors) and not allow_error:
        fail(f"{path} is not readable: {p.stderr.strip()} {errors}")
    return frames


def stats_of(frames):
    for f in frames:
        if f["type"] == "METADATA" and f["id"] == "periscope.stats":
            return dict(line.split("=", 1) for line in f["metadata"].splitlines() if "=" in line)
    return None


def symbols(binary):
    """Function name -> (start, end) file-relative virtual addresses, from nm."""
    out = subprocess.run(["nm", "-S", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tT":
            start, size = int(parts[0], 16), int(parts[1], 16)
            syms[parts[3]] = (start, start + size)
    return syms


def user_part(addrs):
    out, in_user = [], False
    for a in addrs:
        if a >= CONTEXT_MIN:
            in_user = a == CONTEXT_USER
            continue
        if in_user:
            out.append(a)
    return out


def check_callchains(frames, binary, children):
    syms = symbols(binary)
    for name in ("inner_c", "middle_b", "outer_a", "run_workload", "main"):
        if name not in syms:
            fail(f"{binary} has no symbol {name} (built without symbols?)")
    procs = {}
    for f in frames:
        if f["type"] == "PROCESS":
            procs[f["pid"]] = f["cmdline"]
    demo_pids = [pid for pid, cmd in procs.items() if binary.split("/")[-1] in cmd]
    if not demo_pids:
        fail(f"no PROCESS frame names {binary}; processes: {procs}")
    maps = {}
    for f in frames:
        if f["type"] == "MAP" and f["filename"] == binary:
            maps.setdefault(f["pid"], []).append(f)

    def resolve(pid, addr):
        for m in maps.get(pid, []):
            if m["start"] <= addr < m["end"]:
                # Text is mapped so that file offset == virtual address (PIE).
                vaddr = addr - m["start"] + m["offset"]
                for name, (s, e) in syms.items():
                    if s <= vaddr < e:
                        return name
                return "?"
        return None

    samples = [f for f in frames if f["type"] == "SAMPLE" and f["pid"] in demo_pids]
    if len(samples) < 30:
        fail(f"only {len(samples)} samples of the demo workload (pids {demo_pids})")
    in_text = 0
    inner_c = good_chain = 0
    expected = ["inner_c", "middle_b", "outer_a", "run_workload", "main"]
    for s in samples:
        user = user_part(s["addrs"])
        if not user:
            continue
        if resolve(s["pid"], user[0]) is not None:
            in_text += 1
        names = [resolve(s["pid"], a if i == 0 else a - 1) for i, a in enumerate(user)]
        if names and names[0] == "inner_c":
            inner_c += 1
            if names[:5] == expected:
                good_chain += 1
    if in_text < 0.6 * len(samples):
        fail(f"only {in_text} of {len(samples)} demo samples have a user ip inside its text")
    if inner_c < 10:
        fail(f"only {inner_c} samples in inner_c")
    if good_chain < 0.8 * inner_c:
        fail(f"only {good_chain} of {inner_c} inner_c samples unwind as {' → '.join(expected)}")
    print(f"ok: {len(samples)} demo samples, {in_text} in its text, {good_chain}/{inner_c} inner_c stacks complete")

    if children:
        forks = [f for f in frames if f["type"] == "FORK" and f["pid"] in demo_pids]
        kids = [f["child"] for f in forks if f["child"] in procs and binary.split("/")[-1] in procs[f["child"]]]
        if len(kids) < children:
            fail(f"expected {children} exec'd children with PROCESS frames, found {kids} (forks {forks})")
        for k in kids:
            if not maps.get(k):
                fail(f"child {k} has no MAP of {binary}")
        print(f"ok: children {kids} appear as processes with maps")


def main():
    tool, path, what = sys.argv[1:4]
    args = sys.argv[4:]
    if what == "partial":
        # After a crash: readable up to the last flush; stats are not expected.
        frames = load(tool, path, allow_error=True)
        n = sum(1 for f in frames if f["type"] == "SAMPLE")
        need = int(args[args.index("--min-samples") + 1]) if "--min-samples" in args else 1
        errors = [f for f in frames if f["type"] == "ERROR"]
        if n < need:
            fail(f"only {n} samples readable after the crash (wanted {need}); errors: {errors}")
        print(f"ok: {n} samples readable after the crash{' (then: ' + errors[0]['error'] + ')' if errors else ''}")
        return
    frames = load(tool, path)
    st = stats_of(frames)
    if st is None:
        fail("no periscope.stats METADATA frame: the capture was not finalized")
    n = sum(1 for f in frames if f["type"] == "SAMPLE")
    if int(st["samples"]) != n:
        fail(f"stats say samples={st['samples']} but the capture holds {n} SAMPLE frames")
    if what == "callchains":
        children = int(args[args.index("--children") + 1]) if "--children" in args else 0
        check_callchains(frames, args[0], children)
    elif what == "readable":
        need = int(args[args.index("--min-samples") + 1]) if "--min-samples" in args else 1
        if n < need:
            fail(f"only {n} samples (wanted {need})")
        if "--reason" in args and st.get("reason") != args[args.index("--reason") + 1]:
            fail(f"stats reason={st.get('reason')}, wanted {args[args.index('--reason') + 1]}")
        print(f"ok: finalized capture, {n} samples, reason={st.get('reason')}")
    else:
        fail(f"unknown check {what}")


if __name__ == "__main__":
    main()
