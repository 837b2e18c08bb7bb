#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# service-sysprof3-limits: the sysprofd drop-in under the per-user limits
# (docs/security.md). A live Unwind session makes the root daemon map 4 MiB
# rings per CPU and unwind for its client, so for a non-root user it counts
# as a recording and its rings as locked memory:
# 1. with --max-recordings-per-user=2, periscope-user's third session is
#    refused with org.periscope.Error.LimitExceeded naming the limit and its
#    option, and the first two go on sampling its program; root is not
#    limited; once the sessions ended, new ones start;
# 2. a client killed with its sessions open (on an idle process, so no
#    write to the capture pipe would notice) gives them back: the daemon
#    sees it leave the bus;
# 3. with --max-locked-memory-per-user room for one session's rings, the
#    second is refused for its ring memory;
# 4. PerfEventOpen calls of the whole system waiting for polkit (the user's
#    own agent never answers) stop at --max-pending-authorizations-per-user.
. "$(dirname "$0")/lib.sh"
: "${DEEP:?}" "${WAITER:?}"
user=periscope-user
id -u $user >/dev/null 2>&1 || fail "user $user is missing: run scripts/setup.d/30-periscope-users.sh as root"
uid=$(id -u $user)
if grep -rqs "\"$user\"" /etc/polkit-1/rules.d/ /usr/share/polkit-1/rules.d/; then
        fail "a polkit rule names $user: this test needs a user that polkit would have to ask"
fi
sysprof3_start --max-recordings-per-user=2
# as_user COMMAND...: COMMAND as the user (exec'ed, so that $! of a
# background one is COMMAND's pid).
as_user=(setpriv --reuid=$user --regid=$user --clear-groups env DBUS_SYSTEM_BUS_ADDRESS="$DBUS_SYSTEM_BUS_ADDRESS")
as_user() { "${as_user[@]}" "$@"; }
# user_proc_wait PID NAME: until PID is NAME running as the user.
user_proc_wait() {
        for _ in $(seq 100); do
                [ "$(stat -c %u /proc/$1 2>/dev/null)" = "$uid" ] && [ "$(cat /proc/$1/comm 2>/dev/null)" = "$2" ] && return 0
                sleep 0.05
        done
        fail "$2 (pid $1) did not start as $user"
}
"${as_user[@]}" sleep 600 & idle=$!
private_bus_track $idle
user_proc_wait $idle sleep

# 1. Two sessions, the third refused; the first two keep sampling.
"${as_user[@]}" "$DEEP" 30000 & work=$! # killed after this part
private_bus_track $work
user_proc_wait $work "$(basename "$DEEP" | cut -c1-15)"
as_user "$SYSPROF3_CLIENT" sessions $work 3 2 >"$OUT/three.out" 2>&1 || { cat "$OUT/three.out"; fail "the sessions client failed"; }
cat "$OUT/three.out"
grep -q "^session 1: started" "$OUT/three.out" && grep -q "^session 2: started" "$OUT/three.out" ||
        fail "$user's first two sessions did not start"
grep -q "^session 3: refused: GDBus.Error:org.periscope.Error.LimitExceeded: no unwind session: per-user limit reached: uid $uid holds 2 recordings; the limit is 2 recordings per user (periscoped --max-recordings-per-user)" "$OUT/three.out" ||
        fail "the third session was not refused with LimitExceeded naming the limit and its option"
for i in 1 2; do
        samples=$(sed -n "s/^session $i: [0-9]* bytes, \([0-9]*\) samples/\1/p" "$OUT/three.out")
        [ "${samples:-0}" -ge 5 ] || fail "session $i wrote ${samples:-no} samples of $user's program after the refusal"
done
echo "ok: $user's third session refused with the named limit; the first two sampled its program"
kill $work; wait $work 2>/dev/null
"$SYSPROF3_CLIENT" sessions $idle 3 0 >"$OUT/root.out" 2>&1 || { cat "$OUT/root.out"; fail "root's sessions client failed"; }
[ "$(grep -c ': started' "$OUT/root.out")" = 3 ] || { cat "$OUT/root.out"; fail "root's sessions were limited"; }
as_user "$SYSPROF3_CLIENT" sessions $idle 2 0 >"$OUT/again.out" 2>&1 || { cat "$OUT/again.out"; fail "the sessions client failed"; }
[ "$(grep -c ': started' "$OUT/again.out")" = 2 ] || { cat "$OUT/again.out"; fail "after its sessions ended, $user could not start two new ones"; }
echo "ok: root's three sessions not limited; $user's ended sessions gave their places back"

