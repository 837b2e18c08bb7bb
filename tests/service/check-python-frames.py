#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-python-frames.py: what test-record-python.sh asks of a capture's
# Python frames, from `periscope report --folded` and `periscope export
# --format perf-script`.
#   split FOLDED PERF_SCRIPT PHASES   the chains in call order under the
#       native main, the 2:1 split of work_a to work_b, and (printed, not
#       asserted) how often a sample's Python frames name another phase
#       than the one its time falls in (the read is later than the sample)
#   threads PERF_SCRIPT               each thread's samples carry its own
#       chain only (thread-a: ta -> work_a, thread-b: tb -> work_b)
#   present FOLDED FUNCTION…          some stack has py::FUNCTION
#   absent FOLDED                     no stack has a py:: frame
import bisect
import math
import sys


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def folded(path):
    out = []
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        if not line:
            continue
        stack, _, count = line.rpartition(" ")
        out.append((stack.split(";"), int(count)))
    return out


def py_name(frame):
    """'work_a' for 'py::work_a (/x.py:3) [jit]', else None."""
    if not frame.startswith("py::"):
        return None
    return frame[4:].split(" (", 1)[0]


def perf_script(path):
    """[(tid, time_ns, [frame names, innermost first])]"""
    samples, cur = [], None
    for line in open(path, encoding="utf-8", errors="replace"):
        if line.startswith("\t"):
            if cur is not None:
                parts = line.strip().split(" ", 1)
                cur[2].append(parts[1] if len(parts) > 1 else parts[0])
            continue
        if not line.strip():
            continue
        head = line.split()
        # comm may hold spaces: find "pid/tid" and the "time:" after it
        try:
            i = next(k for k, w in enumerate(head) if "/" in w and w.replace("/", "").isdigit())
            tid = int(head[i].split("/")[1])
            t = next(w for w in head[i + 1:] if w.endswith(":") and w[:-1].replace(".", "").isdigit())
            cur = (tid, int(round(float(t[:-1]) * 1e9)), [])
            samples.append(cur)
        except StopIteration:
            cur = None
    return samples


def chain_of(names):
    """'a' or 'b' for a stack (innermost first) holding work_a / work_b."""
    py = [py_name(f.split(" (/")[0] if not f.startswith("py::") else f) for f in names]
    if "work_a" in py:
        return "a"
    if "work_b" in py:
        return "b"
    return None


def check_split(folded_path, script_path, phases_path):
    stacks = folded(folded_path)
    n_a = n_b = torn = 0
    for frames, count in stacks:
        names = [py_name(f) for f in frames]
        py = [n for n in names if n]
        if not py:
            continue
        if "work_a" in py or "work_b" in py:
            x = "a" if "work_a" in py else "b"
            expect = ["<module>", "main", "split", x, "work_" + x, "spin"]
            if py != expect and py != expect[:-1]:  # the leaf spin, or between its calls
                # a chain read while it changed: the reader checks the
                # thread's current frame after the walk, yet a slot reused
                # by the same frames in between goes unseen (rare)
                print("torn: %s (%d)" % (py, count))
                torn += count
                continue
            first = names.index("<module>")
            natives = frames[:first]
            if "Py_BytesMain" not in natives and "main" not in natives:
                fail("no native main above the Python frames: " + ";".join(frames))
            if any(py_name(f) for f in frames[first + len(expect):]):
                fail("a Python frame below spin: " + ";".join(frames))
            if x == "a":
                n_a += count
            else:
                n_b += count
    n = n_a + n_b
    if torn > 0.01 * n:
        fail("%d samples have Python frames in an order no call makes (more than 1%% of %d)" % (torn, n))

    # The workload's log says when each phase began: the phase a sample's
    # time falls in is the truth its Python frames estimate (its CPU time
    # per phase, also logged, is printed beside: 2:1 by loop counts is not
    # 2:1 in time to the percent on a loaded machine).
    times, names, cpu = [], [], {"a": 0, "b": 0}
    rows = [line.split() for line in open(phases_path)]
    for (w, t, c), nxt in zip(rows, rows[1:] + [None]):
        times.append(int(t))
        names.append(w)
        if nxt and w in cpu:
            cpu[w] += int(nxt[2]) - int(c)
    cpu_share = cpu["a"] / (cpu["a"] + cpu["b"])
    wrong = total = in_a = named_a = 0
    for tid, t, frames in perf_script(script_path):
        c = chain_of(frames)
        if c is None:
            continue
        i = bisect.bisect_right(times, t) - 1
        if i < 0 or names[i] == "end":
            continue
        total += 1
        wrong += c != names[i]
        in_a += names[i] == "a"
        named_a += c == "a"
    if total < 300:
        fail("only %d samples within the logged phases" % total)
    truth = in_a / total
    share = named_a / total
    # the samples' share named against the share taken: binomial noise of
    # the phase boundaries the reads miss, 4 sigma, and 1 point
    sigma = math.sqrt(truth * (1 - truth) / total)
    tol = 4 * sigma + 0.01
    print("split: %d samples in work_a, %d in work_b (%d in the logged phases): work_a named in %.3f of them, "
          "taken in an a phase %.3f, its CPU time's share %.3f (2:1 is 0.667); |difference| %.3f, tolerance %.3f"
          % (n_a, n_b, total, share, truth, cpu_share, abs(share - truth), tol))
    print("phases: %d of %d samples (%.1f%%) name the other chain than the phase at their time"
          % (wrong, total, 100.0 * wrong / total))
    if abs(share - truth) > tol:
        fail("work_a is named in %.3f of the samples, %.3f were taken in its phases (tolerance %.3f)"
             % (share, truth, tol))
    if abs(truth - 2 / 3) > 0.08:
        fail("the workload's own split %.3f is too far from 2:1 to say anything" % truth)


def check_threads(script_path):
    seen = {}
    for tid, t, frames in perf_script(script_path):
        py = [py_name(f) for f in frames if f.startswith("py::")]
        if "ta" in py or "tb" in py:
            mine = "ta" if "ta" in py else "tb"
            other = "tb" if mine == "ta" else "ta"
            if other in py or ("work_b" if mine == "ta" else "work_a") in py:
                fail("thread %d has both chains in one stack: %s" % (tid, py))
            seen.setdefault(tid, set()).add(mine)
    for tid, chains in seen.items():
        if len(chains) != 1:
            fail("thread %d carries both threads' frames: %s" % (tid, sorted(chains)))
    owners = sorted(next(iter(c)) for c in seen.values())
    if owners != ["ta", "tb"]:
        fail("the threads with Python frames are %s, want one with ta and one with tb" % owners)
    print("threads: %s" % ", ".join("%d: %s" % (tid, next(iter(c))) for tid, c in sorted(seen.items())))


def main():
    cmd = sys.argv[1]
    if cmd == "split":
        check_split(*sys.argv[2:5])
    elif cmd == "threads":
        check_threads(sys.argv[2])
    elif cmd == "present":
        names = {py_name(f) for frames, _ in folded(sys.argv[2]) for f in frames}
        for want in sys.argv[3:]:
            if want not in names:
                fail("no stack has py::%s (Python frames: %s)" % (want, sorted(n for n in names if n)))
    elif cmd == "absent":
        for frames, _ in folded(sys.argv[2]):
            if any(f.startswith("py::") for f in frames):
                fail("a Python frame with python-frames off: " + ";".join(frames))
    else:
        fail("unknown check " + cmd)


main()
