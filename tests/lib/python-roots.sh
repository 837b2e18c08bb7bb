# SPDX-License-Identifier: LGPL-2.1-or-later
# python-roots.sh: sourced by the tests and benches that need Debian's
# Pythons other than this machine's own 3.11: a Debian 13 (trixie) root with
# its python3.13 and a Debian unstable (sid) root with python3.14, each
# debootstrap --variant=minbase plus python3, and a rootful Podman image of
# the trixie root with tests/interp/workloads/ in it. Needs fail() (from
# test-lib.sh) and root.
#
#   python_root SUITE     trixie or sid: the root, built once per package
#                         list and script text (the key) under
#                         $PERISCOPE_TEST_CACHE (/var/cache/periscope-tests)
#                         and shared between runs under a lock; sets
#                         PY_ROOT (the tree), PY_ROOT_PYTHON (the
#                         interpreter's path inside it, /usr/bin/python3.N)
#                         and PY_ROOT_VERSION ("3.13.5", its --version)
#   python_root_run ROOT CMD…
#                         CMD (a path inside ROOT) chrooted into ROOT, in a
#                         mount namespace of its own where ROOT is read-only,
#                         with /proc, /dev, a tmpfs /tmp and
#                         tests/interp/workloads at /workloads (read-only),
#                         a clean environment; no pid namespace; returns
#                         CMD's status
#   python_root_start ROOT CMD…
#                         the same in the background: sets PY_ROOT_PID, the
#                         pid CMD has (it is exec'd in place: the
#                         interpreter's own, on the host), killed at exit
#   python_image          the rootful Podman image of the trixie root with
#                         the workloads in /workloads, imported once per
#                         root and workloads (its tag); sets PY_IMAGE
#                         (localhost/periscope-test-py313:TAG)
#   python_container_run NAME [CMD…]
#                         runs a container NAME of PY_IMAGE (python_image
#                         first), detached, no network (default CMD:
#                         python3 /workloads/forever.py); removed at exit
#                         (at_exit); sets PY_CONTAINER_PID (its first
#                         process, on the host)
#
# The mirror: PERISCOPE_DEBIAN_MIRROR, else the URIs: line of this machine's
# /etc/apt/sources.list.d/debian.sources, else deb.debian.org. Old keys are
# not removed: delete them by hand.

PY_ROOTS_CACHE=${PERISCOPE_TEST_CACHE:-/var/cache/periscope-tests}
PY_ROOTS_WORKLOADS=$(cd "$(dirname "${BASH_SOURCE[0]}")/../interp/workloads" && pwd)
PY_ROOTS_MIRROR=${PERISCOPE_DEBIAN_MIRROR:-$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)}
PY_ROOTS_MIRROR=${PY_ROOTS_MIRROR:-http://deb.debian.org/debian}

# The Python each suite must have: trixie's python3 is 3.13; sid's default
# python3 may still be 3.13 while 3.14 is there beside it, so sid's root
# installs python3.14 by name as well.
_py_root_wants() {
        case $1 in
        trixie) echo "3.13 python3" ;;
        sid) echo "3.14 python3,python3.14" ;;
        *) fail "python_root: no Python root for suite '$1' (trixie or sid)" ;;
        esac
}

# What the root gets besides its packages (part of the key).
_py_root_files() {
        local root=$1
        mkdir -p "$root/workloads"
        rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
}