# 2. A client killed with two sessions open.
"${as_user[@]}" "$SYSPROF3_CLIENT" sessions $idle 2 600 >"$OUT/held.out" 2>&1 & holder=$!
private_bus_track $holder
private_bus_wait_output "$OUT/held.out" "^session 2: started" $holder 30 || fail "the holding client's sessions did not start"
as_user "$SYSPROF3_CLIENT" sessions $idle 1 0 >"$OUT/while-held.out" 2>&1
grep -q "refused: .*LimitExceeded" "$OUT/while-held.out" || { cat "$OUT/while-held.out"; fail "sessions held by a live client did not count"; }
kill -9 $holder; wait $holder 2>/dev/null
ok=
for _ in $(seq 20); do
        as_user "$SYSPROF3_CLIENT" sessions $idle 2 0 >"$OUT/after-kill.out" 2>&1
        [ "$(grep -c ': started' "$OUT/after-kill.out")" = 2 ] && { ok=1; break; }
        sleep 0.25
done
[ -n "$ok" ] || { cat "$OUT/after-kill.out"; fail "the sessions of a killed client were not given back"; }
grep -q "unwind session of uid $uid ended: its client left the bus" "$PRIVATE_BUS_DIR/periscoped.log" ||
        fail "periscoped did not log that the client left"
echo "ok: the sessions of a killed client ended and gave their places back"

# 3. Ring memory: room for one session's rings (4 MiB and a page per CPU), not two.
ring_kib=$(( $(nproc --all) * (4096 + 4) ))
limit_mib=$(( ring_kib * 3 / 2 / 1024 + 1 ))
sysprof3_restart --max-recordings-per-user=0 --max-locked-memory-per-user=$limit_mib
as_user "$SYSPROF3_CLIENT" sessions $idle 2 0 >"$OUT/memory.out" 2>&1 || { cat "$OUT/memory.out"; fail "the sessions client failed"; }
cat "$OUT/memory.out"
grep -q "^session 1: started" "$OUT/memory.out" || fail "one session refused under a $limit_mib MiB limit"
grep -q "^session 2: refused: GDBus.Error:org.periscope.Error.LimitExceeded: no unwind session: per-user limit reached: uid $uid holds [0-9.]* MiB of perf ring memory (this needs [0-9.]* MiB more); the limit is ${limit_mib}.0 MiB of perf ring memory per user (periscoped --max-locked-memory-per-user)" "$OUT/memory.out" ||
        fail "the second session was not refused for its ring memory"
echo "ok: ring memory limit: a second session refused"

# 4. Calls waiting for polkit: 4 wait, the other 36 refused.
sysprof3_restart --max-pending-authorizations-per-user=4
as_user "$WAITER" sysprof3 40 "$OUT" 4 >"$OUT/waiter.out" 2>&1 </dev/null || { cat "$OUT/waiter.out"; fail "polkit-waiter failed"; }
cat "$OUT/waiter.out"
read -r _ answered _ limit _ other _ pending _ asked < <(grep "^answered" "$OUT/waiter.out") || fail "polkit-waiter printed no counts"
[ "$asked" -ge 1 ] || fail "polkit never asked the user's agent: the calls did not wait for polkit"
[ "$pending" = 4 ] && [ "$limit" = 36 ] && [ "$other" = 0 ] ||
        fail "$pending calls wait for polkit (4 expected), $limit refused with LimitExceeded (36 expected), $other other errors"
grep -q "^refusal: recording the whole system needs polkit's answer: per-user limit reached: uid $uid holds 4 calls waiting for polkit; the limit is 4 calls waiting for polkit per user (periscoped --max-pending-authorizations-per-user)" "$OUT/waiter.out" ||
        fail "the refusal does not name the limit and its option"
busctl --system call org.gnome.Sysprof3 /org/gnome/Sysprof3 org.gnome.Sysprof3.Service SetParanoid i 2 >/dev/null ||
        fail "the service does not answer root"
echo "ok: PerfEventOpen calls waiting for polkit stop at 4; the rest refused with the named limit"
sysprof3_check_log
