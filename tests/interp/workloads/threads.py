# SPDX-License-Identifier: LGPL-2.1-or-later
"""threads.py [SECONDS]: a threaded Python program, each thread with a call
chain of its own: thread_red -> spin_red and thread_blue -> spin_blue run
Python loops (they share the GIL, so about half each of the Python time);
thread_green -> hash_green hashes 1 MiB buffers with hashlib, whose C code
(OpenSSL's SHA-256) runs with the GIL released, below a Python frame. The
main thread waits in join(). Ends after SECONDS (default 10), printing each
thread's rounds and the process's CPU time (for a bench's slowdown)."""
import hashlib
import sys
import threading
import time


def spin_red(deadline):
    x = n = 0
    while time.monotonic() < deadline:
        for i in range(10000):
            x = (x * 31 + i) % 1000003
        n += 1
    return n


def spin_blue(deadline):
    x = n = 0
    while time.monotonic() < deadline:
        for i in range(10000):
            x = (x * 17 + i) % 1000033
        n += 1
    return n


def hash_green(deadline):
    buf = bytes(1 << 20)
    n = 0
    while time.monotonic() < deadline:
        hashlib.sha256(buf).digest()
        n += 1
    return n


def thread_red(deadline, out):
    out["red"] = spin_red(deadline)


def thread_blue(deadline, out):
    out["blue"] = spin_blue(deadline)


def thread_green(deadline, out):
    out["green"] = hash_green(deadline)


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