python_root() {
        local suite=$1 wants version packages key dir lock start=$SECONDS
        [ "$(id -u)" = 0 ] || fail "python_root: debootstrap and chroot need root"
        wants=$(_py_root_wants "$suite")
        version=${wants% *} packages=${wants#* }
        key=$( (echo "$suite amd64 minbase $packages"; declare -f _py_root_files) | sha256sum | cut -c1-16)
        dir=$PY_ROOTS_CACHE/py-root-$suite-$key
        mkdir -p "$PY_ROOTS_CACHE"
        exec {lock}>"$dir.lock"
        flock "$lock"
        if [ ! -e "$dir/complete" ]; then
                command -v debootstrap >/dev/null || fail "debootstrap missing: apt-get install -y debootstrap"
                echo "building the Debian $suite root with Python $version in $dir (debootstrap from $PY_ROOTS_MIRROR)"
                rm -rf "$dir"
                mkdir -p "$dir"
                if ! nice debootstrap --variant=minbase --include="$packages" "$suite" "$dir/root" "$PY_ROOTS_MIRROR" \
                                >"$dir/debootstrap.log" 2>&1; then
                        tail -n 15 "$dir/debootstrap.log" >&2
                        fail "debootstrap of Debian $suite from $PY_ROOTS_MIRROR failed (is the mirror reachable? set PERISCOPE_DEBIAN_MIRROR to another; log: $dir/debootstrap.log)"
                fi
                _py_root_files "$dir/root"
                [ -x "$dir/root/usr/bin/python$version" ] ||
                        fail "Debian $suite has no python$version: $(ls "$dir/root/usr/bin" | grep '^python3' | tr '\n' ' ')"
                chroot "$dir/root" "/usr/bin/python$version" --version >"$dir/version" 2>&1 ||
                        fail "python$version does not run in $dir/root: $(cat "$dir/version")"
                chroot "$dir/root" /usr/bin/python3 --version >"$dir/python3-version" 2>&1 ||
                        fail "python3 does not run in $dir/root: $(cat "$dir/python3-version")"
                chroot "$dir/root" dpkg-query -W -f '${Package} ${Version}\n' "python$version" "libpython$version-minimal" \
                        >"$dir/packages" 2>/dev/null || true
                touch "$dir/complete"
                echo "ok: $suite root built in $((SECONDS - start)) s ($(du -sh "$dir/root" | cut -f1)): $(cat "$dir/version"), python3 is $(cat "$dir/python3-version")"
        fi
        flock -u "$lock"
        exec {lock}>&-
        PY_ROOT=$dir/root
        PY_ROOT_PYTHON=/usr/bin/python$version
        PY_ROOT_VERSION=$(sed -n 's/^Python //p' "$dir/version")
        [ -n "$PY_ROOT_VERSION" ] || fail "python_root: $dir/version says no version"
}

python_root_run() {
        (_python_root_exec "$@")
}

python_root_start() {
        [ -d "$1/workloads" ] || fail "python_root_start: $1 is no Python root (python_root makes one)"
        _python_root_exec "$@" &
        PY_ROOT_PID=$!
        at_exit kill -KILL "$PY_ROOT_PID"
}

# Replaces the calling shell: a subshell's, or a background job's.
_python_root_exec() {
        local root=$1
        shift
        [ -d "$root/workloads" ] || fail "python_root_run: $root is no Python root (python_root makes one)"
        # the bind of ROOT onto itself makes it a mount, so it can be made
        # read-only here without touching the cached tree
        exec unshare --mount --propagation private sh -c '
                root=$1 workloads=$2
                shift 2
                mount --bind "$root" "$root" &&
                mount -o remount,bind,ro "$root" &&
                mount -t proc proc "$root/proc" &&
                mount --rbind /dev "$root/dev" &&
                mount -t tmpfs tmpfs "$root/tmp" &&
                mount --bind "$workloads" "$root/workloads" &&
                mount -o remount,bind,ro "$root/workloads" &&
                cd / && exec chroot "$root" env -i PATH=/usr/bin:/bin HOME=/tmp LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 "$@"
        ' python_root_run "$root" "$PY_ROOTS_WORKLOADS" "$@"
}

python_image() {
        local tag lock
        command -v podman >/dev/null || fail "podman missing: apt-get install the packages in scripts/packages.txt"
        export CONTAINERS_CONF=${CONTAINERS_CONF:-/etc/periscope-tests/containers.conf}
        [ -f "$CONTAINERS_CONF" ] || fail "$CONTAINERS_CONF missing: run scripts/setup.d/60-containers.sh (./test.sh does)"
        python_root trixie
        # one tag per root (its key is in its path) and workload files
        tag=$( (echo "$PY_ROOT"; cd "$PY_ROOTS_WORKLOADS" && find . -type f -print0 | sort -z | xargs -0 sha256sum) |
                sha256sum | cut -c1-12)
        PY_IMAGE=localhost/periscope-test-py313:$tag
        exec {lock}>"$PY_ROOTS_CACHE/py-image.lock"
        flock "$lock"
        if ! podman image exists "$PY_IMAGE" 2>/dev/null; then
                # the root without its empty /workloads, then the workloads
                # under that name: one stream, one layer
                tar -c -C "$PY_ROOT" --exclude=./workloads . -C "$PY_ROOTS_WORKLOADS/.." \
                        --owner=0 --group=0 --mode=a+rX workloads |
                        podman import --change 'CMD ["/usr/bin/python3", "/workloads/forever.py"]' \
                                --change 'ENV PYTHONDONTWRITEBYTECODE=1' - "$PY_IMAGE" >/dev/null 2>"$PY_ROOTS_CACHE/py-image.err" ||
                        { cat "$PY_ROOTS_CACHE/py-image.err" >&2; fail "podman import of $PY_IMAGE failed"; }
        fi
        flock -u "$lock"
        exec {lock}>&-
}

python_container_run() {
        local name=$1
        shift
        [ -n "${PY_IMAGE:-}" ] || python_image
        at_exit podman rm -f -t 0 "$name"
        podman run -d --network none --name "$name" "$PY_IMAGE" "$@" >/dev/null 2>"$PY_ROOTS_CACHE/py-run-$name.err" ||
                { cat "$PY_ROOTS_CACHE/py-run-$name.err" >&2; fail "podman run of $PY_IMAGE failed"; }
        rm -f "$PY_ROOTS_CACHE/py-run-$name.err"
        PY_CONTAINER_PID=$(podman inspect -f '{{.State.Pid}}' "$name")
        [ "${PY_CONTAINER_PID:-0}" -gt 0 ] || fail "podman gives no pid for $name"
}
