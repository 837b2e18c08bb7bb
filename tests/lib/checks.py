# SPDX-License-Identifier: LGPL-2.1-or-later
"""checks.py: check() for the Python parts of the tests (tests/lib is on
PYTHONPATH in periscoped-bus.sh): a failed check is said on stderr
("FAILED: what", then text if given) and counted in failures, and the
test goes on to its end; finish() then exits 1 if any failed."""
import sys

failures = []


def check(cond, what, text=""):
    if not cond:
        failures.append(what)
        print("FAILED:", what, *(["\n" + text] if text else []), file=sys.stderr)
    return bool(cond)


def finish():
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        sys.exit(1)
