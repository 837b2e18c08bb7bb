# SPDX-License-Identifier: LGPL-2.1-or-later
# opener-checks.sh: the perf opener of periscoped.service dies (SIGKILL)
# while $user records a command (issue 27): the recording ends with its
# capture named, periscoped exits with a failure saying why, systemd's
# Restart=on-failure starts it again (NRestarts counts it, a new opener),
# and $user records again through it. Sourced by test-installed.sh, run
# last (it restarts the service). The private-daemon test of the same:
# tests/service/test-perf-opener-death.sh.
#   opener_checks IN_CT      IN_CT: the function that runs a command in the booted tree

opener_checks() {
        local in=$1 d=$tmp/opener
        local cap=/home/$user/opener.syscap pidfile=$CT_WORK/opener.pid ran=$CT_WORK/opener.ran
        mkdir -p "$d"
        rm -f "$root$pidfile" "$root$ran"
        $in runuser -u "$user" -- env HOME="/home/$user" periscope record -o "$cap" -- \
                sh -c 'echo $$ >"$0.tmp" && mv "$0.tmp" "$0" && "$1" 1500 && touch "$2" && exec sleep 25' \
                "$pidfile" "/home/$user/deep-nofp" "$ran" >"$d/record.out" 2>"$d/record.err" &
        local rec=$!
        for _ in $(seq 400); do [ -e "$root$ran" ] && break; sleep 0.05; done
        [ -e "$root$ran" ] || { cat "$d/record.err"; fail "the recording did not run deep-nofp to its end in 20 s"; }
        local workload main opener restarts since
        workload=$(cat "$root$pidfile")
        trap "$in sh -c 'kill $workload' 2>/dev/null || true; kill $rec 2>/dev/null || true" EXIT
        main=$($in systemctl show -p MainPID --value periscoped.service)
        restarts=$($in systemctl show -p NRestarts --value periscoped.service)
        opener=$($in sh -c "tr -s ' ' '\n' </proc/$main/task/$main/children | head -n 1")
        [ -n "$opener" ] || fail "periscoped (pid $main) has no child, no perf opener"
        since=$($in date +%s)
        $in sh -c "kill -KILL $opener"
        for _ in $(seq 300); do kill -0 $rec 2>/dev/null || break; sleep 0.05; done
        ! kill -0 $rec 2>/dev/null || { cat "$d/record.err"; fail "periscope record still runs 15 s after the opener died"; }
        local rec_st=0
        wait $rec || rec_st=$?
        cat "$d/record.err"
        echo "periscope record exited $rec_st"
        local named
        named=$(stop_named_share "$root$cap" "$d/folded")
        echo "capture: $named% of the workload's samples named"
        awk -v s="$named" 'BEGIN { exit !(s >= 90) }' || fail "only $named% of the samples are named after the opener died"
        local new=
        for _ in $(seq 200); do
                new=$($in systemctl show -p MainPID --value periscoped.service)
                [ "$new" = 0 ] || [ "$new" = "$main" ] || break
                sleep 0.1
        done
        $in journalctl --no-pager -u periscoped.service --since "@$since" >"$d/unit.journal" 2>&1 || true
        cat "$d/unit.journal"
        [ "$new" != 0 ] && [ "$new" != "$main" ] || fail "systemd did not start periscoped again after its opener died"
        [ "$($in systemctl show -p NRestarts --value periscoped.service)" -gt "$restarts" ] ||
                fail "NRestarts did not grow: the new periscoped was not Restart='s"
        grep >/dev/null "perf opener is gone (pid $opener was killed by signal 9)" "$d/unit.journal" ||
                fail "the journal does not say that the perf opener was killed"
        grep >/dev/null "exiting with a failure" "$d/unit.journal" || fail "the journal does not say why periscoped exits"
        $in runuser -u "$user" -- env HOME="/home/$user" periscope record -o "/home/$user/opener-again.syscap" -- \
                "/home/$user/deep-nofp" 800 >"$d/again.out" 2>&1 || { cat "$d/again.out"; fail "recording after the restart failed"; }
        named=$(stop_named_share "$root/home/$user/opener-again.syscap" "$d/folded-again")
        awk -v s="$named" 'BEGIN { exit !(s >= 90) }' || fail "only $named% named in the recording after the restart"
        echo "ok: the opener killed, the recording finalized, periscoped restarted by systemd and recording again"
}
