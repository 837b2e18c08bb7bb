# SPDX-License-Identifier: LGPL-2.1-or-later
"""folded.py: the stacks of `periscope report --folded` output, for the
checks of end-to-end tests (tests/lib is on PYTHONPATH in periscoped-bus.sh
and tests/resolver/lib.sh)."""
from dataclasses import dataclass


@dataclass
class Stack:
    line: str     # the line as written, without its newline
    text: str     # the frames, ';'-joined, outermost first
    frames: list  # the frames, outermost first
    user: list    # the frames without the kernel's ("... [kernel]")
    count: int    # samples with this stack


def stacks(path, containing=None):
    """Yields a Stack per line of a --folded report (only those with the
    frame `containing`, when given)."""
    for line in open(path):
        line = line.rstrip("\n")
        text, _, count = line.rpartition(" ")
        frames = text.split(";")
        if containing is None or containing in frames:
            yield Stack(line, text, frames, [f for f in frames if not f.endswith("[kernel]")], int(count))


def share_at_lines(path, want):
    """(samples, all samples) of a --folded --lines report whose innermost
    user frames are want: (function, file's base name, line) triples,
    outermost first."""
    import re
    total = good = 0
    for s in stacks(path):
        total += s.count
        got = []
        for f in s.user[-len(want):]:
            m = re.fullmatch(r"(\S+) at (\S+):(\d+)", f)
            got.append((m.group(1), m.group(2).rpartition("/")[2], int(m.group(3))) if m else (f, "", 0))
        if got == want:
            good += s.count
    return good, total


# Where a thread's stack begins: the program's _start (or ld.so's
# _dl_start_user), a thread's clone; Go's goroutine and M starts.
C_ROOTS = {"_start", "_dl_start_user", "__clone3", "clone3", "start_thread"}
GO_ROOTS = {"runtime.goexit.abi0", "runtime.clone.abi0", "runtime.rt0_go.abi0", "runtime.mstart.abi0"}


def by_process(lines):
    """Groups the lines of `periscope report --folded --process-root` by
    their root frame "comm (pid N)": returns ({pid: [(frames, count)]},
    {pid: comm}, [lines without a process root]); frames exclude the root."""
    import re
    by_pid, comm_of, rootless = {}, {}, []
    for line in lines:
        text, _, count = line.rstrip("\n").rpartition(" ")
        frames = text.split(";")
        m = re.match(r"(.*) \(pid (-?\d+)\)$", frames[0])
        if not m:
            rootless.append(line)
            continue
        pid = int(m.group(2))
        by_pid.setdefault(pid, []).append((frames[1:], int(count)))
        comm_of[pid] = m.group(1)
    return by_pid, comm_of, rootless
