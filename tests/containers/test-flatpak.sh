#!/usr/bin/env bash
# A Flatpak app from a local runtime and repo (built offline). The process
# is classified by its /.flatpak-info (app id, instance), and its files are
# found on the host through app-path (/app) and runtime-path (/usr), with
# the identity checked.
source "$(dirname "$0")/lib.sh"
need flatpak pgrep

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
flatpak build-init "$A" $app_id $rt_id $rt_id 1.0 >/dev/null || fail "build-init failed"
mkdir -p "$A/files/bin"
cp "$WORK/ptapp" "$A/files/bin/ptapp"
flatpak build-finish --command=ptapp "$A" >/dev/null || fail "build-finish failed"
flatpak build-export "$WORK/repo" "$A" stable >/dev/null 2>"$WORK/err" || { cat "$WORK/err"; fail "app export failed"; }
flatpak install -y --system --noninteractive $remote app/$app_id/x86_64/stable >/dev/null 2>"$WORK/err" || { cat "$WORK/err"; fail "app install failed"; }

flatpak run $app_id >"$WORK/run.log" 2>&1 &
pid=
for _ in $(seq 100); do pid=$(pgrep -x ptapp | head -1 || true); [ -n "$pid" ] && grep -q /app/bin/ptapp "/proc/$pid/maps" 2>/dev/null && break; sleep 0.05; done
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
echo "PASS"
