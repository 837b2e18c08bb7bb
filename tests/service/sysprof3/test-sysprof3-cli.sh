#!/usr/bin/env bash
# service-sysprof3-cli: Debian's sysprof-cli 3.46 records a program through
# periscoped --sysprofd, with no sysprofd on the bus: the perf events come
# from periscoped's PerfEventOpen (its log says so, for uid 0), the process
# information from GetProcessInfo, and the capture holds the program's
# samples under its own function names. With --rapl, sysprof-cli starts
# org.gnome.Sysprof3.Profiler at /org/gnome/Sysprof3/RAPL, whose capture
# Sysprof merges: the energy counters, or on a machine without RAPL the
# LOG frame that says so.
. "$(dirname "$0")/lib.sh"
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
sysprof_xml=(/usr/share/dbus-1/interfaces/org.gnome.Sysprof3.Service.xml /usr/share/dbus-1/interfaces/org.gnome.Sysprof3.Profiler.xml)
for x in "${sysprof_xml[@]}"; do [ -f "$x" ] || fail "$x is missing (Debian's sysprof installs it)"; done
"${PYTHON:-python3}" "$(dirname "$0")/check-introspection.py" --unwinder \
        "$OUT/Sysprof3.xml,$OUT/RAPL.xml,$OUT/Unwinder.xml" "${sysprof_xml[@]}" || fail "the interfaces differ from Sysprof's"

cd "$OUT"
sysprof-cli --force --rapl --no-battery --no-network "$OUT/cli.syscap" -- "$DEMO" -t 1000 >"$OUT/cli.out" 2>&1
st=$?
cat "$OUT/cli.out"
[ $st = 0 ] || fail "sysprof-cli exited with $st"
[ -s "$OUT/cli.syscap" ] || fail "sysprof-cli wrote no capture"
grep -q "PerfEventOpen for uid 0" "$PRIVATE_BUS_DIR/periscoped.log" ||
        { cat "$PRIVATE_BUS_DIR/periscoped.log"; fail "sysprof-cli did not open its perf events through periscoped"; }
n_events=$(grep -c "PerfEventOpen for uid 0" "$PRIVATE_BUS_DIR/periscoped.log")
echo "ok: periscoped served $n_events PerfEventOpen calls"

"$PERISCOPE" report --no-progress --folded -c demo-workload "$OUT/cli.syscap" >"$OUT/folded" 2>"$OUT/report.err" ||
        { cat "$OUT/report.err"; fail "periscope report could not read sysprof-cli's capture"; }
total=$(awk '{s += $NF} END {print s + 0}' "$OUT/folded")
named=$(grep -E 'main;run_workload;outer_a;middle_(b;inner_c|d;inner_e)' "$OUT/folded" | awk '{s += $NF} END {print s + 0}')
echo "demo-workload: $total samples, $named with main;run_workload;outer_a;middle_*;inner_*"
[ "$total" -ge 200 ] || { head "$OUT/folded"; fail "only $total samples of demo-workload (-t 1000 at 1 kHz)"; }
[ $((named * 100)) -ge $((total * 80)) ] ||
        { sort -k2 -n -r "$OUT/folded" | head; fail "fewer than 80% of demo-workload's samples show its call chain"; }

"$PERISCOPE" dump "$OUT/cli.syscap" >"$OUT/dump" 2>&1 || fail "periscope dump could not read sysprof-cli's capture"
if [ -d /sys/class/powercap ] && ls /sys/class/powercap | grep >/dev/null .; then
        "$PERISCOPE" report --no-progress --counters "$OUT/cli.syscap" | grep >/dev/null "^Energy " ||
                fail "no energy counters from the RAPL profiler in the capture"
else
        grep -q "counter source 'energy' left out" "$OUT/dump" || fail "the RAPL profiler's capture was not merged (no energy counters and no LOG frame saying why)"
fi
echo "ok: org.gnome.Sysprof3.Profiler (--rapl) served and merged into sysprof-cli's capture"
sysprof3_check_log
echo "ok: sysprof-cli recorded demo-workload through periscoped with its function names"
