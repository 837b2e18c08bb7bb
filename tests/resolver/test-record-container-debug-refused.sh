#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# End to end (private periscoped): wrong debug files inside a container are
# refused with a logged reason, and the stripped workload's frames say
# unresolved instead of carrying wrong names.
#  - "mismatch": the image's /usr/lib/debug/.build-id/xx/rest.debug (the
#    workload's build-id path) holds the debug file of another build whose
#    functions are named wrong_*: build-id mismatch;
#  - "escape": the image's build-id path is a symlink climbing out of the
#    container root to the RIGHT debug file on the host, and the debuglink
#    place /bin/.debug/app.debug an absolute symlink to it: the first is
#    refused ("leads out of the root"), the second resolves inside the
#    container root (where nothing is), never on the host; the same image
#    again in a rootless store (found through the layers, not /proc).
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
: "${PERISCOPE:?}" "${PERISCOPED:?}"
need podman runc fuse-overlayfs runuser objcopy strip readelf python3
cd /
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$WORK/no-such-bus

build_spin "$WORK/spin.full"
objcopy --only-keep-debug "$WORK/spin.full" "$WORK/app.debug"
strip --strip-all -o "$WORK/spin.stripped" "$WORK/spin.full"
objcopy --add-gnu-debuglink="$WORK/app.debug" "$WORK/spin.stripped" "$WORK/spin"
bid=$(build_id_of "$WORK/spin")
[ ${#bid} -ge 16 ] || fail "the workload has no build-id"
rel=.build-id/${bid:0:2}/${bid:2}.debug
[ ! -e "/usr/lib/debug/$rel" ] || fail "the host has /usr/lib/debug/$rel"
# Another build of the same code, functions renamed: same layout, other build-id.
sed -e 's/hot_inner/wrong_inner/g; s/hot_outer/wrong_outer/g' "$WORK/spin.c" >"$WORK/wrong.c"
gcc -O0 -g -fno-omit-frame-pointer -o "$WORK/wrong.full" "$WORK/wrong.c"
objcopy --only-keep-debug "$WORK/wrong.full" "$WORK/wrong.debug"
# The right debug file, on the host but outside every debug directory.
mkdir -p "$WORK/hostonly"
cp "$WORK/app.debug" "$WORK/hostonly/app.debug"

start() { # rootfs, name; sets pid (no subshell: the cleanups must stay registered)
        local image
        chmod -R a+rX "$1"
        image=$(podman_import "" "$1" localhost/periscope-test-ctdebug-refused)
        cleanup "podman rmi -f $image"
        cleanup "podman rm -f -t 0 $2"
        podman run -d --network none --name "$2" "$image" >/dev/null 2>"$WORK/run.err" || { cat "$WORK/run.err"; fail "podman run failed"; }
        pid=$(podman inspect -f '{{.State.Pid}}' "$2")
        [ "$pid" -gt 0 ] || fail "no pid for $2"
}

# Records pid; asserts >= 95% of its samples end in an unnamed frame of
# /bin/app ("[unresolved: …]" or "app+0xOFFSET"), none carries a workload or wrong_* name; the daemon logged the
# refusal (log-regex) and report --mappings shows it.
check_refused() { # pid, label, log-regex
        local pid=$1 label=$2 logre=$3 cap=$WORK/$2.syscap
        PERISCOPED="$PERISCOPED" "$PERISCOPE" record --private -p "$pid" --duration=2 -o "$cap" 2>"$cap.err" ||
                { cat "$cap.err"; fail "$label: periscope record failed"; }
        ! grep -qE "Sanitizer|runtime error:" "$cap.err" || { cat "$cap.err"; fail "memory errors in periscoped"; }
        grep -qE "$logre" "$cap.err" || { cat "$cap.err"; fail "$label: no logged refusal matching '$logre'"; }
        echo "ok: $label: logged: $(grep -E "$logre" "$cap.err" | head -1 | cut -c1-300)"
        "$PERISCOPE" report --folded --no-progress -p "$pid" "$cap" >"$cap.folded" || fail "$label: periscope report failed"
        python3 - "$cap.folded" "$label" <<'PY' || { head -5 "$cap.folded"; fail "$label: frames are not shown as unresolved"; }
import folded, re, sys
total = unresolved = 0
example = ""
for s in folded.stacks(sys.argv[1]):
    total += s.count
    frames = s.frames
    if any(n in f for f in frames for n in ("hot_inner", "hot_outer", "wrong_inner", "wrong_outer")):
        print("FAIL: a sample carries a name no accepted file gave:", s.text)
        sys.exit(1)
    user = s.user
    # an unnamed frame: "[unresolved: …]" or, kept by offset to be named
    # later, "app+0xOFFSET"
    if user and (user[-1].startswith("[unresolved") or re.match(r"app\+0x[0-9a-f]+$", user[-1])):
        unresolved += s.count
        example = user[-1]
print("   e.g. %s" % example)
print("ok: %s: %d/%d samples (%.1f%%) end in an unresolved frame, no wrong names" % (sys.argv[2], unresolved, total, 100 * unresolved / max(total, 1)))
sys.exit(0 if total >= 20 and unresolved / total >= 0.95 else 1)
PY
        "$PERISCOPE" report --mappings --no-progress "$cap" >"$cap.maps" || fail "$label: report --mappings failed"
        grep -A1 -F "/bin/app" "$cap.maps" | tr -s ' \n' ' ' | grep >/dev/null -E "$logre" ||
                { cat "$cap.maps"; fail "$label: report --mappings does not show the refusal"; }
        grep -A1 -F "/bin/app" "$cap.maps" | grep >/dev/null "debug file by" && { cat "$cap.maps"; fail "$label: a debug file was used"; }
        echo "ok: $label: report --mappings shows the refusal, no debug file used"
}

make_rootfs "$WORK/rootfs-mismatch" "$WORK/spin"
mkdir -p "$WORK/rootfs-mismatch/usr/lib/debug/.build-id/${bid:0:2}"
cp "$WORK/wrong.debug" "$WORK/rootfs-mismatch/usr/lib/debug/$rel"
start "$WORK/rootfs-mismatch" periscope-test-ctdebug-mismatch-$$
check_refused "$pid" mismatch "container .*/usr/lib/debug/$rel: build-id mismatch \(file [0-9a-f]+, expected $bid\), not used"

make_rootfs "$WORK/rootfs-escape" "$WORK/spin"
mkdir -p "$WORK/rootfs-escape/usr/lib/debug/.build-id/${bid:0:2}" "$WORK/rootfs-escape/bin/.debug"
ln -s "../../../../../../../../../..$WORK/hostonly/app.debug" "$WORK/rootfs-escape/usr/lib/debug/$rel"
ln -s "$WORK/hostonly/app.debug" "$WORK/rootfs-escape/bin/.debug/app.debug"
start "$WORK/rootfs-escape" periscope-test-ctdebug-escape-$$
check_refused "$pid" escape "symlink /usr/lib/debug/$rel -> [./]*$WORK/hostonly/app.debug leads out of the root, not followed"

# The same image in a rootless store (the user owns every byte of it): the
# links are read from the layer, never followed by the kernel.
rootless_user periscope-rl
image_rl=$(podman_import "$as_user" "$WORK/rootfs-escape" localhost/periscope-test-ctdebug-refused-rl)
cleanup "$as_user podman rmi -f $image_rl"
name_rl=periscope-test-ctdebug-escape-rl-$$
cleanup "$as_user podman rm -f -t 0 $name_rl"
$as_user podman run -d --network none --name "$name_rl" "$image_rl" >/dev/null 2>"$WORK/run.err" ||
        { cat "$WORK/run.err"; fail "rootless podman run failed"; }
pid=$($as_user podman inspect -f '{{.State.Pid}}' "$name_rl")
[ "$pid" -gt 0 ] || fail "no pid for $name_rl"
check_refused "$pid" escape-rootless \
        "container /home/$user/.local/share/containers/storage/overlay/[0-9a-f]{64}/diff/usr/lib/debug/$rel: symlink /usr/lib/debug/$rel -> [./]*$WORK/hostonly/app.debug leads out of the root, not followed"
echo "PASS"
