# SPDX-License-Identifier: LGPL-2.1-or-later
# py-fib: Debian's python3 spends its time in the interpreter (stripped
# binary: Py_BytesMain and the exported API named from .dynsym).
import sys
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


end = time.time() + float(sys.argv[1])
while time.time() < end:
    fib(18)
