#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# End to end (private periscoped): a Flatpak app whose code and the runtime
# library it spends its time in are both STRIPPED; their debug files exist
# only in the installed .Debug extensions (built offline into a local repo):
#  - the runtime's org.periscope.DbgTestPlatform.Debug holds libspin.so's
#    (hidden hot_outer/hot_inner are named only by it);
#  - the app's org.periscope.DbgTestApp.Debug, installed per user
#    (~/.local/share/flatpak), holds the app binary's (main).
# The runtime declares no extension point, so nothing mounts them in the
# sandbox: the resolver must find them in the installation. >= 95% of the
# samples are main;spin_entry;hot_outer;hot_inner at the right source lines,
# and report --mappings says flatpak-runtime-debug / flatpak-app-debug.
# periscope-user finds the runtime's debug file only while it may read it.
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
need flatpak pgrep objcopy strip readelf python3 cmp
: "${PERISCOPE:?}" "${PERISCOPED:?}"
cd /
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$WORK/no-such-bus
# periscoped finds a user's installation under the home passwd names; flatpak
# --user goes by $HOME, which a CI environment may not set
HOME=$(getent passwd "$(id -u)" | cut -d: -f6)
export HOME

app_id=org.periscope.DbgTestApp
rt_id=org.periscope.DbgTestPlatform
remote=periscope-dbgtest
arch=$(flatpak --default-arch)

# The runtime library: exported spin_entry, hidden callees.
cat >"$WORK/libspin.c" <<'SRC'
volatile unsigned long sink;
__attribute__((noinline, visibility("hidden"))) void hot_inner(void) { for (int i = 0; i < 1000000; i++) sink += i; }
__attribute__((noinline, visibility("hidden"))) void hot_outer(void) { hot_inner(); }
void spin_entry(void) { hot_outer(); }
SRC
cat >"$WORK/app.c" <<'SRC'
void spin_entry(void);
int main(void) { for (;;) spin_entry(); }
SRC
gcc -O0 -g -fno-omit-frame-pointer -shared -fPIC -Wl,-soname,libspin.so -o "$WORK/libspin.full" "$WORK/libspin.c"
gcc -O0 -g -fno-omit-frame-pointer -o "$WORK/dbgapp.full" "$WORK/app.c" "$WORK/libspin.full" -Wl,-rpath,/usr/lib/x86_64-linux-gnu
for f in libspin dbgapp; do
        objcopy --only-keep-debug "$WORK/$f.full" "$WORK/$f.debug"
        strip --strip-all -o "$WORK/$f" "$WORK/$f.full"
        readelf -S "$WORK/$f" | grep >/dev/null -E '\.symtab|\.debug_' && fail "$f still has symbols or DWARF after strip"
