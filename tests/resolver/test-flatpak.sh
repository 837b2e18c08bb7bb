#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A Flatpak app from a local runtime and repo (built offline). The process
# is classified by its /.flatpak-info (app id, instance), and its files are
# found on the host through app-path (/app) and runtime-path (/usr), with
# the identity checked.
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
need flatpak pgrep nm python3
: "${PERISCOPE:?}" "${PERISCOPED:?}"

app_id=org.periscope.TestApp
rt_id=org.periscope.TestPlatform
remote=periscope-test
build_spin "$WORK/ptapp"

# Runtime: build-export --runtime exports usr/ as the runtime's files.
R=$WORK/rt
mkdir -p "$R/files" "$R/usr/lib/x86_64-linux-gnu" "$R/usr/lib64"
cp /usr/lib/x86_64-linux-gnu/libc.so.6 "$R/usr/lib/x86_64-linux-gnu/"
cp /lib64/ld-linux-x86-64.so.2 "$R/usr/lib64/"
printf '[Runtime]\nname=%s\nruntime=%s/x86_64/1.0\nsdk=%s/x86_64/1.0\n' $rt_id $rt_id $rt_id >"$R/metadata"

uninstall() {
        flatpak uninstall -y --system --noninteractive $app_id $rt_id
        flatpak remote-delete --system --force $remote
}
uninstall >/dev/null 2>&1 || true
cleanup uninstall
flatpak build-export --runtime "$WORK/repo" "$R" 1.0 >/dev/null 2>"$WORK/err" || { cat "$WORK/err"; fail "runtime export failed"; }
flatpak remote-add --system --no-gpg-verify $remote "$WORK/repo" || fail "remote-add failed"
flatpak install -y --system --noninteractive $remote runtime/$rt_id/x86_64/1.0 >/dev/null 2>"$WORK/err" || { cat "$WORK/err"; fail "runtime install failed"; }
A=$WORK/app
flatpak_build_app "$A" $app_id $rt_id "$WORK/ptapp" ptapp "$WORK/repo"
flatpak install -y --system --noninteractive $remote app/$app_id/x86_64/stable >/dev/null 2>"$WORK/err" || { cat "$WORK/err"; fail "app install failed"; }

flatpak run $app_id >"$WORK/run.log" 2>&1 &
pid=
# Other tests may run a ptapp of their own app at the same time: ours is
# the one whose sandbox says it is $app_id.
for _ in $(seq 100); do
        for p in $(pgrep -x ptapp || true); do
                if grep -qx "name=$app_id" "/proc/$p/root/.flatpak-info" 2>/dev/null &&
                   grep -q /app/bin/ptapp "/proc/$p/maps" 2>/dev/null; then
                        pid=$p
                fi
        done
        [ -n "$pid" ] && break
        sleep 0.05
done
[ -n "$pid" ] || { cat "$WORK/run.log"; fail "the app did not start"; }
# Killing the outer bwrap leaves the sandbox running: end the innermost pid.
cleanup "kill $pid"

for methods in "" flatpak; do
        out=$WORK/out-${methods:-all}
        resolve "$out" "$WORK/copies" ${methods:+--methods=$methods} "$pid"
        grep -qP "^container\tengine=flatpak\tid=[0-9]+\tname=$app_id\timage=$app_id\t" "$out" || { cat "$out"; fail "not classified as Flatpak $app_id"; }
        expect=${methods:-map-files}
        assert_resolved "$out" /app/bin/ptapp "$expect" "$WORK/ptapp" "$WORK/copies"
        assert_resolved "$out" /usr/lib/x86_64-linux-gnu/libc.so.6 "$expect" /usr/lib/x86_64-linux-gnu/libc.so.6 "$WORK/copies"
        assert_resolved "$out" /usr/lib64/ld-linux-x86-64.so.2 "$expect" /lib64/ld-linux-x86-64.so.2 "$WORK/copies"
done
[[ "$(map_field "$WORK/out-flatpak" /app/bin/ptapp host)" == /var/lib/flatpak/app/$app_id/x86_64/stable/*/files/bin/ptapp ]] || fail "not found through app-path"
[[ "$(map_field "$WORK/out-flatpak" /usr/lib/x86_64-linux-gnu/libc.so.6 host)" == /var/lib/flatpak/runtime/$rt_id/x86_64/1.0/*/files/lib/x86_64-linux-gnu/libc.so.6 ]] || fail "not found through runtime-path"
assert_listed "$app_id" "$pid" flatpak

# End to end: periscope record --container APP-ID (private periscoped).
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$WORK/no-such-bus
PERISCOPED="$PERISCOPED" "$PERISCOPE" record --private --container=$app_id --duration=1 -o "$WORK/c.syscap" 2>"$WORK/rec.err" ||
        { cat "$WORK/rec.err"; fail "periscope record --container=$app_id failed"; }
! grep -qE "Sanitizer|runtime error:" "$WORK/rec.err" || { cat "$WORK/rec.err"; fail "memory errors in periscoped"; }
"$PERISCOPE" dump --json "$WORK/c.syscap" >"$WORK/c.json" || fail "periscope dump failed"
CAPTURE="$WORK/c.syscap" python3 "$here/check-container-capture.py" "$WORK/c.json" "$pid" flatpak $app_id 0 "$WORK/ptapp" /app/bin/ptapp map_files ||
        fail "capture check failed"
echo "PASS"
