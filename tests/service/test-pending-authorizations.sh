#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Calls waiting for polkit count against a per-user limit (docs/security.md):
# periscope-user (no polkit rule names it) registers its own authentication
# agent, which never answers, and fires 100 Record calls of the whole
# system, each of which periscoped keeps (message, capture fd, a polkit
# request) until polkit answers. 16 (the default) wait; the other 84 are
# refused at once with org.periscope.Error.LimitExceeded naming the limit
# and the option that raises it. Meanwhile root's property reads answer
# quickly and root records. Once the user's client is killed its waiting
# calls give their places back: 16 new ones wait again, none refused. With
# the agent in another process, as a desktop's (it keeps the question open
# when the client is killed), periscoped cancels the questions of a caller
# that left the bus, and their places come back too.
# Needs PERISCOPED, PERISCOPE, WAITER (polkit-waiter).
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${WAITER:?}"
test_user_require periscope-user
[ -f /usr/share/polkit-1/actions/org.periscope.policy ] ||
        fail "polkit action org.periscope.profile-system not installed: run scripts/setup.d/30-periscope-users.sh"
if grep -rqs "\"$user\"" /etc/polkit-1/rules.d/ /usr/share/polkit-1/rules.d/; then
        fail "a polkit rule names $user: this test needs a user that polkit would have to ask"
fi
periscoped_start_for_user $user 777

# waiter_start N [AGENT]: the user's client, in the background (its stdin a
# FIFO kept open here, so it holds its calls until killed); sets waiter and
# the counts it printed.
waiter_start() {
        local n=$1 fifo=$dir/stdin.$1.$RANDOM
        mkfifo "$fifo"
        exec 3<>"$fifo"
        rm -f "$dir/waiter.out" # not the last one's counts: the new one is made by the child
        setpriv --reuid=$user --regid=$user --clear-groups env DBUS_SYSTEM_BUS_ADDRESS="$BUS_ADDRESS" \
                "$WAITER" record "$n" "$dir" 4 ${2:-} <"$fifo" >"$dir/waiter.out" 2>&1 &
        waiter=$!
        private_bus_track $waiter
        private_bus_wait_output "$dir/waiter.out" "^answered" $waiter 30 || fail "polkit-waiter printed no counts"
        cat "$dir/waiter.out"
        read -r _ answered _ limit _ other _ pending _ asked < <(grep "^answered" "$dir/waiter.out") ||
                fail "polkit-waiter printed no counts"
}

# 1. 100 calls: 16 wait for polkit, 84 refused with the named limit.
waiter_start 100
[ "$asked" -ge 1 ] || fail "polkit never asked the user's agent: the calls did not wait for polkit"
[ "$pending" = 16 ] || fail "$pending of the user's calls wait for polkit (16 expected, the default limit)"
[ "$limit" = 84 ] && [ "$other" = 0 ] || fail "$limit refused with LimitExceeded (84 expected), $other other errors"
grep -q "^refusal: recording the whole system needs polkit's answer: per-user limit reached: uid $uid holds 16 calls waiting for polkit; the limit is 16 calls waiting for polkit per user (periscoped --max-pending-authorizations-per-user); wait for polkit's answer" "$dir/waiter.out" ||
        fail "the refusal does not name the limit, its value and its option"
echo "ok: 16 calls wait for polkit, the other 84 refused with LimitExceeded naming the limit"

# 2. root is served meanwhile.
start=$(date +%s%N)
busctl --address="$BUS_ADDRESS" get-property org.periscope.Profiler1 /org/periscope/Profiler1 \
        org.periscope.Profiler1 Version >/dev/null || fail "root's property read failed"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $ms -lt 1000 ] || fail "root's property read took $ms ms while $user's calls wait"
sleep 30 & root_proc=$!
private_bus_track $root_proc
"$PERISCOPE" record --address "$BUS_ADDRESS" -p $root_proc --duration 0.5 -o "$TEST_TMP/root.syscap" \
        2>"$TEST_TMP/root.err" || { cat "$TEST_TMP/root.err"; fail "root could not record while $user's calls wait"; }
echo "ok: root's property read took $ms ms and root recorded while $user's calls wait"

# 3. The client is killed: its waiting calls give their places back.
kill -9 $waiter; wait $waiter 2>/dev/null || true
exec 3>&-
for i in $(seq 5); do
        waiter_start 16
        kill -9 $waiter; wait $waiter 2>/dev/null || true
        exec 3>&-
        [ "$pending" = 16 ] && [ "$limit" = 0 ] && break
        [ $i -lt 5 ] || fail "after the client was killed, $limit of 16 new calls were refused"
        sleep 1
done
echo "ok: after the client was killed, 16 new calls wait again"

# 4. The agent apart: killing the client leaves the agent and its
# questions; periscoped cancels them (CancelCheckAuthorization).
waiter_start 16 apart
agent=$(sed -n 's/^agent: //p' "$dir/waiter.out")
[ -n "$agent" ] && private_bus_track $agent
[ "$pending" = 16 ] && [ "$limit" = 0 ] || fail "with the agent apart, $pending calls wait (16 expected), $limit refused"
kill -9 $waiter; wait $waiter 2>/dev/null || true
exec 3>&-
for i in $(seq 5); do
        # a new client without an agent: polkit says no at once, unless the limit refuses first
        setpriv --reuid=$user --regid=$user --clear-groups env DBUS_SYSTEM_BUS_ADDRESS="$BUS_ADDRESS" \
                "$WAITER" record 16 "$dir" 2 none </dev/null >"$dir/after.out" 2>&1 || { cat "$dir/after.out"; fail "polkit-waiter failed"; }
        read -r _ answered _ limit _ other _ pending _ asked < <(grep "^answered" "$dir/after.out") || fail "no counts"
        [ "$limit" = 0 ] && break
        [ $i -lt 5 ] || { cat "$dir/after.out"; fail "the calls of a killed client whose agent stays kept their places: $limit of 16 new calls refused"; }
        sleep 1
done
cat "$dir/after.out"
grep -q "cancelling periscoped-" "$TEST_TMP/periscoped.log" || fail "periscoped did not log cancelling the questions"
echo "ok: a killed client's questions cancelled while its agent stays; 16 new calls get polkit's own answer"