done
nm -D "$WORK/libspin" | grep >/dev/null hot_inner && fail "hot_inner is exported: the test needs it named only by the debug file"
lib_bid=$(build_id_of "$WORK/libspin")
app_bid=$(build_id_of "$WORK/dbgapp")
[ ${#lib_bid} -ge 16 ] && [ ${#app_bid} -ge 16 ] || fail "no build-ids"
for b in $lib_bid $app_bid; do
        [ ! -e "/usr/lib/debug/.build-id/${b:0:2}/${b:2}.debug" ] || fail "the host has the debug file of $b: the test needs it only in the extension"
done

uninstall() {
        flatpak uninstall -y --user --noninteractive $app_id.Debug
        flatpak remote-delete --user --force $remote
        flatpak uninstall -y --system --noninteractive $app_id $rt_id.Debug $rt_id
        flatpak remote-delete --system --force $remote
}
uninstall >/dev/null 2>&1 || true
cleanup uninstall
export_runtime() { # dir, branch
        flatpak build-export --runtime "$WORK/repo" "$1" "$2" >/dev/null 2>"$WORK/err" || { cat "$WORK/err"; fail "export of $1 failed"; }
}

# Runtime: libc, ld.so and the stripped libspin.so (build-export --runtime exports usr/).
R=$WORK/rt
mkdir -p "$R/files" "$R/usr/lib/x86_64-linux-gnu" "$R/usr/lib64"
cp /usr/lib/x86_64-linux-gnu/libc.so.6 "$R/usr/lib/x86_64-linux-gnu/"
cp /lib64/ld-linux-x86-64.so.2 "$R/usr/lib64/"
cp "$WORK/libspin" "$R/usr/lib/x86_64-linux-gnu/libspin.so"
printf '[Runtime]\nname=%s\nruntime=%s/%s/1.0\nsdk=%s/%s/1.0\n' $rt_id $rt_id "$arch" $rt_id "$arch" >"$R/metadata"
export_runtime "$R" 1.0
# The runtime's .Debug extension: its files are the sandbox's /usr/lib/debug.
D=$WORK/rt-debug
# (with [ExtensionOf], build-export takes files/ as is)
mkdir -p "$D/files/.build-id/${lib_bid:0:2}"
cp "$WORK/libspin.debug" "$D/files/.build-id/${lib_bid:0:2}/${lib_bid:2}.debug"
printf '[Runtime]\nname=%s.Debug\n\n[ExtensionOf]\nref=runtime/%s/%s/1.0\n' $rt_id $rt_id "$arch" >"$D/metadata"
export_runtime "$D" 1.0
flatpak remote-add --system --no-gpg-verify $remote "$WORK/repo" || fail "remote-add failed"
install_ref() {
        flatpak install -y --system --noninteractive $remote "$1" >/dev/null 2>"$WORK/err" || { cat "$WORK/err"; fail "install of $1 failed"; }
}
install_ref runtime/$rt_id/$arch/1.0
install_ref runtime/$rt_id.Debug/$arch/1.0
# The app and its .Debug extension (/app/lib/debug).
A=$WORK/app
flatpak_build_app "$A" $app_id $rt_id "$WORK/dbgapp" dbgapp "$WORK/repo"
AD=$WORK/app-debug
mkdir -p "$AD/files/.build-id/${app_bid:0:2}"
cp "$WORK/dbgapp.debug" "$AD/files/.build-id/${app_bid:0:2}/${app_bid:2}.debug"
printf '[Runtime]\nname=%s.Debug\n\n[ExtensionOf]\nref=app/%s/%s/stable\n' $app_id $app_id "$arch" >"$AD/metadata"
export_runtime "$AD" stable

install_ref app/$app_id/$arch/stable
# The app's .Debug extension goes into root's per-user installation
# (~/.local/share/flatpak): the lookup covers the owner's installation too.
flatpak remote-add --user --no-gpg-verify $remote "$WORK/repo" || fail "remote-add --user failed"
flatpak install -y --user --noninteractive $remote runtime/$app_id.Debug/$arch/stable >/dev/null 2>"$WORK/err" ||
        { cat "$WORK/err"; fail "install --user of $app_id.Debug failed"; }
ext=/var/lib/flatpak/runtime/$rt_id.Debug/$arch/1.0/active/files/.build-id/${lib_bid:0:2}/${lib_bid:2}.debug
cmp -s "$ext" "$WORK/libspin.debug" || fail "the runtime's .Debug extension does not hold libspin's debug file at $ext"

flatpak run $app_id >"$WORK/run.log" 2>&1 &
pid=
for _ in $(seq 100); do pid=$(pgrep -x dbgapp | head -1 || true); [ -n "$pid" ] && grep -q libspin.so "/proc/$pid/maps" 2>/dev/null && break; sleep 0.05; done
[ -n "$pid" ] || { cat "$WORK/run.log"; fail "the app did not start"; }
cleanup "kill $pid"
grep -q "/usr/lib/debug" "/proc/$pid/mountinfo" && fail "the extension is mounted in the sandbox: this case would not test the installation lookup"

PERISCOPED="$PERISCOPED" "$PERISCOPE" record --private -p "$pid" --duration=2 -o "$WORK/c.syscap" 2>"$WORK/rec.err" ||
        { cat "$WORK/rec.err"; fail "periscope record failed"; }
! grep -qE "Sanitizer|runtime error:" "$WORK/rec.err" || { cat "$WORK/rec.err"; fail "memory errors in periscoped"; }
"$PERISCOPE" report --folded --lines --no-progress -p "$pid" "$WORK/c.syscap" >"$WORK/folded.txt" || fail "periscope report failed"
python3 - "$WORK/folded.txt" <<'PY' || { head -5 "$WORK/folded.txt"; fail "fewer than 95% of the samples carry the right names and lines"; }
import folded, sys
want = [("main", "app.c", 2), ("spin_entry", "libspin.c", 4), ("hot_outer", "libspin.c", 3), ("hot_inner", "libspin.c", 2)]
good, total = folded.share_at_lines(sys.argv[1], want)
print("ok: %d/%d samples (%.1f%%) main;spin_entry;hot_outer;hot_inner at app.c:2, libspin.c:4;3;2" % (good, total, 100 * good / max(total, 1)))
sys.exit(0 if total >= 20 and good / total >= 0.95 else 1)
PY
"$PERISCOPE" report --mappings --no-progress "$WORK/c.syscap" >"$WORK/maps.txt" || fail "report --mappings failed"
prov() { grep -A1 -F "$1" "$WORK/maps.txt" | tr -s ' \n' ' ' | grep -oE "debug file by [^;]*" | head -1; }
[[ "$(prov /usr/lib/x86_64-linux-gnu/libspin.so)" =~ ^"debug file by build-id from flatpak-runtime-debug: /var/lib/flatpak/runtime/$rt_id.Debug/$arch/1.0/"[0-9a-f]+"/files/.build-id/${lib_bid:0:2}/${lib_bid:2}.debug"$ ]] ||
        { cat "$WORK/maps.txt"; fail "libspin.so's debug file does not come from the runtime's .Debug extension"; }
echo "ok: libspin.so: $(prov /usr/lib/x86_64-linux-gnu/libspin.so)"
[[ "$(prov /app/bin/dbgapp)" =~ ^"debug file by build-id from flatpak-app-debug: $HOME/.local/share/flatpak/runtime/$app_id.Debug/$arch/stable/"[0-9a-f]+"/files/.build-id/${app_bid:0:2}/${app_bid:2}.debug"$ ]] ||
        { cat "$WORK/maps.txt"; fail "the app binary's debug file does not come from the app's .Debug extension"; }
echo "ok: /app/bin/dbgapp: $(prov /app/bin/dbgapp)"

# A caller other than root reads the system installation's .Debug
# extension only with its own rights (issue 20): libspin's debug file is
# found for periscope-user while it is world-readable, and is "not there"
# once it is 0600, or 0644 in a 0700 directory; root still finds it.
caller=periscope-user
id -u $caller >/dev/null 2>&1 || fail "user $caller is missing: run scripts/setup.d/30-periscope-users.sh as root"
ext_dir=$(dirname "$(readlink -f "$ext")")
ext_rel=/.build-id/${lib_bid:0:2}/${lib_bid:2}.debug
ext_result() { # [--as-caller=UID]
        "$PERISCOPE_RESOLVE" "$@" --debug-path="$ext_rel" "$pid" >"$WORK/ext.out" 2>"$WORK/ext.err" ||
                { cat "$WORK/ext.err"; fail "periscope-resolve $* failed"; }
        grep -P "^debug\t\Q$ext_rel\E\ttree=flatpak-runtime-debug\t" "$WORK/ext.out" | grep -oP "result=\S+" ||
                { cat "$WORK/ext.out"; fail "no flatpak-runtime-debug line for $ext_rel"; }
}
as_caller=--as-caller=$(id -u $caller)
cleanup "chmod 0644 '$ext'; chmod 0755 '$ext_dir'"
[ "$(ext_result $as_caller)" = result=ok ] || fail "$caller does not find the world-readable debug file in the runtime's .Debug extension"
chmod 0600 "$ext"
[ "$(ext_result $as_caller)" = result=ENOENT ] || fail "$caller finds a 0600 debug file in the runtime's .Debug extension: $(cat "$WORK/ext.out")"
[ "$(ext_result)" = result=ok ] || fail "root does not find its 0600 debug file in the runtime's .Debug extension"
chmod 0644 "$ext"
chmod 0700 "$ext_dir"
[ "$(ext_result $as_caller)" = result=ENOENT ] || fail "$caller finds a debug file in a 0700 directory of the runtime's .Debug extension: $(cat "$WORK/ext.out")"
chmod 0755 "$ext_dir"
echo "ok: the runtime's .Debug extension as $caller: found while world-readable, not there at 0600 or in a 0700 directory; root finds it"

# After the sandbox is gone, its tree is the installation's app-path and
# runtime-path (from /.flatpak-info, kept in the snapshot).
mkdir -p "$WORK/copies"
"$PERISCOPE_RESOLVE" --wait-file="$WORK/go" --copy-to="$WORK/copies" --debug-path=/usr/lib/x86_64-linux-gnu/libspin.so "$pid" >"$WORK/gone.out" 2>"$WORK/gone.err" &
res=$!
wait_for 5 grep -q "snapshot of $pid taken" "$WORK/gone.err" || true
kill "$pid"
wait_for 5 test ! -e "/proc/$pid" || true
touch "$WORK/go"
wait $res || { cat "$WORK/gone.err"; fail "periscope-resolve failed"; }
line=$(grep -P "^debug\t/usr/lib/x86_64-linux-gnu/libspin.so\ttree=flatpak\t" "$WORK/gone.out") || { cat "$WORK/gone.out"; fail "no flatpak tree for the gone sandbox"; }
[[ "$line" == *"result=ok"*"host=/var/lib/flatpak/runtime/$rt_id/$arch/1.0/"*"/files/lib/x86_64-linux-gnu/libspin.so"* ]] || fail "gone sandbox: $line"
cmp -s "$WORK/copies/libspin.so" "$WORK/libspin" || fail "gone sandbox: the file opened through runtime-path differs"
echo "ok: sandbox gone: /usr/lib/… opened through runtime-path: $(grep -oP 'host=\S+' <<<"$line")"

# A forged /.flatpak-info (plain bwrap, as any user can run it) whose
# app-path names a directory outside every Flatpak installation: once the
# process is gone, nothing is opened there.
need bwrap
mkdir -p "$WORK/secret"
echo "root-only debug file" >"$WORK/secret/secret.debug"
printf '[Application]\nname=org.periscope.Forged\nruntime=runtime/%s/%s/1.0\n\n[Instance]\ninstance-id=1\napp-path=%s\nruntime-path=%s\n' \
        $rt_id "$arch" "$WORK/secret" "$WORK/secret" >"$WORK/forged-info"
bwrap --ro-bind /usr /usr --symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/bin /bin --dev /dev --proc /proc \
        --ro-bind "$WORK/forged-info" /.flatpak-info --unshare-pid --die-with-parent sleep 61 &
cleanup "kill $!"
fpid=
for _ in $(seq 100); do
        for p in $(pgrep -x sleep); do grep -qs org.periscope.Forged "/proc/$p/root/.flatpak-info" && fpid=$p; done
        [ -n "$fpid" ] && break; sleep 0.05
done
[ -n "$fpid" ] || fail "the forged sandbox did not start"
rm -f "$WORK/go"
"$PERISCOPE_RESOLVE" --wait-file="$WORK/go" --debug-path=/app/secret.debug --debug-path=/usr/secret.debug "$fpid" >"$WORK/forged.out" 2>"$WORK/forged.err" &
res=$!
wait_for 5 grep -q "snapshot of $fpid taken" "$WORK/forged.err" || true
grep -qP "^container\tengine=flatpak\t.*name=org.periscope.Forged" "$WORK/forged.out" || { cat "$WORK/forged.out" "$WORK/forged.err"; fail "the forged sandbox is not classified as Flatpak"; }
kill "$fpid"
wait_for 5 test ! -e "/proc/$fpid" || true
touch "$WORK/go"
wait $res || { cat "$WORK/forged.err"; fail "periscope-resolve failed"; }
grep -P "^debug\t" "$WORK/forged.out" | grep >/dev/null "result=ok" && { cat "$WORK/forged.out"; fail "a file was opened through a forged app-path"; }
[ "$(grep -cP "^debug\t/(app|usr)/secret.debug\ttree=flatpak\tresult=EPERM\t.*why=app-path/runtime-path of /.flatpak-info is outside the Flatpak installations" "$WORK/forged.out")" = 2 ] || { cat "$WORK/forged.out"; fail "no answer for the forged paths"; }
echo "ok: forged app-path/runtime-path outside the installations: nothing opened ($(grep -oP 'result=\S+' "$WORK/forged.out" | sort -u | tr '\n' ' '))"
echo "PASS"
