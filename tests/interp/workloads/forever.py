# SPDX-License-Identifier: LGPL-2.1-or-later
"""forever.py [READY-FILE]: the 2:1 split of split.py, run until killed,
for `periscope record -p PID`: forever_outer() calls forever_mid_a() ->
forever_leaf_a(2 * UNIT) and forever_mid_b() -> forever_leaf_b(UNIT), the
same loop body in both leaves (2/3 and 1/3 of the time). Writes its pid to
READY-FILE (when given) once the loop runs, so a test waits for that file."""
import os
import sys

UNIT = 20000


def forever_leaf_a(n):
    x = 1
    for i in range(n):
        x = (x * 31 + i) % 1000003
    return x


def forever_leaf_b(n):
    x = 1
    for i in range(n):
        x = (x * 31 + i) % 1000003
    return x


def forever_mid_a():
    return forever_leaf_a(2 * UNIT)


def forever_mid_b():
    return forever_leaf_b(UNIT)


def forever_outer(ready):
    s = forever_mid_a() + forever_mid_b()
    if ready:
        with open(ready + ".tmp", "w") as f:
            f.write("%d\n" % os.getpid())
        os.rename(ready + ".tmp", ready)
    while True:
        s += forever_mid_a()
        s += forever_mid_b()


if __name__ == "__main__":
    forever_outer(sys.argv[1] if len(sys.argv) > 1 else None)
