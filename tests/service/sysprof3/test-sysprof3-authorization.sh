#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# service-sysprof3-authorization: periscoped --sysprofd applies Periscope's
# authorization, not sysprofd's "administrator for everything": a user opens
# perf events on and reads /proc files of their own process without any
# password; another user's process is refused with a clear message (polkit,
# with no agent to ask, says no); /proc/PID/root/... is refused even to
# root; ListProcesses shows a user only their own processes; a user's
# Unwind session over events on their own program unwinds it to whole
# stacks, with nothing of other processes and no kernel addresses.
. "$(dirname "$0")/lib.sh"
id -u periscope-user >/dev/null 2>&1 || fail "user periscope-user is missing: run scripts/setup.d/30-periscope-users.sh as root"
sysprof3_start

sleep 60 & root_pid=$!
private_bus_track $root_pid
runuser -u periscope-user -- sleep 60 & runuser_pid=$!
private_bus_track $runuser_pid
user_pid=
for _ in $(seq 50); do
        user_pid=$(pgrep -P "$runuser_pid" -u periscope-user -x sleep | head -1)
        [ -n "$user_pid" ] && break
        sleep 0.1
done
[ -n "$user_pid" ] || fail "periscope-user's sleep did not start"

as_user "$SYSPROF3_CLIENT" perf-open "$user_pid" >"$OUT/own.out" 2>&1 ||
        { cat "$OUT/own.out"; fail "periscope-user could not open a perf event on its own process"; }
cat "$OUT/own.out"
as_user "$SYSPROF3_CLIENT" proc-file "/proc/$user_pid/maps" >"$OUT/own-maps.out" 2>&1 ||
        { cat "$OUT/own-maps.out"; fail "periscope-user could not read its own process's maps"; }
grep -q "sleep" "$OUT/own-maps.out" || { cat "$OUT/own-maps.out"; fail "the maps served are not sleep's"; }
echo "ok: periscope-user opened a perf event on and read the maps of its own process, no password"

if as_user "$SYSPROF3_CLIENT" perf-open "$root_pid" >"$OUT/foreign.out" 2>&1; then
        cat "$OUT/foreign.out"; fail "periscope-user opened a perf event on root's process"
fi
cat "$OUT/foreign.out"
grep -q "process $root_pid (not yours" "$OUT/foreign.out" && grep -q "polkit denied action org.periscope.profile-system" "$OUT/foreign.out" ||
        fail "the refusal does not say whose process it is and that polkit denied it"
if as_user "$SYSPROF3_CLIENT" proc-file "/proc/$root_pid/maps" >"$OUT/foreign-maps.out" 2>&1; then
        cat "$OUT/foreign-maps.out"; fail "periscope-user read root's process's maps"
fi
cat "$OUT/foreign-maps.out"
grep -q "polkit denied" "$OUT/foreign-maps.out" || fail "no clear refusal of root's maps"
echo "ok: periscope-user refused root's process, with the reason"
# The RAPL profiler: root-only readings, authorized as Record's counters=["energy"].
if out=$(as_user gdbus call --system --dest org.gnome.Sysprof3 --object-path /org/gnome/Sysprof3/RAPL \
        --method org.gnome.Sysprof3.Profiler.Start "{}" 3 3>"$OUT/rapl.syscap" 2>&1); then
        fail "periscope-user started the RAPL profiler: $out"
fi
echo "$out"
grep >/dev/null "reading the 'energy' counters.*polkit denied action org.periscope.profile-system" <<<"$out" ||
        fail "the RAPL profiler's refusal does not name the energy counters and the action"
echo "ok: periscope-user refused the RAPL profiler, naming the action"

for who in user root; do
        if [ $who = user ]; then
                as_user "$SYSPROF3_CLIENT" proc-file "/proc/$user_pid/root/etc/passwd" >"$OUT/root-$who.out" 2>&1 && st=0 || st=$?
        else
                "$SYSPROF3_CLIENT" proc-file "/proc/$root_pid/root/etc/passwd" >"$OUT/root-$who.out" 2>&1 && st=0 || st=$?
        fi
        cat "$OUT/root-$who.out"
        [ $st != 0 ] || fail "GetProcFile of /proc/PID/root/etc/passwd served a file ($who)"
        grep -q "never root/" "$OUT/root-$who.out" || fail "the refusal of /proc/PID/root/... does not say why ($who)"
