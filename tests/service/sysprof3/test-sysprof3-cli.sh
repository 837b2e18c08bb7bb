#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# service-sysprof3-cli: Debian's sysprof-cli 3.46 records a program through
# periscoped --sysprofd, with no sysprofd on the bus: the perf events come
# from periscoped's PerfEventOpen (its log says so, for uid 0), the process
# information from GetProcessInfo, and the capture holds the program's
# samples under its own function names. With --rapl, sysprof-cli starts
# org.gnome.Sysprof3.Profiler at /org/gnome/Sysprof3/RAPL, whose capture
# Sysprof merges: the energy counters, or on a machine without RAPL the
# LOG frame that says so.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cli-checks.sh"
: "${DEMO:?}" "${PERISCOPE:?}"
command -v sysprof-cli >/dev/null || fail "sysprof-cli is missing (apt-get install -y sysprof)"
grep -qs 'org.gnome.sysprof' /etc/polkit-1/rules.d/*.rules ||
        fail "sysprof-cli asks polkit for org.gnome.sysprof3.profile itself: run scripts/setup.d/20-polkit-sysprof.sh as root"
sysprof3_start

# The methods and properties as Sysprof's own introspection files declare them.
for path in /org/gnome/Sysprof3 /org/gnome/Sysprof3/RAPL /org/gnome/Sysprof3/Unwinder; do
        busctl --system introspect --xml-interface org.gnome.Sysprof3 "$path" >"$OUT/$(basename "$path").xml" ||
                fail "cannot introspect $path"
done
sysprof_cli_check_interfaces "$OUT"

cd "$OUT"
sysprof-cli --force --rapl --no-battery --no-network "$OUT/cli.syscap" -- "$DEMO" -t 1000 >"$OUT/cli.out" 2>&1
st=$?
cat "$OUT/cli.out"
[ $st = 0 ] || fail "sysprof-cli exited with $st"
sysprof_cli_check_perf_log "$PRIVATE_BUS_DIR/periscoped.log"
powercap=no
if [ -d /sys/class/powercap ] && ls /sys/class/powercap | grep >/dev/null .; then powercap=yes; fi
sysprof_cli_check_capture "$OUT/cli.syscap" "$OUT" $powercap
sysprof3_check_log
echo "ok: sysprof-cli recorded demo-workload through periscoped with its function names"
