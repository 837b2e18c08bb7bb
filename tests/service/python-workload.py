# SPDX-License-Identifier: LGPL-2.1-or-later
# The Python workload of test-record-python.sh. Modes:
#   split N ROUNDS [PHASES]  a() -> work_a runs spin(2N), b() -> work_b
#                            spin(N), ROUNDS times: the time splits 2:1
#                            between the chains; PHASES gets "a|b|end
#                            TIME_NS CPU_NS" at each phase's start
#                            (CLOCK_MONOTONIC, the thread's CPU time)
#   forever N                the same until killed (for -p); prints "ready"
#   threads N SECONDS        two threads, one running ta() -> work_a, the
#                            other tb() -> work_b, each for SECONDS
#   sleeper COUNT            waiter() sleeps 50 ms COUNT times (off-CPU)
import sys
import threading
import time


def spin(n):
    x = 0
    for i in range(n):
        x = (x * 31 + i) & 0xFFFF
    return x


def work_a(n):
    return spin(2 * n)


def work_b(n):
    return spin(n)


def a(n):
    return work_a(n)


def b(n):
    return work_b(n)


def note(log, what):
    if log:
        log.write("%s %d %d\n" % (what, time.clock_gettime_ns(time.CLOCK_MONOTONIC), time.thread_time_ns()))


def split(n, rounds, phases):
    log = open(phases, "w") if phases else None
    for _ in range(rounds):
        note(log, "a")
        a(n)
        note(log, "b")
        b(n)
    note(log, "end")
    if log:
        log.close()


def forever(n):
    print("ready", flush=True)
    while True:
        a(n)
        b(n)


def ta(n, end):
    while time.monotonic() < end:
        work_a(n)


def tb(n, end):
    while time.monotonic() < end:
        work_b(n)


def threads(n, seconds):
    end = time.monotonic() + seconds
    t1 = threading.Thread(target=ta, args=(n, end), name="thread-a")
    t2 = threading.Thread(target=tb, args=(n, end), name="thread-b")
    t1.start()
    t2.start()
    t1.join()
    t2.join()


def waiter(count):
    for _ in range(count):
        time.sleep(0.05)


def main():
    mode = sys.argv[1]
    if mode == "split":
        split(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else None)
    elif mode == "forever":
        forever(int(sys.argv[2]))
    elif mode == "sleeper":
        waiter(int(sys.argv[2]))
    elif mode == "threads":
        threads(int(sys.argv[2]), float(sys.argv[3]))


main()
