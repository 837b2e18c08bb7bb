#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The Pythons the interpreter-frame tests record (tests/lib/python-roots.sh):
# Debian 13's python3.13 and Debian unstable's python3.14 in their roots,
# python3.13 in a rootful Podman container of the Debian 13 root, each
# running the workloads of tests/interp/workloads/ as a test will record
# them: the pid a test gets is the interpreter's, the 2:1 workload gives its
# checksum, forever.py says when it runs, threads.py has its threads. And a
# program in a root cannot change the cached tree that every test shares.
. "$(dirname "$0")/../lib/test-lib.sh"
. "$(dirname "$0")/../lib/python-roots.sh"
[ "$(id -u)" = 0 ] || fail "the Python roots need root (debootstrap, chroot, rootful Podman)"
test_tmpdir

want_checksum=$(python3 "$PY_ROOTS_WORKLOADS/split.py" 20 | sed -n 's/.*checksum //p')
[ -n "$want_checksum" ] || fail "split.py gave no checksum on this machine's python3"

for suite in trixie sid; do
        python_root "$suite"
        want=$(_py_root_wants "$suite")
        want=${want% *}
        case $PY_ROOT_VERSION in "$want".*) ;; *) fail "$suite's $PY_ROOT_PYTHON is $PY_ROOT_VERSION, not $want" ;; esac
        echo "ok: $suite: $PY_ROOT_PYTHON is Python $PY_ROOT_VERSION in $PY_ROOT"

        out=$(python_root_run "$PY_ROOT" "$PY_ROOT_PYTHON" /workloads/split.py 20)
        [ "${out##*checksum }" = "$want_checksum" ] || fail "$suite: split.py says '$out', want checksum $want_checksum"
        echo "ok: $suite: $out"

        # the pid of the background run is the interpreter's own, in the root
        python_root_start "$PY_ROOT" "$PY_ROOT_PYTHON" /workloads/forever.py /tmp/ready
        pid=$PY_ROOT_PID
        wait_for 10 test -s "/proc/$pid/root/tmp/ready" || fail "$suite: forever.py wrote no /tmp/ready in its root"
        exe=$(readlink "/proc/$pid/exe")
        [ "$exe" = "$PY_ROOT$PY_ROOT_PYTHON" ] || fail "$suite: pid $pid runs $exe, not $PY_ROOT$PY_ROOT_PYTHON"
        [ "$(cat "/proc/$pid/root/tmp/ready")" = "$pid" ] || fail "$suite: forever.py's pid is not the one python_root_start gave"
        [ ! -e "$PY_ROOT/tmp/ready" ] || fail "$suite: the ready file landed in the cached root's /tmp"
        kill -KILL "$pid"
        wait "$pid" 2>/dev/null || true
        echo "ok: $suite: python_root_start's pid $pid is $exe"

        # hostile: a program in the root tries to change the shared tree
        # (new files only: were the tree writable, nothing of it is lost)
        if python_root_run "$PY_ROOT" /bin/sh -c 'touch /usr/periscope-write-probe || touch /workloads/periscope-write-probe' \
                        >"$TEST_TMP/write.out" 2>&1; then
                fail "$suite: a program in the root could write to its /usr or /workloads"
        fi
        [ "$(grep -c "Read-only file system" "$TEST_TMP/write.out")" = 2 ] ||
                { cat "$TEST_TMP/write.out"; fail "$suite: the writes failed, but not both as a read-only tree"; }
        [ ! -e "$PY_ROOT/usr/periscope-write-probe" ] && [ ! -e "$PY_ROOTS_WORKLOADS/periscope-write-probe" ] ||
                fail "$suite: the cached root or the workloads were changed"
        echo "ok: $suite: the root and the workloads are read-only to what runs in it"
done

python_image
podman image exists "$PY_IMAGE" || fail "python_image set PY_IMAGE=$PY_IMAGE, which podman does not have"
name=periscope-test-py313-$$
python_container_run "$name" /usr/bin/python3 /workloads/forever.py /tmp/ready
wait_for 10 test -s "/proc/$PY_CONTAINER_PID/root/tmp/ready" || fail "the container's forever.py wrote no /tmp/ready"
exe=$(readlink "/proc/$PY_CONTAINER_PID/exe")
[ "${exe##*/}" = python3.13 ] || fail "the container's first process runs $exe, not python3.13"
# pid 1 in the container's pid namespace, the host's pid outside
[ "$(cat "/proc/$PY_CONTAINER_PID/root/tmp/ready")" = 1 ] || fail "forever.py is not pid 1 in its container"
version=$(podman exec "$name" python3 --version)
[[ $version == "Python 3.13."* ]] || fail "the container's python3 is '$version'"
echo "ok: container $name of $PY_IMAGE: pid $PY_CONTAINER_PID runs $exe ($version)"

name=periscope-test-py313-threads-$$
python_container_run "$name" /usr/bin/python3 /workloads/threads.py 30
wait_for 10 sh -c "[ \$(awk '/^Threads:/ { print \$2 }' /proc/$PY_CONTAINER_PID/status) -ge 4 ]" ||
        fail "threads.py in the container did not start its three threads"
echo "ok: container $name: threads.py runs $(awk '/^Threads:/ { print $2 }' "/proc/$PY_CONTAINER_PID/status") threads"
