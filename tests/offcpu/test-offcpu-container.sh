#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Off-CPU profiles inside a rootful Podman container: workload-waits runs
# as the container's /bin/app (1.5 s per phase: the recording starts during
# the compute phase) and `periscope record --container NAME --off-cpu`
# through periscoped (private bus) attributes each wait to its own function
# within 10% of its wall-clock length (the container's log says them), its
# stacks ending in the kernel's wait, with the names read from the
# container's own files.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${SRCDIR:?}"
[ "$(id -u)" = 0 ] || fail "runs as root (rootful Podman); ./test.sh does"
command -v podman >/dev/null || fail "podman is missing (scripts/packages.txt)"
export CONTAINERS_CONF=/etc/periscope-tests/containers.conf
[ -f "$CONTAINERS_CONF" ] || fail "$CONTAINERS_CONF missing: run scripts/setup.d/60-containers.sh (./test.sh does)"
root=$TEST_TMP/rootfs
mkdir -p "$root/bin" "$root/lib64" "$root/usr/lib/x86_64-linux-gnu" "$root/run"
gcc -O0 -g -fno-omit-frame-pointer -pthread -o "$root/bin/app" "$SRCDIR/workload-waits.c" ||
        fail "cannot build workload-waits.c"
cp /lib64/ld-linux-x86-64.so.2 "$root/lib64/"
cp /usr/lib/x86_64-linux-gnu/libc.so.6 "$root/usr/lib/x86_64-linux-gnu/"
chmod -R a+rX "$root"
tag=$(cd "$root" && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-12)
image=localhost/periscope-test-offcpu:$tag
if ! podman image exists "$image" 2>/dev/null; then
        tar -C "$root" -c . | podman import --change 'CMD ["/bin/app"]' - "$image" >/dev/null 2>"$TEST_TMP/import.err" ||
                { cat "$TEST_TMP/import.err"; fail "podman import failed"; }
fi
name=periscope-offcpu-$$
private_bus_start
periscoped_start
podman run -d --network none --name "$name" "$image" /bin/app 1.5 >/dev/null 2>"$TEST_TMP/run.err" ||
        { cat "$TEST_TMP/run.err"; fail "podman run failed"; }
trap 'podman rm -f -t 0 "$name" >/dev/null 2>&1 || true; _periscoped_bus_cleanup' EXIT
cap=$TEST_TMP/container.syscap
"$PERISCOPE" record --address "$BUS_ADDRESS" --off-cpu --container "$name" --duration 7.5 -o "$cap" \
        >"$TEST_TMP/record.out" 2>&1 || { cat "$TEST_TMP/record.out"; fail "record --off-cpu --container failed"; }
podman wait "$name" >/dev/null 2>&1 || true
podman logs "$name" >"$TEST_TMP/phases.txt" 2>&1 || fail "podman logs failed"
cat "$TEST_TMP/phases.txt"
"$PERISCOPE" report --no-progress --off-cpu --folded "$cap" >"$TEST_TMP/ns.folded" || fail "report failed"
"$PYTHON" "$SRCDIR/check-waits.py" "$TEST_TMP/ns.folded" - "$TEST_TMP/phases.txt" 1 ||
        fail "the container's waits were not attributed as they happened"
echo "off-CPU in a container: ok"
