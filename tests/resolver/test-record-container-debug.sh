#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# End to end (private periscoped): a STRIPPED workload (no .symtab, no DWARF)
# whose debug file exists only inside its Podman image, nowhere on the host.
#  - rootful: at /usr/lib/debug/.build-id/xx/rest.debug in the image, found
#    through the live container root (/proc/PID/root);
#  - rootful, the container killed before the recording ends: from the
#    image's layer in /var/lib/containers/storage;
#  - rootless (fuse-overlayfs, root gets EACCES through /proc): named by the
#    binary's .gnu_debuglink at /usr/lib/debug/bin/app.debug in the image,
#    found in the owner's store through the layer chain, CRC checked.
# Both: >= 95% of the samples are main;hot_outer;hot_inner with the source
# lines of the workload (from the debug file), and `report --mappings` says
# the debug file came from the container.
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
: "${PERISCOPE:?}" "${PERISCOPED:?}"
need podman runc fuse-overlayfs runuser objcopy strip readelf python3
rootless_user periscope-rl
cd /
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$WORK/no-such-bus

# The workload, its debug file, and the stripped binary that goes into the image.
build_spin "$WORK/spin.full"
objcopy --only-keep-debug "$WORK/spin.full" "$WORK/app.debug"
strip --strip-all -o "$WORK/spin" "$WORK/spin.full"
readelf -S "$WORK/spin" | grep >/dev/null -E '\.symtab|\.debug_' && fail "the stripped workload still has symbols or DWARF"
bid=$(build_id_of "$WORK/spin")
[ ${#bid} -ge 16 ] || fail "the workload has no build-id (gcc without --build-id?)"
rel=.build-id/${bid:0:2}/${bid:2}.debug
[ ! -e "/usr/lib/debug/$rel" ] || fail "the host has /usr/lib/debug/$rel: the test needs it only inside the image"
[ ! -e /usr/lib/debug/bin/app.debug ] || fail "the host has /usr/lib/debug/bin/app.debug"

# Checks a capture: >= 95% of pid's samples main;hot_outer;hot_inner at the
# workload's source lines, and the provenance of /bin/app's debug file.
check_capture() { # capture, pid, provenance-regex, label
        local cap=$1 pid=$2 prov=$3 label=$4
        "$PERISCOPE" report --folded --lines --no-progress -p "$pid" "$cap" >"$cap.folded" || fail "$label: periscope report failed"
        python3 - "$cap.folded" "$label" <<'PY' || fail "$label: fewer than 95% of the samples carry the right names and lines"
import folded, sys
want = [("main", "spin.c", 4), ("hot_outer", "spin.c", 3), ("hot_inner", "spin.c", 2)]
good, total = folded.share_at_lines(sys.argv[1], want)
print("ok: %s: %d/%d samples (%.1f%%) main;hot_outer;hot_inner at spin.c:4;3;2" % (sys.argv[2], good, total, 100 * good / max(total, 1)))
sys.exit(0 if total >= 20 and good / total >= 0.95 else 1)
PY
        "$PERISCOPE" report --mappings --no-progress "$cap" >"$cap.maps" || fail "$label: report --mappings failed"
        grep -A1 -F "/bin/app" "$cap.maps" | tr -s ' \n' ' ' | grep >/dev/null -E "$prov" ||
                { cat "$cap.maps"; fail "$label: /bin/app's debug file provenance does not match '$prov'"; }
        echo "ok: $label: $(grep -A1 -F "/bin/app" "$cap.maps" | tr -s ' \n' ' ' | grep -oE "debug file by [^;]*" | head -1)"
}

record() { # pid, capture
        PERISCOPED="$PERISCOPED" "$PERISCOPE" record --private -p "$1" --duration=2 -o "$2" 2>"$2.err" ||
                { cat "$2.err"; fail "periscope record failed"; }
        ! grep -qE "Sanitizer|runtime error:" "$2.err" || { cat "$2.err"; fail "memory errors in periscoped"; }
}

# Rootful: the build-id path inside the image.
make_rootfs "$WORK/rootfs" "$WORK/spin"
mkdir -p "$WORK/rootfs/usr/lib/debug/.build-id/${bid:0:2}"
cp "$WORK/app.debug" "$WORK/rootfs/usr/lib/debug/$rel"
chmod -R a+rX "$WORK/rootfs"
image=$(podman_import "" "$WORK/rootfs" localhost/periscope-test-ctdebug)
cleanup "podman rmi -f $image"
name=periscope-test-ctdebug-$$
podman run -d --network none --name "$name" "$image" >/dev/null 2>"$WORK/run.err" || { cat "$WORK/run.err"; fail "podman run failed"; }
cleanup "podman rm -f -t 0 $name"
pid=$(podman inspect -f '{{.State.Pid}}' "$name")
[ "$pid" -gt 0 ] || fail "no pid for $name"
record "$pid" "$WORK/rootful.syscap"
check_capture "$WORK/rootful.syscap" "$pid" "debug file by build-id from container: /proc/$pid/root/usr/lib/debug/$rel" "rootful build-id"

# Rootful, the container killed before the recording ends: its root is gone
# at symbolization, the debug file comes from the image's layer in the store.
name2=periscope-test-ctdebug-gone-$$
cleanup "podman rm -f -t 0 $name2"
podman run -d --network none --name "$name2" "$image" >/dev/null 2>"$WORK/run.err" || { cat "$WORK/run.err"; fail "podman run failed"; }
pid2=$(podman inspect -f '{{.State.Pid}}' "$name2")
PERISCOPED="$PERISCOPED" "$PERISCOPE" record --private -p "$pid2" --duration=5 -o "$WORK/gone.syscap" 2>"$WORK/gone.syscap.err" &
rec=$!
wait_for 5 grep -q "recording .* started" "$WORK/gone.syscap.err" || true
sleep 1.5
podman kill "$name2" >/dev/null 2>&1 || fail "podman kill failed"
wait $rec || { cat "$WORK/gone.syscap.err"; fail "periscope record failed"; }
! grep -qE "Sanitizer|runtime error:" "$WORK/gone.syscap.err" || { cat "$WORK/gone.syscap.err"; fail "memory errors in periscoped"; }
[ ! -e "/proc/$pid2" ] || fail "the container process still runs"
check_capture "$WORK/gone.syscap" "$pid2" \
        "debug file by build-id from container: /var/lib/containers/storage/overlay/[0-9a-f]{64}/diff/usr/lib/debug/$rel" \
        "rootful, container gone"

# Rootless: .gnu_debuglink, through the owner's store.
objcopy --add-gnu-debuglink="$WORK/app.debug" "$WORK/spin" "$WORK/spin.linked"
make_rootfs "$WORK/rootfs-rl" "$WORK/spin.linked"
mkdir -p "$WORK/rootfs-rl/usr/lib/debug/bin"
cp "$WORK/app.debug" "$WORK/rootfs-rl/usr/lib/debug/bin/app.debug"
chmod -R a+rX "$WORK/rootfs-rl"
image_rl=$(podman_import "$as_user" "$WORK/rootfs-rl" localhost/periscope-test-ctdebug-rl)
cleanup "$as_user podman rmi -f $image_rl"
name_rl=periscope-test-ctdebug-rl-$$
$as_user podman run -d --network none --name "$name_rl" "$image_rl" >/dev/null 2>"$WORK/run.err" ||
        { cat "$WORK/run.err"; fail "rootless podman run failed"; }
cleanup "$as_user podman rm -f -t 0 $name_rl"
pid_rl=$($as_user podman inspect -f '{{.State.Pid}}' "$name_rl")
[ "$pid_rl" -gt 0 ] || fail "no pid for $name_rl"
if cat "/proc/$pid_rl/root/usr/lib/debug/bin/app.debug" >/dev/null 2>&1; then
        fail "root can read the rootless container through /proc: this case would not test the store"
fi
record "$pid_rl" "$WORK/rootless.syscap"
check_capture "$WORK/rootless.syscap" "$pid_rl" \
        "debug file by debuglink from container: /home/$user/.local/share/containers/storage/overlay/[0-9a-f]{64}/diff/usr/lib/debug/bin/app.debug" \
        "rootless debuglink"
echo "PASS"
