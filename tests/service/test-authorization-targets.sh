#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What Record tells a caller about processes it may not record, and who gets
# the RAPL energy counters (issue 27), with the real polkitd:
# - periscope-user asking for pid 1, for a pid that does not exist and for
#   a zombie of root's gets one error and one message (the pid aside),
#   naming neither their command nor their parent (hidepid= holds);
#   periscope-admin (polkit's org.periscope.profile-system) and root are
#   told which is which.
# - counters=["energy"]: refused to periscope-user with the action named,
#   recorded for root and periscope-admin (where the machine has no RAPL,
#   the capture says the source is missing; where it has, it holds Energy
#   counters).
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${CAPTURE_JSON:?}"
test_user_require periscope-user
id -u periscope-admin >/dev/null 2>&1 || fail "user periscope-admin is missing: run scripts/setup.d/30-periscope-users.sh as root"
[ -f /usr/share/polkit-1/actions/org.periscope.policy ] ||
        fail "polkit action org.periscope.profile-system not installed: run scripts/setup.d/30-periscope-users.sh"
periscoped_start_for_user periscope-user 755
chmod 777 "$dir"

record_as() { # USER OPTIONS: Record with fd 3 → $dir/cap; prints the reply or the error
        local u=$1 opts=$2
        if [ "$u" = root ]; then
                gdbus call --address "$BUS_ADDRESS" -d org.periscope.Profiler1 -o /org/periscope/Profiler1 \
                        -m org.periscope.Profiler1.Record "$opts" 3 3>"$dir/cap" 2>&1 || true
        else
                TEST_USER=$u as_user gdbus call --address "$BUS_ADDRESS" -d org.periscope.Profiler1 \
                        -o /org/periscope/Profiler1 -m org.periscope.Profiler1.Record "$opts" 3 3>"$dir/cap" 2>&1 || true
        fi
}

# A pid that is free now (and stays so: pids are not reused this fast).
gone=$(( $(cat /proc/sys/kernel/pid_max) - 7 ))
while [ -e /proc/$gone ]; do gone=$((gone - 1)); done

# A zombie of root's: its parent (a sleep that replaced the shell that
# started it) never collects it.
make_zombie() { # AS: sets zombie and zparent
        local pre=()
        [ "$1" = root ] || pre=(setpriv --reuid="$1" --regid="$1" --init-groups)
        "${pre[@]}" bash -c 'sleep 0.1 & exec -a zombieparent sleep 60' & zparent=$!
        private_bus_track $zparent
        zombie=
        for _ in $(seq 100); do
                zombie=$(tr -d ' \n' </proc/$zparent/task/$zparent/children 2>/dev/null || true)
                [ -n "$zombie" ] && grep -q '^[0-9]* (sleep) Z' /proc/$zombie/stat 2>/dev/null && break
                sleep 0.05
        done
        grep -q '^[0-9]* (sleep) Z' /proc/$zombie/stat 2>/dev/null || fail "no zombie to test with"
}
make_zombie root
root_zombie=$zombie root_zparent=$zparent

init_comm=$(cat /proc/1/comm)
out_init=$(record_as periscope-user "{'pids': <[1]>}")
out_gone=$(record_as periscope-user "{'pids': <[$gone]>}")
out_zombie=$(record_as periscope-user "{'pids': <[$root_zombie]>}")
echo "pid 1:       $out_init"
echo "no such pid: $out_gone"
echo "root zombie: $out_zombie"
echo "$out_init" | grep >/dev/null "org.periscope.Error.NotAuthorized" ||
        fail "periscope-user's Record of pid 1 was not refused with NotAuthorized: $out_init"
echo "$out_init" | grep >/dev/null "polkit denied action org.periscope.profile-system" ||
        fail "the refusal does not name polkit's action: $out_init"
same() { # OUT PID: the output with the pid's own number made N
        echo "$1" | sed -E "s/process $2\b/process N/g"
}
[ "$(same "$out_init" 1)" = "$(same "$out_gone" $gone)" ] ||
        fail "pid 1 and a pid that does not exist get different answers:
  $(same "$out_init" 1)
  $(same "$out_gone" $gone)"