done
"$SYSPROF3_CLIENT" proc-file "/proc/$root_pid/task/$root_pid/../../1/environ" >"$OUT/dots.out" 2>&1 &&
        { cat "$OUT/dots.out"; fail "a path with .. was served"; }
cat "$OUT/dots.out"
echo "ok: /proc/PID/root/... and '..' refused, to root too"

as_user busctl --system call org.gnome.Sysprof3 /org/gnome/Sysprof3 org.gnome.Sysprof3.Service ListProcesses \
        >"$OUT/list.out" 2>&1 || { cat "$OUT/list.out"; fail "ListProcesses failed for periscope-user"; }
tr ' ' '\n' <"$OUT/list.out" | grep >/dev/null -x "$user_pid" || fail "ListProcesses does not list periscope-user's own process"
! tr ' ' '\n' <"$OUT/list.out" | grep >/dev/null -x "$root_pid" || fail "ListProcesses lists root's process to periscope-user"
! tr ' ' '\n' <"$OUT/list.out" | grep >/dev/null -x "1" || fail "ListProcesses lists pid 1 to periscope-user"
echo "ok: ListProcesses shows periscope-user only its own processes"

# Malformed arguments are refused with what is wrong, and the service
# stays. gdbus sends a handle as an fd (here stdin, /dev/null).
bad() { # EXPECTED-MESSAGE OBJECT INTERFACE.METHOD ARGS...
        local want=$1 path=$2 method=$3 out
        shift 3
        if out=$(gdbus call --system --dest org.gnome.Sysprof3 --object-path "$path" --method "$method" -- "$@" \
                 </dev/null 2>&1); then
                fail "accepted: $method $* -> $out"
        fi
        echo "refused: $out"
        grep -q -- "$want" <<<"$out" || fail "the refusal of $method $* does not say '$want'"
}
S=org.gnome.Sysprof3.Service
opts="{'type': <uint32 1>, 'config': <uint64 0>, 'sample_period': <uint64 1000000>}"
bad "unknown perf_event_attr option 'bogus'" /org/gnome/Sysprof3 $S.PerfEventOpen "{'bogus': <true>}" "$user_pid" -1 0 0
bad "option 'type' must have D-Bus type 'u', not 't'" /org/gnome/Sysprof3 $S.PerfEventOpen "{'type': <uint64 1>}" "$user_pid" -1 0 0
bad "group_fd is not served" /org/gnome/Sysprof3 $S.PerfEventOpen "$opts" "$user_pid" -1 0 0
bad "sample_period 100 is below" /org/gnome/Sysprof3 $S.PerfEventOpen "{'sample_period': <uint64 100>}" "$user_pid" -1 0 0
bad "unknown process attribute 'environ'" /org/gnome/Sysprof3 $S.GetProcessInfo pid,environ
bad "out of range" /org/gnome/Sysprof3 $S.SetParanoid 7
bad "not a governor name" /org/gnome/Sysprof3 $S.SetGovernor "../../x"
bad "stack_size must be" /org/gnome/Sysprof3/Unwinder org.gnome.Sysprof3.Unwinder.Unwind 0 "@a(hi) []" 0 0
bad "no perf fds" /org/gnome/Sysprof3/Unwinder org.gnome.Sysprof3.Unwinder.Unwind 8192 "@a(hi) []" 0 0
bad "is not a perf event" /org/gnome/Sysprof3/Unwinder org.gnome.Sysprof3.Unwinder.Unwind 8192 "[(0, 0)]" 0 0
bad "unknown option 'x'" /org/gnome/Sysprof3/RAPL org.gnome.Sysprof3.Profiler.Start "{'x': <true>}" 0
busctl --system call org.gnome.Sysprof3 /org/gnome/Sysprof3 $S SetParanoid i 2 >/dev/null ||
        fail "the service did not survive the malformed calls"
echo "ok: malformed arguments refused with the reason"

: "${DEEP:?}"
as_user "$SYSPROF3_CLIENT" unwind --own --min-full 90 leaf_work,chain_d,chain_c,chain_b,chain_a,main -- "$DEEP" 800 \
        >"$OUT/own-unwind.out" 2>&1 || { cat "$OUT/own-unwind.out"; fail "periscope-user's unwind session on its own program failed"; }
cat "$OUT/own-unwind.out"
echo "ok: periscope-user unwound its own program through org.gnome.Sysprof3.Unwinder, no password"
sysprof3_check_log
