# SPDX-License-Identifier: LGPL-2.1-or-later
"""forever.py [READY-FILE]: the 2:1 split of split.py, run until killed,
for `periscope record -p PID`: forever_outer() calls split.py's own
mid_a() -> leaf_a(2 * UNIT) and mid_b() -> leaf_b(UNIT) (imported from
beside this file, as in /workloads), 2/3 and 1/3 of the time. Writes its
pid to READY-FILE (when given) once the loop runs, so a test waits for
that file."""
import os
import sys

# no __pycache__ beside the workloads (python_image hashes their files)
sys.dont_write_bytecode = True
from split import mid_a, mid_b  # noqa: E402


def forever_outer(ready):
    s = mid_a() + mid_b()
    if ready:
        with open(ready + ".tmp", "w") as f:
            f.write("%d\n" % os.getpid())
        os.rename(ready + ".tmp", ready)
    while True:
        s += mid_a()
        s += mid_b()


if __name__ == "__main__":
    forever_outer(sys.argv[1] if len(sys.argv) > 1 else None)