[ "$(same "$out_zombie" $root_zombie)" = "$(same "$out_gone" $gone)" ] ||
        fail "root's zombie and a pid that does not exist get different answers:
  $(same "$out_zombie" $root_zombie)
  $(same "$out_gone" $gone)"
for word in "$init_comm" "(sleep)" "zombie" "parent" "pid $root_zparent" "uid 0"; do
        ! echo "$out_init$out_zombie" | grep >/dev/null -F -- "$word" ||
                fail "the refusal tells periscope-user '$word': $out_init / $out_zombie"
done
echo "ok: pid 1, a free pid and root's zombie read alike to periscope-user, no command, no parent"

# Who may record them is told which is which.
for u in root periscope-admin; do
        out=$(record_as $u "{'pids': <[$gone]>}")
        echo "$out" | grep >/dev/null "org.periscope.Error.NoSuchProcess.*process $gone does not exist" ||
                fail "$u is not told that pid $gone does not exist: $out"
        out=$(record_as $u "{'pids': <[$root_zombie]>}")
        echo "$out" | grep >/dev/null "NoSuchProcess.*process $root_zombie (sleep) is a zombie.*parent (pid $root_zparent)" ||
                fail "$u is not told that pid $root_zombie is a zombie: $out"
done
echo "ok: root and periscope-admin (polkit) are told which pid does not exist and which is a zombie"

# The energy counters (RAPL): root's and polkit's only.
TEST_USER=periscope-user exec_as_user sleep 60 & own=$!
private_bus_track $own
sleep 0.2
out=$(record_as periscope-user "{'pids': <[$own]>, 'counters': <['cpu', 'energy']>, 'duration-ms': <uint32 300>}")
echo "periscope-user, energy: $out"
echo "$out" | grep >/dev/null "org.periscope.Error.NotAuthorized.*'energy'.*polkit denied action org.periscope.profile-system" ||
        fail "periscope-user's energy counters were not refused naming the action: $out"
out=$(record_as periscope-user "{'pids': <[$own]>, 'counters': <['cpu']>, 'duration-ms': <uint32 300>}")
echo "$out" | grep >/dev/null "/org/periscope/Recording/" || fail "periscope-user's cpu counters were refused: $out"
echo "ok: periscope-user gets the cpu counters, not the energy ones"

rapl=0
for f in /sys/class/powercap/*/energy_uj; do if [ -e "$f" ]; then rapl=1; fi; done
: "${PERISCOPE:?}"
for u in periscope-user root periscope-admin; do
        pre=()
        [ $u = root ] || pre=(setpriv --reuid=$u --regid=$u --init-groups)
        rm -f "$dir/energy.syscap"
        st=0
        "${pre[@]}" "$PERISCOPE" record --address "$BUS_ADDRESS" --counters energy -o "$dir/energy.syscap" \
                -- sleep 0.3 >"$dir/energy.out" 2>&1 || st=$?
        if [ $u = periscope-user ]; then
                [ $st != 0 ] || fail "periscope record --counters energy worked for $u"
                grep >/dev/null "'energy'.*polkit denied action org.periscope.profile-system" "$dir/energy.out" ||
                        fail "$u is not told which action the energy counters need: $(cat "$dir/energy.out")"
                echo "ok: $u: $(cat "$dir/energy.out")"
                continue
        fi
        [ $st = 0 ] || fail "$u could not record the energy counters: $(cat "$dir/energy.out")"
        "$PERISCOPE" dump --json "$dir/energy.syscap" >"$dir/energy.json"
        if [ $rapl = 1 ]; then
                grep >/dev/null '"Energy"' "$dir/energy.json" || fail "$u's capture has no Energy counters on a machine with RAPL"
                echo "ok: $u records the energy counters (RAPL present)"
        else
                grep >/dev/null "counter source 'energy' left out: this machine has no power per RAPL" "$dir/energy.json" ||
                        fail "$u's capture does not say that this machine has no RAPL: $(grep -i energy "$dir/energy.json")"
                echo "ok: $u's energy counters accepted; this machine has no RAPL (/sys/class/powercap), and the capture says so"
        fi
done
