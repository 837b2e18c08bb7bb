# SPDX-License-Identifier: LGPL-2.1-or-later
"""threads.py [SECONDS]: a threaded Python program, each thread with a call
chain of its own: thread_red -> rounds_until -> spin_red and thread_blue
-> rounds_until -> spin_blue run Python loops (they share the GIL, so about
half each of the Python time); thread_green -> rounds_until -> hash_green
hashes a 1 MiB buffer with hashlib, whose C code (OpenSSL's SHA-256) runs
with the GIL released, below a Python frame. The main thread waits in
join(). Ends after SECONDS (default 10), printing each thread's rounds and
the process's CPU time (for a bench's slowdown)."""
import hashlib
import sys
import threading
import time


def rounds_until(deadline, work):
    """Calls WORK until DEADLINE (time.monotonic()): how many times."""
    n = 0
    while time.monotonic() < deadline:
        work()
        n += 1
    return n


def spin_red():
    x = 0
    for i in range(10000):
        x = (x * 31 + i) % 1000003
    return x


def spin_blue():
    x = 0
    for i in range(10000):
        x = (x * 17 + i) % 1000033
    return x


BUF = bytes(1 << 20)


def hash_green():
    return hashlib.sha256(BUF).digest()


def thread_red(deadline, out):
    out["red"] = rounds_until(deadline, spin_red)


def thread_blue(deadline, out):
    out["blue"] = rounds_until(deadline, spin_blue)


def thread_green(deadline, out):
    out["green"] = rounds_until(deadline, hash_green)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    c0 = time.process_time()
    deadline = time.monotonic() + seconds
    out = {}
    threads = [threading.Thread(target=f, args=(deadline, out), name=f.__name__)
               for f in (thread_red, thread_blue, thread_green)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("threads.py: red %d, blue %d, green %d rounds in %.3f s (cpu %.3f s)"
          % (out["red"], out["blue"], out["green"], seconds, time.process_time() - c0))


if __name__ == "__main__":
    main()
