# SPDX-License-Identifier: LGPL-2.1-or-later
"""split.py [ROUNDS]: a Python program whose time splits 2:1 between two
call chains, by loop counts alone: each round, outer() calls
mid_a() -> leaf_a(2 * UNIT) and mid_b() -> leaf_b(UNIT), and both leaves run
the same loop body. So leaf_a (under mid_a) takes 2/3 of the time and
leaf_b (under mid_b) 1/3; outer, the module and main are above both.
Prints the rounds, the seconds they took (wall and CPU, measured inside,
for a bench's slowdown) and the checksum when done (default 400 rounds).
Runs on any python3 (Debian's 3.11, 3.13, 3.14)."""
import sys
import time

UNIT = 20000


def leaf_a(n):
    x = 1
    for i in range(n):
        x = (x * 31 + i) % 1000003
    return x


def leaf_b(n):
    x = 1
    for i in range(n):
        x = (x * 31 + i) % 1000003
    return x


def mid_a():
    return leaf_a(2 * UNIT)


def mid_b():
    return leaf_b(UNIT)


def outer(rounds):
    s = 0
    for _ in range(rounds):
        s += mid_a()
        s += mid_b()
    return s


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    t0, c0 = time.perf_counter(), time.process_time()
    s = outer(rounds)
    t1, c1 = time.perf_counter(), time.process_time()
    print("split.py: %d rounds in %.3f s (cpu %.3f s), checksum %d" % (rounds, t1 - t0, c1 - c0, s))


if __name__ == "__main__":
    main()
