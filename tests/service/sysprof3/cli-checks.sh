# SPDX-License-Identifier: LGPL-2.1-or-later
# cli-checks.sh: the assertions on a recording of Debian's sysprof-cli through
# periscoped --sysprofd, sourced by test-sysprof3-cli.sh (private daemon)
# and by the installed-service family (tests/service/installed/), so that
# both check the same things. Needs PERISCOPE (the CLI that reads captures),
# fail() (and PYTHON, default python3).
#   sysprof_cli_check_interfaces DIR [ROOT]   DIR/{Sysprof3,RAPL,Unwinder}.xml (busctl
#                                       introspect --xml-interface of the three objects) are
#                                       Sysprof's own (its XML files in ROOT/usr/share, default /)
#   sysprof_cli_check_perf_log LOG      periscoped's debug log (PERISCOPE_DEBUG=1) shows it
#                                       served sysprof-cli's PerfEventOpen calls for uid 0
#   sysprof_cli_check_capture CAP DIR POWERCAP   sysprof-cli --rapl … -- demo-workload -t 1000:
#                                       demo-workload's samples named; energy counters (POWERCAP
#                                       "yes": the machine has /sys/class/powercap entries) or the
#                                       LOG frame that says why not

sysprof_cli_check_interfaces() { # dir, [root]
        local x d=$1 r=${2:-}
        local sysprof_xml=("$r"/usr/share/dbus-1/interfaces/org.gnome.Sysprof3.Service.xml "$r"/usr/share/dbus-1/interfaces/org.gnome.Sysprof3.Profiler.xml)
        for x in "${sysprof_xml[@]}"; do [ -f "$x" ] || fail "$x is missing (Debian's sysprof installs it)"; done
        "${PYTHON:-python3}" "$(dirname "${BASH_SOURCE[0]}")/check-introspection.py" --unwinder \
                "$d/Sysprof3.xml,$d/RAPL.xml,$d/Unwinder.xml" "${sysprof_xml[@]}" || fail "the interfaces differ from Sysprof's"
}

sysprof_cli_check_perf_log() { # periscoped's log
        grep -q "PerfEventOpen for uid 0" "$1" ||
                { cat "$1"; fail "sysprof-cli did not open its perf events through periscoped"; }
        echo "ok: periscoped served $(grep -c "PerfEventOpen for uid 0" "$1") PerfEventOpen calls"
}

sysprof_cli_check_capture() { # capture, dir, powercap (yes/no)
        local cap=$1 d=$2 total named
        [ -s "$cap" ] || fail "sysprof-cli wrote no capture"
        "$PERISCOPE" report --no-progress --folded -c demo-workload "$cap" >"$d/folded" 2>"$d/report.err" ||
                { cat "$d/report.err"; fail "periscope report could not read sysprof-cli's capture"; }
        total=$(awk '{s += $NF} END {print s + 0}' "$d/folded")
        named=$(grep -E 'main;run_workload;outer_a;middle_(b;inner_c|d;inner_e)' "$d/folded" | awk '{s += $NF} END {print s + 0}')
        echo "demo-workload: $total samples, $named with main;run_workload;outer_a;middle_*;inner_*"
        [ "$total" -ge 200 ] || { head "$d/folded"; fail "only $total samples of demo-workload (-t 1000 at 1 kHz)"; }
        [ $((named * 100)) -ge $((total * 80)) ] ||
                { sort -k2 -n -r "$d/folded" | head; fail "fewer than 80% of demo-workload's samples show its call chain"; }
        "$PERISCOPE" dump "$cap" >"$d/dump" 2>&1 || fail "periscope dump could not read sysprof-cli's capture"
        if [ "$3" = yes ]; then
                "$PERISCOPE" report --no-progress --counters "$cap" | grep >/dev/null "^Energy " ||
                        fail "no energy counters from the RAPL profiler in the capture"
        else
                grep -q "counter source 'energy' left out" "$d/dump" || fail "the RAPL profiler's capture was not merged (no energy counters and no LOG frame saying why)"
        fi
        echo "ok: org.gnome.Sysprof3.Profiler (--rapl) served and merged into sysprof-cli's capture"
}
