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
