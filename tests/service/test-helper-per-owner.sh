#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 27: a helper per owner. While root and periscope-user record at the
# same time (DWARF unwinding: the daemon's unwind tables compile through
# helpers), each has helpers started for its own uid (periscoped's debug
# line "uid UID: periscope-helper pid PID started"), never one pid for both; killing
# every helper of root's leaves periscope-user's recording named in full.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${DEMO:?}"
[ "$(id -u)" = 0 ] || fail "runs as root (./test.sh does): two users record"
test_user_require periscope-user
export PERISCOPE_DEBUG=1
periscoped_start_for_user periscope-user 0755
log=$TEST_TMP/periscoped.log
# a copy each (other inodes): each owner's unwind tables are compiled for it
cp "$DEMO" "$TEST_TMP/demo"
cp "$DEMO" "$dir/demo"
chmod 0755 "$TEST_TMP/demo" "$dir/demo"

"$PERISCOPE" record --address "$BUS_ADDRESS" --unwind dwarf -o "$TEST_TMP/root.syscap" -- "$TEST_TMP/demo" -t 4000 \
        >"$TEST_TMP/root.out" 2>&1 &
root_rec=$!
as_user "$PERISCOPE" record --address "$BUS_ADDRESS" --unwind dwarf -o "$dir/user.syscap" -- "$dir/demo" -t 4000 \
        >"$TEST_TMP/user.out" 2>&1 &
user_rec=$!

started() { grep -E "^periscoped: uid $1: periscope-helper pid [0-9]+ started$" "$log" | sed -E 's/.*helper pid ([0-9]+) started/\1/'; }
both_started() { [ -n "$(started 0)" ] && [ -n "$(started "$uid")" ]; }
wait_for 20 both_started || { cat "$log"; fail "no helper was started for each of uid 0 and uid $uid while both recorded"; }
# while both still record (before any symbolize stage): the unwind tables' helpers
if grep -E "recording [0-9]+: (symbolized|finished)" "$log"; then
        fail "uid 0 and uid $uid had helpers of their own only once a recording was stopping"
fi
common=$(comm -12 <(started 0 | sort) <(started "$uid" | sort))
[ -z "$common" ] || fail "helper pid(s) $common started for both uid 0 and uid $uid"
echo "ok: root's helpers ($(started 0 | tr '\n' ' ')) and uid $uid's ($(started "$uid" | tr '\n' ' ')) are apart"

# root's helpers killed while both record: uid $uid's names do not suffer
killed=0
for pid in $(started 0); do
        kill -KILL "$pid" 2>/dev/null && killed=$((killed + 1)) || true
done
[ "$killed" -gt 0 ] || fail "no helper of root's ran while both recorded"
echo "killed $killed of root's helpers"
wait "$user_rec" || { cat "$TEST_TMP/user.out"; fail "periscope-user's recording failed after root's helpers were killed"; }
wait "$root_rec" || true
"$PERISCOPE" report --no-progress "$dir/user.syscap" >"$TEST_TMP/user.txt" 2>&1 || { cat "$TEST_TMP/user.txt"; fail "report failed"; }
grep -q "helper failed" "$TEST_TMP/user.txt" && { cat "$TEST_TMP/user.txt"; fail "periscope-user's capture has files the helper failed on"; }
grep -q "inner_c" "$TEST_TMP/user.txt" || { head -30 "$TEST_TMP/user.txt"; fail "periscope-user's capture does not name the demo's functions"; }
echo "ok: killing root's helpers left periscope-user's names whole"

# once each owner has no recording left, its helpers are gone
gone() {
        local pid
        for pid in $(started 0) $(started "$uid"); do
                kill -0 "$pid" 2>/dev/null && return 1
        done
        return 0
}
t0=$SECONDS
wait_for 20 gone || { ps -o pid,ppid,user,args -p "$(started 0 | tr '\n' ',')$(started "$uid" | tr '\n' ',')0" || true; fail "helpers are still running after both recordings ended"; }
echo "ok: every helper stopped once its owner's recordings ended (after $((SECONDS - t0)) s)"
