#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# End to end: node --perf-basic-prof inside a rootful Podman container,
# recorded with `periscope record --container NAME`. node is pid 1 in its
# pid namespace and writes /tmp/perf-1.map inside the container's root;
# the service finds it through the process's own root (NSpid, then
# /proc/PID/root, no symlinks, owner checked), and the JavaScript function
# fib is named [jit] with its share of the samples.
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
: "${PERISCOPE:?}" "${PERISCOPED:?}"
need podman runc node python3 ldd

# A rootfs with node, the libraries it needs and the script.
node_bin=$(readlink -f "$(command -v node)")
rootfs=$WORK/rootfs
mkdir -p "$rootfs/bin" "$rootfs/app" "$rootfs/tmp"
chmod 1777 "$rootfs/tmp"
cp "$node_bin" "$rootfs/bin/node"
for lib in $(ldd "$node_bin" | grep -o '/[^ ]*'); do
        mkdir -p "$rootfs$(dirname "$lib")"
        cp -L "$lib" "$rootfs$lib"
done
cat >"$rootfs/app/fib.js" <<'JS'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
const end = Date.now() + 60000;
let s = 0;
while (Date.now() < end) s += fib(25);
JS
chmod -R a+rX "$rootfs"
image=$(podman_import "" "$rootfs" localhost/periscope-test-node-jit)
name=periscope-test-node-jit-$$
cleanup "podman rm -f -t 0 $name"
podman run -d --network none --name "$name" "$image" /bin/node --perf-basic-prof /app/fib.js >/dev/null 2>"$WORK/run.err" ||
        { cat "$WORK/run.err"; fail "podman run failed"; }
pid=$(podman inspect -f '{{.State.Pid}}' "$name")
[ "$pid" -gt 0 ] || fail "no pid for $name"
# Its perf map exists inside the container, under its own pid number.
wait_for 10 test -s "/proc/$pid/root/tmp/perf-1.map" || fail "node wrote no /tmp/perf-1.map in the container"
[ ! -e "/tmp/perf-1.map" ] || fail "a host /tmp/perf-1.map exists: the test could not tell where names came from"

export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$WORK/no-such-bus
"$PERISCOPE" record --private --container="$name" --duration=3 -o "$WORK/c.syscap" 2>"$WORK/rec.err" ||
        { cat "$WORK/rec.err"; fail "periscope record --container failed"; }
! grep -qE "Sanitizer|runtime error:" "$WORK/rec.err" || { cat "$WORK/rec.err"; fail "memory errors in periscoped"; }
"$PERISCOPE" report --no-progress --folded "$WORK/c.syscap" >"$WORK/folded" || fail "report failed"
python3 - "$WORK/folded" <<'PY' || fail "fib is not named in the container"
import sys
total = fib = 0
for l in open(sys.argv[1]):
    s, _, n = l.rstrip("\n").rpartition(" ")
    total += int(n)
    if any(f.startswith("JS:") and "fib /app/fib.js" in f and f.endswith("[jit]") for f in s.split(";")):
        fib += int(n)
pct = 100.0 * fib / total if total else 0
print(f"container node: fib [jit] in {fib} of {total} samples ({pct:.1f}%)")
sys.exit(0 if total >= 100 and pct >= 50 else 1)
PY
"$PERISCOPE" report --no-progress --mappings "$WORK/c.syscap" >"$WORK/mappings" || fail "report --mappings failed"
grep -qF "/proc/$pid/root/tmp/perf-1.map" "$WORK/mappings" ||
        { cat "$WORK/mappings"; fail "the perf map was not read through the container process's root"; }
echo "ok: $(grep -m1 -F "perf-1.map" "$WORK/mappings" | sed 's/^ *//')"
echo "PASS"
