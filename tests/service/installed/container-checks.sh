# SPDX-License-Identifier: LGPL-2.1-or-later
# container-checks.sh: processes in their own mount namespaces and files
# replaced under a running program, under the unit, with the private-daemon
# tests' workloads and assertions. Sourced by test-installed.sh.
#   check_containerenv   $user in `unshare -Urm` with /run/.containerenv: a root-only file
#                        bound there never reaches the capture, the user's own is copied
#                        (test-files-containerenv.sh, tests/service/files-checks.sh)
#   check_flatpak_info   a Flatpak-like sandbox (bwrap, /.flatpak-info from --ro-bind-data,
#                        the app and runtime under /var/lib/flatpak bound at /app and /usr):
#                        `periscope record --container=APP-ID` as root describes it, pins its
#                        binary, names >= 95% of its samples (check-container-capture.py,
#                        as test-flatpak.sh)
#   check_upgrade        root's program and its library replaced (dpkg's rename) while
#                        recorded: named from the old files (test-record-upgrade.sh,
#                        tests/resolver/checks.sh)
. "$src/tests/service/files-checks.sh"
. "$src/tests/resolver/checks.sh"

check_containerenv() {
        local d=$tmp/containerenv mode
        mkdir -p "$d"
        # root's files, a root-only one in a world-searchable directory
        # (looking it up needs no read right), and the user's program
        files_build_programs "$d" sha1
        SECRET_DIR=$CT_WORK/secret
        mkdir -m 0700 "$root$SECRET_DIR"
        install -m 0600 "$d/secret.full" "$root$SECRET_DIR/payroll"
        secret_crc=$(files_secret_crc "$root$SECRET_DIR/payroll")
        mkdir -m 0755 "$root$CT_WORK/pub"
        echo "TOPSECRET_payroll_bonus_table=42 (root only)" >"$root$CT_WORK/pub/secret.txt"
        chmod 0600 "$root$CT_WORK/pub/secret.txt"
        local home=/home/$user
        install -m 0755 "$d/prog.full" "$root$home/prog"
        chroot "$root" chown "$user:" "$home/prog"
        for mode in bind own; do
                ct_record "$user" "$d/$mode.log" -o "$home/$mode.syscap" -- env container=podman unshare -Urm \
                        sh -c "$CONTAINERENV_SCRIPT" sh $mode "$CT_WORK/pub/secret.txt" "$home/prog"
                capture_text "$root$home/$mode.syscap" "$d/$mode.txt"
                containerenv_check $mode "$d/$mode.txt"
        done
}

check_flatpak_info() {
        local WORK=$tmp/flatpak
        mkdir -p "$WORK"
        local app_id=org.periscope.InstalledApp rt_id=org.periscope.InstalledPlatform instance=1770001
        local app=/var/lib/flatpak/app/$app_id/x86_64/stable/0123456789abcdef/files
        local rt=/var/lib/flatpak/runtime/$rt_id/x86_64/1.0/fedcba9876543210/files
        build_spin "$WORK/spin"
        mkdir -p "$root$app/bin" "$root$rt/lib/x86_64-linux-gnu" "$root$rt/lib64"
        cp "$WORK/spin" "$root$app/bin/joinapp"
        cp -L "$root/usr/lib/x86_64-linux-gnu/libc.so.6" "$root$rt/lib/x86_64-linux-gnu/"
        cp -L "$root/lib64/ld-linux-x86-64.so.2" "$root$rt/lib64/"
        chmod -R a+rX "$root/var/lib/flatpak"
        printf '[Application]\nname=%s\nruntime=runtime/%s/x86_64/1.0\n\n[Instance]\ninstance-id=%s\napp-path=%s\nruntime-path=%s\n' \
                $app_id $rt_id $instance "$app" "$rt" >"$root$CT_WORK/flatpak-info"
        # what flatpak run makes, as RECIPES.md says a plain bwrap imitates it
        ct_bg root "$CT_WORK/sandbox.pid" sh -c 'exec 3<"$0" && exec bwrap --ro-bind "$1" /app --ro-bind "$2" /usr \
                --symlink usr/lib /lib --symlink usr/lib64 /lib64 --proc /proc --dev /dev --tmpfs /tmp \
                --ro-bind-data 3 /.flatpak-info --unshare-pid --die-with-parent /app/bin/joinapp' \
                "$CT_WORK/flatpak-info" "$app" "$rt"
        trap 'ct_kill "$CT_WORK/sandbox.pid"' EXIT
        local pid=
        for _ in $(seq 100); do
                pid=$(in_ct sh -c 'for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = joinapp ] &&
                        grep -qs "^name=$0\$" $p/root/.flatpak-info && echo ${p#/proc/}; done; true' $app_id | head -n1)
                [ -n "$pid" ] && break
                sleep 0.05
        done
        [ -n "$pid" ] || fail "the sandbox did not start /app/bin/joinapp"
        # killing the outer bwrap leaves the sandbox running: its innermost pid too
        trap "ct_kill '$CT_WORK/sandbox.pid'; in_ct sh -c 'kill $pid' 2>/dev/null || true" EXIT
        ct_record root "$WORK/record.log" --container=$app_id --duration=1 -o "$CT_WORK/flatpak.syscap"
        "$PERISCOPE" dump --json "$root$CT_WORK/flatpak.syscap" >"$WORK/c.json" || fail "periscope dump failed"
        CAPTURE="$root$CT_WORK/flatpak.syscap" "$PYTHON" "$src/tests/resolver/check-container-capture.py" "$WORK/c.json" \
                "$pid" flatpak $app_id 0 "$WORK/spin" /app/bin/joinapp map_files || fail "capture check failed"
}

check_upgrade() {
        local WORK=$tmp/upgrade
        mkdir -p "$WORK"
        # L: where the program is installed, inside
        local L=/opt/periscope-upgrade
        build_hot_version v1 -O0
        build_hot_version v2 -O0
        upgrade_install "$root$L"
        ct_bg root "$CT_WORK/app.pid" "$L/bin/app"
        trap 'ct_kill "$CT_WORK/app.pid"' EXIT
        local pid
        pid=$(cat "$root$CT_WORK/app.pid")
        for _ in $(seq 100); do in_ct grep -q libhot "/proc/$pid/maps" 2>/dev/null && break; sleep 0.05; done
        in_ct periscope record -p "$pid" --duration=3 -o "$CT_WORK/upgrade.syscap" >"$WORK/record.log" 2>&1 &
        local rec=$!
        # the recording runs once the service has its object
        for _ in $(seq 200); do
                in_ct busctl --system tree org.periscope.Profiler1 --list 2>/dev/null | grep >/dev/null '^/org/periscope/Recording/' && break
                sleep 0.05
        done
        sleep 1
        upgrade_replace "$root$L"
        in_ct grep -q "$L/bin/app (deleted)" "/proc/$pid/maps" || fail "the kernel does not show the old binary as deleted"
        sleep 0.5
        ct_kill "$CT_WORK/app.pid"
        wait $rec || { cat "$WORK/record.log"; service_state; fail "periscope record -p $pid failed"; }
        cat "$WORK/record.log"
        ! grep -q "private periscoped" "$WORK/record.log" || fail "periscope record used a private periscoped"
        upgrade_check "$root$CT_WORK/upgrade.syscap" "$pid" "$WORK/folded.txt"
}
