#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-python-real-roots.sh TEST_PYTHON_REAL: test-python-real (the reader
# on a real interpreter) against Debian 13's python3.13 and Debian
# unstable's python3.14, each in its root (tests/lib/python-roots.sh:
# built once under $PERISCOPE_TEST_CACHE), chrooted by the test itself.
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/python-roots.sh"
[ "$(id -u)" = 0 ] || fail "the Python roots need root (debootstrap, chroot)"
test_python_real=${1:?usage: test-python-real-roots.sh TEST_PYTHON_REAL}

for suite_minor in trixie:13 sid:14; do
        suite=${suite_minor%:*} minor=${suite_minor#*:}
        python_root "$suite"
        PYTHON_ROOT=$PY_ROOT PYTHON=$PY_ROOT_PYTHON PYTHON_MINOR=$minor "$test_python_real" ||
                fail "$suite: the frames of $PY_ROOT_PYTHON (Python $PY_ROOT_VERSION)"
        echo "ok: $suite: Python $PY_ROOT_VERSION's frames"
done
