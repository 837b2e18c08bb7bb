#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# End to end: the old inode is gone and was never pinned. A rootless
# fuse-overlayfs container runs /bin/app (v1); before the recording starts,
# its owner replaces the file in the store's layer (write and rename) with
# v2, whose functions have other names. Root cannot reach the mapped inode
# (fuse-overlayfs denies /proc/PID/map_files and /proc/PID/root), and the
# store now holds another inode, so periscoped cannot pin it: the report must
# say "binary changed since it was mapped" for >= 95% of the samples and
# show no name from v2.
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
: "${PERISCOPE:?}" "${PERISCOPED:?}"
need podman runc fuse-overlayfs runuser python3
rootless_user periscope-rl
cd /

for v in v1 v2; do
        cat >"$WORK/spin-$v.c" <<SRC
volatile unsigned long sink;
__attribute__((noinline)) void hot_inner_$v(void) { for (int i = 0; i < 1000000; i++) sink += i; }
__attribute__((noinline)) void hot_outer_$v(void) { hot_inner_$v(); }
int main(void) { for (;;) hot_outer_$v(); }
SRC
        gcc -O0 -g -fno-omit-frame-pointer -o "$WORK/spin-$v" "$WORK/spin-$v.c"
done
make_rootfs "$WORK/rootfs" "$WORK/spin-v1"
# This test rewrites the image's layer: a fresh image each run, removed after.
image=localhost/periscope-test-changed:$$
tar -C "$WORK/rootfs" -c . | $as_user podman import --change 'CMD ["/bin/app"]' - "$image" >/dev/null 2>&1 ||
        fail "podman import of $image failed"
cleanup "$as_user podman rmi -f $image"
name=periscope-test-changed-$$
$as_user podman run -d --network none --name "$name" "$image" >/dev/null 2>"$WORK/run.err" || { cat "$WORK/run.err"; fail "rootless podman run failed"; }
cleanup "$as_user podman rm -f -t 0 $name"
pid=$($as_user podman inspect -f '{{.State.Pid}}' "$name")
[ "$pid" -gt 0 ] || fail "no pid for $name"
wait_for 5 mapped "$pid" ' /bin/app$' || fail "the workload did not start"
if cat "/proc/$pid/root/bin/app" >/dev/null 2>&1; then fail "root can read the container's files through /proc: not a fuse-overlayfs setup"; fi

# The upgrade, in the store, by the store's owner.
lower=$($as_user podman inspect -f '{{.GraphDriver.Data.LowerDir}}' "$name")
[ -f "$lower/bin/app" ] || fail "no /bin/app in the image layer ($lower)"
install -m 755 -o "$user" "$WORK/spin-v2" "$WORK/app.new"
$as_user sh -c "cp '$WORK/app.new' '$lower/bin/app.new' && mv -f '$lower/bin/app.new' '$lower/bin/app'" || fail "cannot replace the layer file"
cmp -s "$lower/bin/app" "$WORK/spin-v2" || fail "the layer file was not replaced"

export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$WORK/no-such-bus
PERISCOPED="$PERISCOPED" "$PERISCOPE" record --private -p "$pid" --duration=2 -o "$WORK/c.syscap" 2>"$WORK/rec.err" ||
        { cat "$WORK/rec.err"; fail "periscope record failed"; }
! grep -qE "Sanitizer|runtime error:" "$WORK/rec.err" || { cat "$WORK/rec.err"; fail "memory errors in periscoped"; }
"$PERISCOPE" report --folded --no-progress -p "$pid" "$WORK/c.syscap" >"$WORK/folded.txt" || fail "periscope report failed"
python3 - "$WORK/folded.txt" <<'PY' || { head -5 "$WORK/folded.txt"; fail "the report does not say the binary changed, or shows wrong names"; }
import folded, sys
total = changed = 0
for s in folded.stacks(sys.argv[1]):
    total += s.count
    if "_v2" in s.text or "hot_" in s.text:
        print("FAIL: a name from a file that was not mapped:", s.line); sys.exit(1)
    if "/bin/app: binary changed since it was mapped (inode " in s.text:
        changed += s.count
print("ok: %d/%d samples (%.1f%%) say /bin/app changed since it was mapped, no wrong names" % (changed, total, 100 * changed / max(total, 1)))
sys.exit(0 if total >= 50 and changed / total >= 0.95 else 1)
PY
"$PERISCOPE" report --no-progress "$WORK/c.syscap" >"$WORK/report.txt" || fail "periscope report failed"
grep -q "binary changed since it was mapped" "$WORK/report.txt" || { cat "$WORK/report.txt"; fail "the default report does not say the binary changed"; }
echo "PASS"
