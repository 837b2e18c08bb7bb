# SPDX-License-Identifier: LGPL-2.1-or-later
# stop-checks.sh: `systemctl stop`, `restart` and `try-restart` of
# periscoped.service while $user records a long-running command (issue 19):
# each within 15 s, the unit's stop clean (Result=success, no timeout, no
# SIGKILL), `periscope record` told at once (it exits non-zero and says
# why, while its command keeps running), and the capture's frames named,
# or named after `periscope symbolize`. Sourced by test-installed.sh, run
# after the other checks of the service (it stops the service; the next
# call activates it again).
#   stop_checks IN_CT      IN_CT: the function that runs a command in the booted tree

stop_max_seconds=15

# stop_check_one IN_CT HOW: one recording, one `systemctl HOW`
stop_check_one() {
        local in=$1 how=$2
        local d=$tmp/stop-$how
        local cap=/home/$user/stop-$how.syscap pidfile=$CT_WORK/stop-$how.pid ran=$CT_WORK/stop-$how.ran
        mkdir -p "$d"
        rm -f "$root$pidfile" "$root$ran"
        # The command: deep-nofp for 1.5 s of CPU (the samples), then a sleep
        # of 25 s, far longer than a stop may take; the stop comes once
        # deep-nofp has run.
        $in runuser -u "$user" -- env HOME="/home/$user" periscope record -o "$cap" -- \
                sh -c 'echo $$ >"$0.tmp" && mv "$0.tmp" "$0" && "$1" 1500 && touch "$2" && exec sleep 25' \
                "$pidfile" "/home/$user/deep-nofp" "$ran" >"$d/record.out" 2>"$d/record.err" &
        local rec=$!
        for _ in $(seq 200); do [ -s "$root$pidfile" ] && break; sleep 0.05; done
        [ -s "$root$pidfile" ] || { cat "$d/record.err"; fail "the recording of the command did not start"; }
        local workload
        workload=$(cat "$root$pidfile")
        # (every command of an EXIT trap succeeds: under set -e a failing one
        # ends the subshell with status 1 after all)
        trap "$in sh -c 'kill $workload' 2>/dev/null || true; kill $rec 2>/dev/null || true" EXIT
        for _ in $(seq 400); do [ -e "$root$ran" ] && break; sleep 0.05; done
        [ -e "$root$ran" ] || { cat "$d/record.err"; fail "deep-nofp did not run to its end in 20 s"; }
        local t0 t1 since st=0
        since=$($in date +%s)
        t0=$(date +%s%N)
        $in timeout 150 systemctl "$how" periscoped.service >"$d/systemctl.out" 2>&1 || st=$?
        t1=$(date +%s%N)
        local ms=$(((t1 - t0) / 1000000))
        echo "systemctl $how took $ms ms (exit $st)"
        # the CLI is told at once: it has ended by now, or within seconds
        local rec_st=running
        for _ in $(seq 100); do kill -0 $rec 2>/dev/null || break; sleep 0.05; done
        if ! kill -0 $rec 2>/dev/null; then rec_st=0; wait $rec || rec_st=$?; fi
        local alive=no
        $in sh -c "kill -0 $workload" 2>/dev/null && alive=yes
        $in sh -c "kill $workload" 2>/dev/null || true
        [ "$rec_st" != running ] || { kill $rec 2>/dev/null; wait $rec 2>/dev/null || true; }
        echo "periscope record: exit $rec_st; the command still ran after the stop: $alive"
        cat "$d/record.err"
        $in journalctl --no-pager -u periscoped.service --since "@$since" >"$d/unit.journal" 2>&1 || true
        local result
        result=$($in systemctl show -p Result --value periscoped.service)
        echo "unit Result: $result"

        local problems=()
        [ $st = 0 ] || problems+=("systemctl $how exited $st: $(tr '\n' ' ' <"$d/systemctl.out")")
        [ $ms -le $((stop_max_seconds * 1000)) ] || problems+=("systemctl $how took $ms ms (at most ${stop_max_seconds} s)")
        # (KillMode=mixed: what is left of the cgroup once periscoped has
        # exited, a helper still starting, gets SIGKILL; that is no timeout)
        if grep -E "timed out|Failed with result|Killing process [0-9]+ \(periscoped\)" "$d/unit.journal"; then
                problems+=("the unit's stop was not clean (journal lines above)")
        fi
        [ "$how" != stop ] || [ "$result" = success ] || problems+=("the unit's Result is '$result', not success")
        [ "$rec_st" != running ] || problems+=("periscope record still ran 5 s after the service stopped")
        [ "$rec_st" = running ] || [ "$rec_st" != 0 ] || problems+=("periscope record exited 0 from a recording the service ended")
        grep -qiE "shut ?down|stopp|restart" "$d/record.err" ||
                problems+=("periscope record did not say that the service ended the recording")
        [ "$alive" = yes ] || problems+=("the recorded command did not keep running after the stop")
        # the capture: named, or named after `periscope symbolize`
        if [ ! -s "$root$cap" ]; then
                problems+=("no capture at $cap")
        else
                local named
                named=$(stop_named_share "$root$cap" "$d/folded")
                echo "capture: $named% of the workload's samples named"
                if ! awk -v s="$named" 'BEGIN { exit !(s >= 90) }'; then
                        $in periscope symbolize "$cap" >"$d/symbolize.out" 2>&1 || true
                        cat "$d/symbolize.out"
                        named=$(stop_named_share "$root$cap" "$d/folded")
                        echo "after periscope symbolize: $named% of the workload's samples named"
                        awk -v s="$named" 'BEGIN { exit !(s >= 90) }' ||
                                problems+=("only $named% of the workload's samples are named, after periscope symbolize too")
                fi
        fi
        [ ${#problems[@]} = 0 ] || { printf '  %s\n' "${problems[@]}"; fail "systemctl $how: $(printf '%s; ' "${problems[@]}")"; }
        echo "ok: systemctl $how during a recording of a command"
}

# stop_named_share CAPTURE FOLDED: percent of deep-nofp's samples whose
# innermost user frame is one of its functions by name
stop_named_share() {
        "$PERISCOPE" report --no-progress --folded --comm deep-nofp "$1" >"$2" 2>/dev/null || { echo 0; return; }
        awk '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";")
               while (k > 0 && f[k] ~ / \[kernel\]$/) k--
               if (k == 0) next
               total += n
               if (f[k] ~ /^(main|chain_[a-d]|leaf_work)$/) ok += n }
             END { if (total == 0) print 0; else printf "%.1f\n", 100 * ok / total }' "$2"
}

stop_checks() { # in_ct function
        local how failed=()
        for how in stop restart try-restart; do
                ( stop_check_one "$1" $how ) || failed+=("$how")
        done
        [ ${#failed[@]} = 0 ] || fail "systemctl $(printf '%s ' "${failed[@]}")during a recording (reasons above)"
}
