# SPDX-License-Identifier: LGPL-2.1-or-later
# sysprof-checks.sh: Debian's sysprof-cli through periscoped-sysprof.service
# (the sysprofd drop-in as installed with -Dsysprofd_drop_in=true, D-Bus
# activated in place of Sysprof's own sysprofd, which the tree has too),
# with test-sysprof3-cli.sh's assertions (tests/service/sysprof3/cli-checks.sh),
# as root as it records. Sourced by test-installed.sh.
. "$src/tests/service/sysprof3/cli-checks.sh"

check_sysprof_cli() {
        local d=$tmp/sysprof out=$CT_WORK/sysprof path
        mkdir -p "$d" "$root$out"
        # The private test reads periscoped's debug log to see that the perf
        # events came from it: a runtime drop-in sets PERISCOPE_DEBUG, nothing
        # else of the unit changes.
        # (/run inside is the booted system's tmpfs, not the tree's /run)
        in_ct sh -c 'mkdir -p /run/systemd/system/periscoped-sysprof.service.d &&
                printf "[Service]\nEnvironment=PERISCOPE_DEBUG=1\n" >/run/systemd/system/periscoped-sysprof.service.d/debug.conf &&
                systemctl daemon-reload' || fail "cannot add a runtime drop-in to periscoped-sysprof.service"
        # The methods and properties as Sysprof's own introspection files declare them.
        for path in /org/gnome/Sysprof3 /org/gnome/Sysprof3/RAPL /org/gnome/Sysprof3/Unwinder; do
                in_ct busctl --system introspect --xml-interface org.gnome.Sysprof3 "$path" >"$d/$(basename "$path").xml" ||
                        { service_state periscoped-sysprof.service; fail "cannot introspect $path"; }
        done
        sysprof_cli_check_interfaces "$d" "$root"
        in_ct busctl --system status org.gnome.Sysprof3 >"$d/owner.txt" 2>&1 || true
        grep -q '^Unit=periscoped-sysprof.service$' "$d/owner.txt" ||
                { cat "$d/owner.txt"; fail "org.gnome.Sysprof3 is not owned by periscoped-sysprof.service"; }
        echo "ok: org.gnome.Sysprof3 is periscoped-sysprof.service's"

        local st=0
        in_ct sh -c 'cd "$0" && exec sysprof-cli --force --rapl --no-battery --no-network "$0/cli.syscap" -- /usr/local/bin/demo-workload -t 1000' \
                "$out" >"$d/cli.out" 2>&1 || st=$?
        cat "$d/cli.out"
        [ $st = 0 ] || { service_state periscoped-sysprof.service; fail "sysprof-cli exited with $st"; }
        in_ct journalctl --no-pager -b -u periscoped-sysprof.service >"$d/periscoped.log" 2>&1 || true
        sysprof_cli_check_perf_log "$d/periscoped.log"
        in_ct journalctl --no-pager -b -u dbus.service >"$d/dbus.journal" 2>&1 || true
        grep -q "Activating via systemd: service name='org.gnome.Sysprof3' unit='periscoped-sysprof.service'" "$d/dbus.journal" ||
                { cat "$d/dbus.journal"; fail "dbus-daemon did not activate periscoped-sysprof.service for org.gnome.Sysprof3"; }
        ! grep -q "unit='sysprof3.service'" "$d/dbus.journal" || fail "dbus-daemon activated Sysprof's own sysprofd"
        local powercap=no
        if in_ct sh -c 'ls /sys/class/powercap 2>/dev/null' | grep >/dev/null .; then powercap=yes; fi
        sysprof_cli_check_capture "$root$out/cli.syscap" "$d" $powercap
        echo "ok: sysprof-cli recorded demo-workload through periscoped-sysprof.service with its function names"
}
